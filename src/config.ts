import { isIP } from 'node:net'
import { availableParallelism } from 'node:os'
import envSchema from 'env-schema'
import Type, { type Static } from 'typebox'

/**
 * The environment the service reads, as one schema: defaults, types and allowed values live here and nowhere else.
 * Every variable is documented in the table of docs/configuration.md.
 */
const EnvSchema = Type.Object({
  PORT: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
  HOST: Type.String({ minLength: 1, default: '127.0.0.1' }),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'a postgres:// URL' })),
  DATABASE_READ_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', description: 'a postgres:// URL' })),
  DATABASE_READ_MAX_WAIT_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 200 }),
  DATABASE_POOL_SIZE: Type.Integer({ minimum: 1, maximum: 200, default: 10 }),
  DATABASE_STATEMENT_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 86_400_000, default: 60_000 }),
  DATABASE_START_TIMEOUT_SECONDS: Type.Integer({ minimum: 0, maximum: 86_400, default: 30 }),
  DATA_DIR: Type.String({ minLength: 1, default: './data' }),
  EMBEDDED_SHARED_BUFFERS_MB: Type.Integer({ minimum: 1, maximum: 1024, default: 16 }),
  DEMO_DATA: Type.Union([Type.Literal('auto'), Type.Literal('true'), Type.Literal('false')], { default: 'auto' }),
  DEMO_SCALE: Type.Integer({ minimum: 0, maximum: 10_000_000, default: 3000 }),
  AUTH_MODE: Type.Union([Type.Literal('none'), Type.Literal('jwt'), Type.Literal('demo')], { default: 'none' }),
  AUTH_JWT_SECRET: Type.Optional(Type.String({ minLength: 32 })),
  AUTH_JWKS_URL: Type.Optional(Type.String({ pattern: '^https?://', description: 'an http:// or https:// URL' })),
  AUTH_ISSUER: Type.Optional(Type.String({ minLength: 1 })),
  AUTH_AUDIENCE: Type.Optional(Type.String({ minLength: 1 })),
  AUTH_MAX_TOKEN_AGE: Type.String({
    pattern: '^[0-9]{1,7}[smhd]?$',
    default: '24h',
    description: 'a duration: seconds, or a whole number with s, m, h or d (e.g. 24h)',
  }),
  AUTH_PRICES_READ: Type.Union([Type.Literal('off'), Type.Literal('on')], { default: 'off' }),
  ACTUATOR_AUTH: Type.Union([Type.Literal('false'), Type.Literal('true')], { default: 'false' }),
  WEB_OIDC_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  WEB_OIDC_SCOPES: Type.String({
    pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+( [\\x21\\x23-\\x5B\\x5D-\\x7E]+)*$',
    default: 'openid profile',
    description: 'scope words separated by single spaces (e.g. openid profile)',
  }),
  BUSINESS_TIMEZONE: Type.String({ minLength: 1, default: 'Europe/Moscow' }),
  MAX_PAGE_SIZE: Type.Integer({ minimum: 1, maximum: 100_000, default: 2000 }),
  MESSAGES_LANGUAGE: Type.Union([Type.Literal('en'), Type.Literal('ru')], { default: 'ru' }),
  BODY_LIMIT: Type.Integer({ minimum: 1024, maximum: 1_073_741_824, default: 1_048_576 }),
  IMPORT_BODY_LIMIT: Type.Integer({ minimum: 1024, maximum: 1_073_741_824, default: 104_857_600 }),
  CORS_ORIGINS: Type.String({ default: '' }),
  RATE_LIMIT_MAX: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
  RATE_LIMIT_WINDOW_MS: Type.Integer({ minimum: 1, maximum: 86_400_000, default: 60_000 }),
  REQUEST_TIMEOUT_MS: Type.Integer({ minimum: 0, maximum: 3_600_000, default: 30_000 }),
  HEADERS_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 10_000 }),
  KEEP_ALIVE_TIMEOUT_MS: Type.Integer({ minimum: 100, maximum: 3_600_000, default: 72_000 }),
  MAX_CONNECTIONS: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 1000 }),
  LONG_WRITE_TIMEOUT_MS: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 300_000 }),
  IDEMPOTENCY_KEY_TTL: Type.String({
    pattern: '^[0-9]{1,7}[smhd]?$',
    default: '24h',
    description: 'a duration: seconds, or a whole number with s, m, h or d (e.g. 24h)',
  }),
  TRUST_PROXY: Type.String({ default: '' }),
  MATVIEW_REFRESH: Type.Union([Type.Literal('auto'), Type.Literal('off')], { default: 'auto' }),
  MATVIEW_REFRESH_DELAY_MS: Type.Integer({ minimum: 0, maximum: 60_000, default: 200 }),
  RESULT_CACHE: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  RESULT_CACHE_MB: Type.Integer({ minimum: 1, maximum: 65_536, default: 16 }),
  PAGE_CACHE_MB: Type.Integer({ minimum: 1, maximum: 65_536, default: 32 }),
  SEARCH_INDEX: Type.Union([Type.Literal('on'), Type.Literal('off')], { default: 'on' }),
  SEARCH_INDEX_SNAPSHOT_DIR: Type.String({ minLength: 1, default: './search-index' }),
  SEARCH_THREADS: Type.Integer({ minimum: 0, maximum: 256, default: 1 }),
  LOG_LEVEL: Type.Union(
    ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level)),
    { default: 'info' },
  ),
})

