import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose'
import type { Config } from '../config.js'
import { type Message, message, render } from '../domain/messages.js'
import { READ_ROLE, rolesOf, userNameOf, WRITE_ROLE } from '../domain/token-claims.js'
import { queryFlag } from './input-conversion.js'
import { forbidden, type ProblemError, serviceUnavailable, unauthorized } from './problem.js'

/*
 * Bearer-token authentication (`AUTH_MODE=jwt`). Every `/api` request needs a valid token: signed with the shared
 * HS256 secret, or by a key of the OIDC provider's JWKS; unexpired; from `AUTH_ISSUER` and for `AUTH_AUDIENCE`
 * when those are set; issued no longer ago than `AUTH_MAX_TOKEN_AGE`, for no longer than that, and not in the
 * future. Routes that write a price list or nomenclature (`config.writesCatalog`) also need the role
 * `prices:write`, except the dry run of those that preview with one (`config.previewsWithDryRun`); with
 * `AUTH_PRICES_READ=on`, the glass price list's reads (`config.readsPurchasePrices`: purchase prices, the history
 * and its users) need `prices:read` (or `prices:write`). Roles are read strictly: exact
 * strings of a `roles` or `realm_access.roles` array, or words of the space-separated `scope`. Health probes and
 * the API documentation stay open; `/actuator/info` and the metrics (`/actuator/prometheus`, `/actuator/metrics`)
 * too unless `ACTUATOR_AUTH=true`. `/actuator/loggers`, which changes the service's log levels, always needs a
 * token with the role that changes things, `prices:write`.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route shows purchase prices or the change history: with `AUTH_PRICES_READ=on` it needs `prices:read`. */
    readsPurchasePrices?: boolean
    /**
     * A write route that `?dryRun=true` turns into a preview writing nothing (the bulk change, the upload): the
     * preview needs no `prices:write`, only what a read of purchase prices needs, so a reader can see what a
     * change would do.
     */
    previewsWithDryRun?: boolean
  }
}

export { READ_ROLE, WRITE_ROLE }

const REALM = 'optics-catalog'

/** Clock skew tolerated between the token's issuer and this service. */
const CLOCK_TOLERANCE_SECONDS = 30

const asymmetricAlgorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

export interface Principal {
  readonly name: string
  readonly roles: readonly string[]
}

/** The actuator's paths that tell about the service rather than probe it: behind a token with `ACTUATOR_AUTH`. */
const actuatorDetails = new Set([
  '/actuator/info',
  '/actuator/prometheus',
  '/actuator/metrics',
  '/actuator/metrics/:name',
])

/** The actuator's paths that change the service: always behind a token with {@link WRITE_ROLE}. */
const administration = new Set(['/actuator/loggers', '/actuator/loggers/:name'])

/** A route pattern as fastify writes it (`/a/:name`), from OpenAPI's form (`/a/{name}`) too. */
const routePattern = (path: string): string => path.replace(/\{(\w+)\}/g, ':$1')

/**
 * Whether the route `path` (its pattern, in fastify's or OpenAPI's form) needs a Bearer token with authentication
 * on: the API, the actuator's administration, and with `ACTUATOR_AUTH` its information and metrics. Probes and
 * the documentation are open.
 */
export function needsToken(path: string, actuatorAuth: boolean): boolean {
  const pattern = routePattern(path)
  if (administration.has(pattern)) return true
  if (actuatorAuth && actuatorDetails.has(pattern)) return true
  return pattern === '/api' || pattern.startsWith('/api/') || pattern.startsWith('/api?')
}

function insufficientScope(
  role: string,
  what: 'auth.writeRole' | 'auth.readRole' | 'auth.adminRole',
  name: string,
): ProblemError {
  return forbidden(message(what, { role, name }), {
    'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${role}"`,
  })
}

