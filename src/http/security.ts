import cors from '@fastify/cors'
import helmet from '@fastify/helmet'
import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyServerOptions } from 'fastify'
import { type Config, UPLOAD_TIMEOUT_MS } from '../config.js'
import { message } from '../domain/messages.js'
import { tooManyRequests } from './problem.js'
import { SOCKET_GRACE_MS } from './request-timeout.js'

/*
 * What protects the service at the edge, in the order it runs on every request: CORS (so even a refusal carries
 * the headers a browser needs to read it), security headers, then the per-client rate limit. Authentication
 * follows (auth.ts). Timeouts and the trusted proxies are server options.
 */

/** The interactive API documentation; it is a web page, so it gets a policy that lets it load its own assets. */
const DOCS_PREFIX = '/swagger-ui'

/** An API answers JSON only: nothing in it may load, run or frame anything. */
const apiContentSecurityPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

/**
 * Swagger UI loads its scripts, styles and images from its own prefix, sets inline styles and fetches the OpenAPI
 * document from this origin; no inline script runs.
 */
const docsContentSecurityPolicy = [
  "default-src 'self'",
  "base-uri 'self'",
  "connect-src 'self'",
  "font-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'self'",
  "img-src 'self' data: validator.swagger.io",
  "object-src 'none'",
  "script-src 'self'",
  "script-src-attr 'none'",
  "style-src 'self' 'unsafe-inline'",
].join('; ')

/**
 * Methods a browser may use across origins, and the headers the front end reads. A preflight may ask for any
 * request header (Spring's `@CrossOrigin` default): the ones it names are allowed, so front ends that add
 * `X-Requested-With`, `Cache-Control` or tracing headers keep working.
 */
const corsMethods = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE']
const corsExposedHeaders = [
  'ETag',
  'X-Changed-Count',
  'X-Price-Change-Batch',
  'X-Request-Id',
  'Retry-After',
  'Idempotent-Replayed',
  'Location',
  'Preference-Applied',
]

/** Probes and metrics are polled by the platform; they are never rate limited. */
const unlimitedPrefix = '/actuator/'

/**
 * Server options of the limits. `REQUEST_TIMEOUT_MS` bounds receiving a request's body (a slow client gets a 408)
 * and answering it (a 503 problem after that long: request-timeout.ts, not Fastify's handler timeout, which never
 * fires for a request with a body); `HEADERS_TIMEOUT_MS` bounds receiving its headers. Node checks those two
 * bounds every `connectionsCheckingInterval` (30 s by default, which let a slow client keep a socket up to 30 s
 * longer): here a twentieth of the shorter bound, so a cut comes within 5 % of it. The socket timeout is a little
 * longer than the request's, so the answer goes first and only a connection that is really stuck is cut; a route
 * with a longer deadline (the upload, the bulk change and the revert) lengthens its socket's bound while it is
 * handled (request-timeout.ts). Node's own bound on receiving a body is the longest route deadline: each route's
 * timer cuts a slow body at its own deadline first (a 408), so an upload may take its 15 minutes. 0 turns them all
 * off. An idle keep-alive connection is closed after `KEEP_ALIVE_TIMEOUT_MS`, and the cap on open
 * connections (`MAX_CONNECTIONS`) is set on the server by {@link capConnections}.
 */
export function securityServerOptions(config: Config): Pick<
  FastifyServerOptions,
  'requestTimeout' | 'connectionTimeout' | 'keepAliveTimeout' | 'trustProxy'
> & {
  http: { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number }
} {
  const timeout = config.requestTimeoutMs
  const headersTimeout = timeout === 0 ? 0 : Math.min(config.headersTimeoutMs, timeout)
  const shortest = Math.min(...[timeout, headersTimeout].filter((bound) => bound > 0), 30_000)
  const longest = timeout === 0 ? 0 : Math.max(timeout, config.longWriteTimeoutMs, UPLOAD_TIMEOUT_MS)
  return {
    requestTimeout: longest,
    http: {
      requestTimeout: longest,
      headersTimeout,
      connectionsCheckingInterval: Math.max(25, Math.floor(shortest / 20)),
    },
    connectionTimeout: timeout === 0 ? 0 : timeout + SOCKET_GRACE_MS,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    trustProxy: typeof config.trustProxy === 'object' ? [...config.trustProxy] : config.trustProxy,
  }
}

/**
 * Caps the open client connections at `MAX_CONNECTIONS`: Node closes one more at once, before reading a byte, so
 * slow or idle clients cannot take every file descriptor; those already open are served as before.
 */
export function capConnections(app: FastifyInstance): void {
  if (app.config.maxConnections > 0) app.server.maxConnections = app.config.maxConnections
}

/** Registers CORS (when `CORS_ORIGINS` names origins), the security headers and the rate limit (when on). */
export async function registerSecurity(app: FastifyInstance): Promise<void> {
  const { config } = app
  if (config.corsOrigins.length > 0) {
    await app.register(cors, {
      origin: config.corsOrigins.includes('*') ? '*' : [...config.corsOrigins],
      methods: corsMethods,
      exposedHeaders: corsExposedHeaders,
      maxAge: 600,
    })
  }

  // Helmet's defaults (nosniff, frame and referrer policy, HSTS, cross-origin isolation); the content security
  // policy depends on the path, so it is set below.
  await app.register(helmet, { global: true, contentSecurityPolicy: false })
  app.addHook('onRequest', async (request, reply) => {
    const docs = request.url === DOCS_PREFIX || request.url.startsWith(`${DOCS_PREFIX}/`)
    reply.header('content-security-policy', docs ? docsContentSecurityPolicy : apiContentSecurityPolicy)
  })

  const { max, windowMs } = config.rateLimit
  if (max > 0) {
    // Registered with `global: false` and installed as an ordinary hook, so it runs before authentication and
    // also counts requests to unknown paths.
    await app.register(rateLimit, {
      global: false,
      max,
      timeWindow: windowMs,
      allowList: (request) => request.url.startsWith(unlimitedPrefix),
      errorResponseBuilder: (_request, context) =>
        tooManyRequests(
          message('request.tooManyRequests', { max: context.max, seconds: windowMs / 1000, after: context.after }),
        ),
    })
    app.addHook('onRequest', app.rateLimit())
  }
}