type Env = Static<typeof EnvSchema>

/** The answer deadline of an upload of the price list (`POST …/import`), instead of `REQUEST_TIMEOUT_MS`. */
export const UPLOAD_TIMEOUT_MS = 15 * 60_000

export interface Config {
  readonly port: number
  readonly host: string
  readonly databaseUrl: string | undefined
  readonly databaseReadUrl: string | undefined
  /** How long a read waits for the read replica to replay the writes before it, before the primary answers. */
  readonly databaseReadMaxWaitMs: number
  readonly databasePoolSize: number
  /** Server mode: PostgreSQL's statement_timeout (and idle-in-transaction timeout) of the service; 0 = none. */
  readonly databaseStatementTimeoutMs: number
  /**
   * Server mode: how long the start (service and CLI) keeps retrying a database server it cannot reach, with
   * backoff, before it gives up; 0 = one attempt.
   */
  readonly databaseStartTimeoutSeconds: number
  readonly dataDir: string
  /**
   * The embedded database's buffer cache (PostgreSQL's `shared_buffers`) in MiB: it lives in the service's own
   * memory and fills as statements touch pages. Unused with `DATABASE_URL`.
   */
  readonly embeddedSharedBuffersMb: number
  readonly demoData: 'auto' | 'true' | 'false'
  readonly demoScale: number
  readonly auth: {
    /**
     * `none`: no authentication, on a loopback HOST only; `jwt`: Bearer tokens; `demo`: no authentication on any
     * HOST, to try the service (the image with `-e AUTH_MODE=demo`): it loads the demo catalogue into an empty
     * database, says so in its log at start and the web app shows it on every screen.
     */
    readonly mode: 'none' | 'jwt' | 'demo'
    readonly jwtSecret: string | undefined
    readonly jwksUrl: string | undefined
    readonly issuer: string | undefined
    readonly audience: string | undefined
    /** The longest a token may live and be used (from its `iat`), in seconds; 0 = no maximum. */
    readonly maxTokenAgeSeconds: number
    /** `on`: the glass price list's reads (purchase prices, history with its users) need `prices:read`. */
    readonly pricesRead: 'on' | 'off'
    /** `/actuator/info` and `/actuator/prometheus` need a valid token too (health probes stay open). */
    readonly actuatorAuth: boolean
  }
  /**
   * The web app's sign-in through the OpenID Connect provider (Authorization Code with PKCE), served to the page;
   * undefined without `WEB_OIDC_CLIENT_ID` (and always with `AUTH_MODE=none`).
   */
  readonly webSignIn: WebSignIn | undefined
  readonly businessTimezone: string
  readonly maxPageSize: number
  /** The language of problem details when a request's Accept-Language asks for neither English nor Russian. */
  readonly messagesLanguage: 'en' | 'ru'
  readonly bodyLimit: number
  readonly importBodyLimit: number
  readonly corsOrigins: readonly string[]
  readonly rateLimit: { readonly max: number; readonly windowMs: number }
  readonly requestTimeoutMs: number
  /** The longest wait for a request's headers (at most `requestTimeoutMs`; off with it). */
  readonly headersTimeoutMs: number
  /** How long a keep-alive connection may sit idle between two requests before it is closed. */
  readonly keepAliveTimeoutMs: number
  /** Open client connections at most; one more is closed at once. 0: no cap. */
  readonly maxConnections: number
  /** The answer deadline of the bulk change and the revert, instead of `requestTimeoutMs` (which 0 turns off). */
  readonly longWriteTimeoutMs: number
  /** How long the outcome of a write sent with an `Idempotency-Key` is kept for its retries, in seconds. */
  readonly idempotencyKeyTtlSeconds: number
  /**
   * Which proxies' `X-Forwarded-For` names the client (its address keys the rate limit): `false` (the peer is the
   * client), `true` (any), or the proxies' addresses and CIDR ranges.
   */
  readonly trustProxy: boolean | readonly string[]
  /** `auto`: refresh stale matviews in the background; `off`: leave it to `refresh` runs (CLI, imports). */
  readonly matviewRefresh: 'auto' | 'off'
  readonly matviewRefreshDelayMs: number
  /** `off`: totals, pages, facets and suggestions are computed afresh for every request (diagnosis, benchmarks). */
  readonly resultCache: 'on' | 'off'
  /** Heap bytes the remembered totals, facets and suggestions may hold. */
  readonly resultCacheBytes: number
  /** Heap bytes the remembered whole pages may hold. */
  readonly pageCacheBytes: number
  /** `on`: searches are answered from the in-memory index (catalog/search-index); `off`: from SQL only. */
  readonly searchIndex: 'on' | 'off'
  /** Where the search index keeps its tables between runs; undefined (`off`): nowhere, every start reads them. */
  readonly searchIndexSnapshotDir: string | undefined
  /**
   * Threads answering from the search index: its own, which loads it and answers too, and search threads beside it
   * reading the same tables (SEARCH_THREADS, default 1: its own alone; 0: one per core).
   */
  readonly searchThreads: number
  readonly logLevel: string
}