/** Registers the authentication hook; with `AUTH_MODE=none` there is none and `request.principal` stays unset. */
export function registerAuthentication(app: FastifyInstance): void {
  if (app.config.auth.mode !== 'jwt') return
  const { auth } = app.config
  const verify = tokenVerifier(auth)
  app.addHook('onRequest', async (request) => {
    // A CORS preflight carries no credentials; CORS answers it before this hook (or it is a 404/405).
    // The route's own pattern decides, so a percent-encoded path (`/%61pi/…`) cannot route around the check.
    const path = request.routeOptions.url ?? request.url
    if (request.method === 'OPTIONS' || !needsToken(path, auth.actuatorAuth)) return
    const token = bearerToken(request)
    if (token === undefined) {
      throw unauthorized(message('auth.tokenRequired'), `Bearer realm="${REALM}"`)
    }
    const principal = await verify(token)
    request.principal = principal
    if (administration.has(path) && !principal.roles.includes(WRITE_ROLE)) {
      throw insufficientScope(WRITE_ROLE, 'auth.adminRole', principal.name)
    }
    const route = request.routeOptions.config
    const preview = route?.previewsWithDryRun === true && queryFlag(request.query, 'dryRun')
    if (route?.writesCatalog && !preview && !principal.roles.includes(WRITE_ROLE)) {
      throw insufficientScope(WRITE_ROLE, 'auth.writeRole', principal.name)
    }
    if (
      auth.pricesRead === 'on' &&
      (route?.readsPurchasePrices || preview) &&
      !principal.roles.includes(READ_ROLE) &&
      !principal.roles.includes(WRITE_ROLE)
    ) {
      throw insufficientScope(READ_ROLE, 'auth.readRole', principal.name)
    }
  })
}

/** The token of `Authorization: Bearer <token>`; undefined without one (or with another scheme). */
function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header)
  return match?.[1]
}

/**
 * Builds the verification of one configuration: the key (HS256 secret or remote JWKS, fetched on first use and
 * cached by `jose`, refetched for an unknown key id) and the claims every token must satisfy.
 * Returns the principal, or throws a 401 (bad token) or 503 (the provider's keys cannot be fetched).
 */
export function tokenVerifier(auth: Config['auth']): (token: string) => Promise<Principal> {
  const remote = auth.jwksUrl !== undefined
  const key: Uint8Array | JWTVerifyGetKey = remote
    ? createRemoteJWKSet(new URL(auth.jwksUrl!))
    : new TextEncoder().encode(auth.jwtSecret ?? '')
  const maxAge = auth.maxTokenAgeSeconds
  const options = {
    algorithms: remote ? asymmetricAlgorithms : ['HS256'],
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    requiredClaims: ['exp'],
    // jose then also requires `iat`, refuses it further in the past than this, and in the future.
    ...(maxAge > 0 ? { maxTokenAge: maxAge } : {}),
    ...(auth.issuer ? { issuer: auth.issuer } : {}),
    ...(auth.audience ? { audience: auth.audience } : {}),
  }
  return async (token) => {
    let payload: JWTPayload
    try {
      payload = (await jwtVerify(token, key, options)).payload
    } catch (error) {
      throw verificationProblem(error, remote)
    }
    const now = Math.floor(Date.now() / 1000)
    if (typeof payload.iat === 'number' && payload.iat > now + CLOCK_TOLERANCE_SECONDS) {
      throw invalidToken(message('auth.issuedInFuture'))
    }
    // A token that stays valid for years is as good as one without an expiry: its lifetime is bounded too.
    if (maxAge > 0 && (payload.exp as number) - (payload.iat as number) > maxAge + CLOCK_TOLERANCE_SECONDS) {
      throw invalidToken(message('auth.livesTooLong'))
    }
    const name = userNameOf(payload)
    if (name === undefined) throw invalidToken(message('auth.noUser'))
    return { name, roles: rolesOf(payload) }
  }
}

/** A 401 whose challenge describes the error in English (a header speaks no client's language). */
function invalidToken(description: Message): ProblemError {
  const english = render(description)
  return unauthorized(description, `Bearer realm="${REALM}", error="invalid_token", error_description="${english}"`)
}

function verificationProblem(error: unknown, remote: boolean): ProblemError {
  if (error instanceof errors.JWTExpired) {
    return invalidToken(message(error.claim === 'iat' ? 'auth.tooOld' : 'auth.expired'))
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    const claim = error.claim
    if (claim === 'iat' && error.reason === 'check_failed') return invalidToken(message('auth.issuedInFuture'))
    if (claim === 'iss') return invalidToken(message('auth.otherIssuer'))
    if (claim === 'aud') return invalidToken(message('auth.otherAudience'))
    if (claim === 'nbf') return invalidToken(message('auth.notYetValid'))
    return invalidToken(message('auth.claim', { claim: String(claim) }))
  }
  const providerDown =
    remote &&
    (!(error instanceof errors.JOSEError) ||
      error instanceof errors.JWKSTimeout ||
      error instanceof errors.JWKSInvalid ||
      error.code === 'ERR_JOSE_GENERIC')
  if (providerDown) {
    return serviceUnavailable(message('auth.providerUnavailable'), 'identity-provider-unavailable')
  }
  if (error instanceof errors.JOSEError) return invalidToken(message('auth.malformed'))
  throw error
}
