import type { FastifyInstance, FastifyRequest } from 'fastify'
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose'
import type { Config } from '../config.js'
import { forbidden, type ProblemError, serviceUnavailable, unauthorized } from './problem.js'

/*
 * Bearer-token authentication (`AUTH_MODE=jwt`). Every `/api` request needs a valid token: signed with the shared
 * HS256 secret, or by a key of the OIDC provider's JWKS; unexpired; from `AUTH_ISSUER` and for `AUTH_AUDIENCE`
 * when those are set. Routes that write a price list or nomenclature (`config.writesCatalog`) also need the role
 * `prices:write`. Probes, metrics and the API documentation stay open.
 */

/** The role a caller needs for every write of a price list or nomenclature. */
export const WRITE_ROLE = 'prices:write'

const REALM = 'optics-catalog'

/** Clock skew tolerated between the token's issuer and this service. */
const CLOCK_TOLERANCE_SECONDS = 30

const asymmetricAlgorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA']

export interface Principal {
  readonly name: string
  readonly roles: readonly string[]
}

/** Paths under authentication: the API. Everything else (actuator, OpenAPI, Swagger UI) is open. */
function isProtected(url: string): boolean {
  return url === '/api' || url.startsWith('/api/') || url.startsWith('/api?')
}

/** Registers the authentication hook; with `AUTH_MODE=none` there is none and `request.principal` stays unset. */
export function registerAuthentication(app: FastifyInstance): void {
  if (app.config.auth.mode !== 'jwt') return
  const verify = tokenVerifier(app.config.auth)
  app.addHook('onRequest', async (request) => {
    // A CORS preflight carries no credentials; CORS answers it before this hook (or it is a 404/405).
    // The route's own pattern decides, so a percent-encoded path (`/%61pi/…`) cannot route around the check.
    if (request.method === 'OPTIONS' || !isProtected(request.routeOptions.url ?? request.url)) return
    const token = bearerToken(request)
    if (token === undefined) {
      throw unauthorized('This API needs a Bearer token (Authorization: Bearer …)', `Bearer realm="${REALM}"`)
    }
    const principal = await verify(token)
    request.principal = principal
    if (request.routeOptions.config?.writesCatalog && !principal.roles.includes(WRITE_ROLE)) {
      throw forbidden(`Changing prices needs the role ${WRITE_ROLE}, which ${principal.name} does not have`, {
        'www-authenticate': `Bearer realm="${REALM}", error="insufficient_scope", scope="${WRITE_ROLE}"`,
      })
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
  const options = {
    algorithms: remote ? asymmetricAlgorithms : ['HS256'],
    clockTolerance: CLOCK_TOLERANCE_SECONDS,
    requiredClaims: ['exp'],
    ...(auth.issuer ? { issuer: auth.issuer } : {}),
    ...(auth.audience ? { audience: auth.audience } : {}),
  }
  return async (token) => {
    let payload: JWTPayload
    try {
      payload = (await jwtVerify(token, key as never, options)).payload
    } catch (error) {
      throw verificationProblem(error, remote)
    }
    const name = principalNameOf(payload)
    if (name === undefined) throw invalidToken('The token names no user (preferred_username, name or sub)')
    return { name, roles: rolesOf(payload) }
  }
}

function invalidToken(description: string): ProblemError {
  return unauthorized(description, `Bearer realm="${REALM}", error="invalid_token", error_description="${description}"`)
}

function verificationProblem(error: unknown, remote: boolean): ProblemError {
  if (error instanceof errors.JWTExpired) return invalidToken('The token has expired')
  if (error instanceof errors.JWTClaimValidationFailed) {
    const claim = error.claim
    if (claim === 'iss') return invalidToken('The token was issued by another issuer')
    if (claim === 'aud') return invalidToken('The token is meant for another audience')
    if (claim === 'nbf') return invalidToken('The token is not valid yet')
    return invalidToken(`The token's ${claim} claim is missing or invalid`)
  }
  const providerDown =
    remote &&
    (!(error instanceof errors.JOSEError) ||
      error instanceof errors.JWKSTimeout ||
      error instanceof errors.JWKSInvalid ||
      error.code === 'ERR_JOSE_GENERIC')
  if (providerDown) {
    return serviceUnavailable(
      "The identity provider's keys cannot be fetched; try again shortly",
      'identity-provider-unavailable',
    )
  }
  if (error instanceof errors.JOSEError) return invalidToken('The token is malformed or its signature is not valid')
  throw error
}

function nonEmptyString(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const cleaned = value.replaceAll('\u0000', '').trim()
  return cleaned === '' ? undefined : cleaned
}

/** The user's name as `user` records it: `preferred_username`, else `name`, else `sub`. */
function principalNameOf(payload: JWTPayload): string | undefined {
  return nonEmptyString(payload.preferred_username) ?? nonEmptyString(payload.name) ?? nonEmptyString(payload.sub)
}

/** Roles from `roles`, Keycloak's `realm_access.roles` and the space-separated `scope`. */
function rolesOf(payload: JWTPayload): string[] {
  const roles = new Set<string>()
  const add = (value: unknown) => {
    if (Array.isArray(value)) for (const item of value) add(item)
    else if (typeof value === 'string') for (const word of value.split(/\s+/)) if (word) roles.add(word)
  }
  add(payload.roles)
  add((payload.realm_access as { roles?: unknown } | undefined)?.roles)
  add(payload.scope)
  return [...roles]
}