/** What the page needs to sign a user in at the provider: a public client, no secret. */
export interface WebSignIn {
  /** `AUTH_ISSUER`: the provider's issuer URL, whose discovery document the page reads. */
  readonly issuer: string
  readonly clientId: string
  /** Space-separated scopes the page asks for; `openid` is among them. */
  readonly scopes: string
}

/** A configuration problem, reported as one line naming the variable. */
export class ConfigError extends Error {
  override name = 'ConfigError'
}

/**
 * Reads and validates the environment. Throws {@link ConfigError} with one line naming the offending variable;
 * nothing else in the service reads `process.env`.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const data: Record<string, string> = {}
  for (const key of Object.keys(EnvSchema.properties)) {
    const value = env[key]
    // An empty variable means "not set", as in most deployment tools.
    if (value !== undefined && value.trim() !== '') data[key] = value.trim()
  }
  let parsed: Env
  try {
    parsed = envSchema({ schema: structuredClone(EnvSchema), data, env: false }) as unknown as Env
  } catch (error) {
    throw new ConfigError(describeEnvError(error, data))
  }

  if (!isValidTimezone(parsed.BUSINESS_TIMEZONE)) {
    throw new ConfigError(`BUSINESS_TIMEZONE: unknown time zone '${parsed.BUSINESS_TIMEZONE}' (e.g. Europe/Moscow)`)
  }
  if (parsed.AUTH_MODE === 'none' && !isLoopback(parsed.HOST)) {
    throw new ConfigError(
      `AUTH_MODE: 'none' is allowed only on a loopback HOST (got HOST=${parsed.HOST}); set AUTH_MODE=jwt to listen there, or AUTH_MODE=demo to try the service with its demo data, open to anyone who reaches it`,
    )
  }
  if (parsed.AUTH_MODE === 'jwt' && !parsed.AUTH_JWT_SECRET && !parsed.AUTH_JWKS_URL) {
    throw new ConfigError('AUTH_JWT_SECRET: AUTH_MODE=jwt needs AUTH_JWT_SECRET (HS256) or AUTH_JWKS_URL (OIDC)')
  }
  if (parsed.AUTH_MODE === 'jwt' && parsed.AUTH_JWT_SECRET && parsed.AUTH_JWKS_URL) {
    throw new ConfigError('AUTH_JWKS_URL: set either AUTH_JWT_SECRET (HS256) or AUTH_JWKS_URL (OIDC), not both')
  }
  if (parsed.AUTH_JWKS_URL && !URL.canParse(parsed.AUTH_JWKS_URL)) {
    throw new ConfigError(`AUTH_JWKS_URL: not a URL${shown('AUTH_JWKS_URL', parsed.AUTH_JWKS_URL)}`)
  }
  for (const variable of ['AUTH_PRICES_READ', 'ACTUATOR_AUTH'] as const) {
    if (parsed.AUTH_MODE !== 'jwt' && (parsed[variable] === 'on' || parsed[variable] === 'true')) {
      throw new ConfigError(`${variable}: needs AUTH_MODE=jwt (without authentication there are no roles or tokens)`)
    }
  }
  const trustProxy = parseTrustProxy(parsed.TRUST_PROXY)
  const webSignIn = parseWebSignIn(parsed)

  return Object.freeze({
    port: parsed.PORT,
    host: parsed.HOST,
    databaseUrl: parsed.DATABASE_URL,
    databaseReadUrl: parsed.DATABASE_READ_URL,
    databaseReadMaxWaitMs: parsed.DATABASE_READ_MAX_WAIT_MS,
    databasePoolSize: parsed.DATABASE_POOL_SIZE,
    databaseStatementTimeoutMs: parsed.DATABASE_STATEMENT_TIMEOUT_MS,
    databaseStartTimeoutSeconds: parsed.DATABASE_START_TIMEOUT_SECONDS,
    dataDir: parsed.DATA_DIR,
    embeddedSharedBuffersMb: parsed.EMBEDDED_SHARED_BUFFERS_MB,
    // The demo mode is for trying the service: an empty database gets the demo catalogue whichever database it is.
    demoData: parsed.AUTH_MODE === 'demo' && parsed.DEMO_DATA === 'auto' ? 'true' : parsed.DEMO_DATA,
    demoScale: parsed.DEMO_SCALE,
    auth: Object.freeze({
      mode: parsed.AUTH_MODE,
      jwtSecret: parsed.AUTH_JWT_SECRET,
      jwksUrl: parsed.AUTH_JWKS_URL,
      issuer: parsed.AUTH_ISSUER,
      audience: parsed.AUTH_AUDIENCE,
      maxTokenAgeSeconds: durationSeconds(parsed.AUTH_MAX_TOKEN_AGE),
      pricesRead: parsed.AUTH_PRICES_READ,
      actuatorAuth: parsed.ACTUATOR_AUTH === 'true',
    }),
    webSignIn,
    businessTimezone: parsed.BUSINESS_TIMEZONE,
    maxPageSize: parsed.MAX_PAGE_SIZE,
    messagesLanguage: parsed.MESSAGES_LANGUAGE,
    bodyLimit: parsed.BODY_LIMIT,
    importBodyLimit: parsed.IMPORT_BODY_LIMIT,
    corsOrigins: Object.freeze(
      parsed.CORS_ORIGINS.split(',')
        .map((origin) => origin.trim())
        .filter(Boolean),
    ),
    rateLimit: Object.freeze({ max: parsed.RATE_LIMIT_MAX, windowMs: parsed.RATE_LIMIT_WINDOW_MS }),
    requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
    headersTimeoutMs: parsed.HEADERS_TIMEOUT_MS,
    keepAliveTimeoutMs: parsed.KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: parsed.MAX_CONNECTIONS,
    longWriteTimeoutMs: parsed.LONG_WRITE_TIMEOUT_MS,
    idempotencyKeyTtlSeconds: Math.max(1, durationSeconds(parsed.IDEMPOTENCY_KEY_TTL)),
    trustProxy,
    matviewRefresh: parsed.MATVIEW_REFRESH,
    resultCache: parsed.RESULT_CACHE,
    resultCacheBytes: parsed.RESULT_CACHE_MB * 1024 * 1024,
    pageCacheBytes: parsed.PAGE_CACHE_MB * 1024 * 1024,
    searchIndex: parsed.SEARCH_INDEX,
    searchIndexSnapshotDir: parsed.SEARCH_INDEX_SNAPSHOT_DIR === 'off' ? undefined : parsed.SEARCH_INDEX_SNAPSHOT_DIR,
    searchThreads: parsed.SEARCH_THREADS === 0 ? availableParallelism() : parsed.SEARCH_THREADS,
    matviewRefreshDelayMs: parsed.MATVIEW_REFRESH_DELAY_MS,
    logLevel: parsed.LOG_LEVEL,
  })
}

const secondsPerUnit: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

/** `90`, `90s`, `15m`, `24h`, `7d` → seconds (the pattern of the schema has been checked). */
function durationSeconds(value: string): number {
  const unit = /[smhd]$/.test(value) ? value.slice(-1) : 's'
  return Number.parseInt(value, 10) * (secondsPerUnit[unit] ?? 1)
}

function describeEnvError(error: unknown, data: Record<string, string>): string {
  const first = (error as { errors?: { instancePath: string; message?: string; params?: Record<string, unknown> }[] })
    .errors?.[0]
  if (!first) return redactSecrets(String((error as Error).message ?? error), data)
  const variable = first.instancePath.replace(/^\//, '') || String(first.params?.missingProperty ?? 'environment')
  const schema = (
    EnvSchema.properties as Record<string, { anyOf?: { const: string }[]; pattern?: string; description?: string }>
  )[variable]
  const allowed = schema?.anyOf?.map((option) => option.const).join(', ')
  const got = shown(variable, data[variable])
  if (allowed) return `${variable}: must be one of ${allowed}${got}`
  if (schema?.description) return `${variable}: must be ${schema.description}${got}`
  return `${variable}: ${first.message ?? 'is invalid'}${got}`
}

/**
 * Variables whose values are never printed: connection strings, secrets, keys, passwords and tokens (a log
 * aggregator keeps every line of stderr).
 */
const SECRET_VARIABLE = /(_URL|_KEY|TOKEN|CREDENTIALS?)$|PASSWORD|PASSWD|SECRET/i

/** Does the variable hold a value that must never be printed? */
function isSecretVariable(variable: string): boolean {
  return SECRET_VARIABLE.test(variable)
}

/** A value's look when it is quoted in an error: ` (got '…')`, or ` (value not shown)` for a secret one. */
function shown(variable: string, value: string | undefined): string {
  if (value === undefined) return ''
  if (isSecretVariable(variable) || looksSecret(value)) return ' (value not shown)'
  return ` (got '${value}')`
}

/** A value that holds a password whatever its variable's name: a URL with credentials, `password=…`. */
function looksSecret(value: string): boolean {
  return /:\/\/[^/@\s]*:[^/@\s]*@/.test(value) || /(password|passwd|pwd|secret|token)\s*[=:]/i.test(value)
}

/**
 * Removes secrets from a message bound for a log: the passwords of URLs (`postgres://app:***@db/x`) and the values
 * of the environment's secret variables wherever they appear.
 */
export function redactSecrets(message: string, env: Record<string, string | undefined> = process.env): string {
  let text = message.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^/:@\s]*:)[^@\s]*@/gi, '$1***@')
  for (const [variable, value] of Object.entries(env)) {
    if (!value || value.length < 4 || !isSecretVariable(variable)) continue
    text = text.split(value).join(`<${variable}>`)
    const trimmed = value.trim()
    if (trimmed !== value && trimmed.length >= 4) text = text.split(trimmed).join(`<${variable}>`)
  }
  return text
}

/**
 * `WEB_OIDC_CLIENT_ID` (with `AUTH_MODE=jwt` and `AUTH_ISSUER`) and `WEB_OIDC_SCOPES`: the page's sign-in. The
 * issuer must be an https URL (plain http only on a loopback host, for a provider on the same machine), as OpenID
 * Connect Discovery requires, and the scopes must ask for `openid` (the page checks the ID token's nonce).
 */
function parseWebSignIn(parsed: Env): WebSignIn | undefined {
  const clientId = parsed.WEB_OIDC_CLIENT_ID
  if (clientId === undefined) return undefined
  if (parsed.AUTH_MODE !== 'jwt') {
    throw new ConfigError(
      `WEB_OIDC_CLIENT_ID: needs AUTH_MODE=jwt (with AUTH_MODE=${parsed.AUTH_MODE} the web app has no sign-in)`,
    )
  }
  const issuer = parsed.AUTH_ISSUER
  if (issuer === undefined) {
    throw new ConfigError("AUTH_ISSUER: the web app's sign-in (WEB_OIDC_CLIENT_ID) needs the provider's issuer URL")
  }
  const url = URL.canParse(issuer) ? new URL(issuer) : undefined
  const loopbackHttp = url?.protocol === 'http:' && isLoopback(url.hostname.replace(/^\[|\]$/g, ''))
  if (url === undefined || !(url.protocol === 'https:' || loopbackHttp) || url.search !== '' || url.hash !== '') {
    throw new ConfigError(
      `AUTH_ISSUER: the web app's sign-in needs an https:// issuer URL without query or fragment (http:// only on a loopback host)${shown('AUTH_ISSUER', issuer)}`,
    )
  }
  if (!parsed.WEB_OIDC_SCOPES.split(' ').includes('openid')) {
    throw new ConfigError(`WEB_OIDC_SCOPES: must include openid${shown('WEB_OIDC_SCOPES', parsed.WEB_OIDC_SCOPES)}`)
  }
  return Object.freeze({ issuer, clientId, scopes: parsed.WEB_OIDC_SCOPES })
}

/** `TRUST_PROXY`: empty or `false`, `true`, or comma-separated addresses and CIDR ranges of the proxies. */
function parseTrustProxy(value: string): boolean | readonly string[] {
  if (value === '' || value === 'false') return false
  if (value === 'true') return true
  const entries = value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
  for (const entry of entries) {
    const [address = '', bits, extra] = entry.split('/')
    const version = isIP(address)
    const maxBits = version === 6 ? 128 : 32
    if (
      version === 0 ||
      extra !== undefined ||
      (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= maxBits))
    ) {
      throw new ConfigError(
        `TRUST_PROXY: '${entry}' is not an address or CIDR range (use true, or addresses and ranges like 10.0.0.0/8)`,
      )
    }
  }
  return Object.freeze(entries)
}

function isValidTimezone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/** True for addresses only this machine can reach: the loopback range and `localhost`. */
function isLoopback(host: string): boolean {
  if (host === 'localhost') return true
  const version = isIP(host)
  if (version === 4) return host.startsWith('127.')
  if (version === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1'
  return false
}
