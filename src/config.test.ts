import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { availableParallelism } from 'node:os'
import { describe, test } from 'node:test'
import { promisify } from 'node:util'
import { ConfigError, loadConfig, redactSecrets } from './config.js'
import { openDatabase } from './db/database.js'

/* The configuration as read at start: security-relevant combinations are refused with one line naming the variable. */

const SECRET = 'a-shared-secret-of-at-least-32-characters'

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env)
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error))
    assert.doesNotMatch(error.message, /\n/)
    return error.message
  }
  assert.fail(`accepted ${JSON.stringify(env)}`)
}

describe('configuration of authentication and limits', () => {
  test('AUTH_MODE=none is refused on a HOST other machines can reach', () => {
    for (const host of ['0.0.0.0', '::', '10.1.2.3', 'optics.internal']) {
      assert.match(refusal({ HOST: host }), /^AUTH_MODE: 'none' is allowed only on a loopback HOST/)
    }
  })

  test('AUTH_MODE=none is accepted on loopback addresses', () => {
    for (const host of ['127.0.0.1', '127.0.0.53', '::1', 'localhost']) {
      assert.equal(loadConfig({ HOST: host }).auth.mode, 'none')
    }
  })

  test('AUTH_MODE=demo listens anywhere without authentication, loads the demo into an empty database, has no roles', () => {
    const config = loadConfig({ HOST: '0.0.0.0', AUTH_MODE: 'demo', DATABASE_URL: 'postgres://db/optics' })
    assert.equal(config.auth.mode, 'demo')
    assert.equal(config.demoData, 'true', 'the demo mode loads the demo catalogue on either database')
    assert.equal(loadConfig({ AUTH_MODE: 'demo', DEMO_DATA: 'false' }).demoData, 'false')
    assert.match(refusal({ HOST: '0.0.0.0' }), /set AUTH_MODE=jwt to listen there, or AUTH_MODE=demo to try/)
    assert.match(refusal({ AUTH_MODE: 'demo', AUTH_PRICES_READ: 'on' }), /^AUTH_PRICES_READ: needs AUTH_MODE=jwt/)
    assert.match(refusal({ AUTH_MODE: 'demo', ACTUATOR_AUTH: 'true' }), /^ACTUATOR_AUTH: needs AUTH_MODE=jwt/)
    assert.match(
      refusal({ AUTH_MODE: 'demo', WEB_OIDC_CLIENT_ID: 'web' }),
      /^WEB_OIDC_CLIENT_ID: needs AUTH_MODE=jwt \(with AUTH_MODE=demo the web app has no sign-in\)/,
    )
  })

  test('AUTH_MODE=jwt may listen anywhere, with exactly one source of keys', () => {
    const config = loadConfig({ HOST: '0.0.0.0', AUTH_MODE: 'jwt', AUTH_JWT_SECRET: SECRET, AUTH_ISSUER: 'https://id' })
    assert.equal(config.auth.mode, 'jwt')
    assert.equal(config.auth.issuer, 'https://id')
    assert.match(refusal({ AUTH_MODE: 'jwt' }), /^AUTH_JWT_SECRET: AUTH_MODE=jwt needs/)
    assert.match(
      refusal({ AUTH_MODE: 'jwt', AUTH_JWT_SECRET: SECRET, AUTH_JWKS_URL: 'https://id/certs' }),
      /^AUTH_JWKS_URL: set either/,
    )
    assert.match(refusal({ AUTH_MODE: 'jwt', AUTH_JWT_SECRET: 'short' }), /^AUTH_JWT_SECRET: /)
    assert.match(refusal({ AUTH_MODE: 'jwt', AUTH_JWKS_URL: 'ftp://id/certs' }), /^AUTH_JWKS_URL: /)
    assert.match(refusal({ AUTH_MODE: 'oauth' }), /^AUTH_MODE: must be one of none, jwt/)
  })

  test("the web app's sign-in: off by default, else the issuer, the client id and the scopes", () => {
    assert.equal(loadConfig({}).webSignIn, undefined)
    const jwks = { AUTH_MODE: 'jwt', AUTH_JWKS_URL: 'https://id.example/realms/shops/protocol/openid-connect/certs' }
    assert.equal(loadConfig({ ...jwks, AUTH_ISSUER: 'https://id.example/realms/shops' }).webSignIn, undefined)
    const config = loadConfig({
      ...jwks,
      AUTH_ISSUER: 'https://id.example/realms/shops',
      WEB_OIDC_CLIENT_ID: 'optics-catalog-web',
    })
    assert.deepEqual(config.webSignIn, {
      issuer: 'https://id.example/realms/shops',
      clientId: 'optics-catalog-web',
      scopes: 'openid profile',
    })
    const local = loadConfig({
      ...jwks,
      AUTH_ISSUER: 'http://127.0.0.1:9000/oidc',
      WEB_OIDC_CLIENT_ID: 'web',
      WEB_OIDC_SCOPES: 'openid profile offline_access',
    })
    assert.equal(local.webSignIn?.scopes, 'openid profile offline_access')
  })

  test("the web app's sign-in is refused without jwt, without an issuer, over plain http elsewhere, without openid", () => {
    const jwks = { AUTH_MODE: 'jwt', AUTH_JWKS_URL: 'https://id.example/certs' }
    assert.match(refusal({ WEB_OIDC_CLIENT_ID: 'web' }), /^WEB_OIDC_CLIENT_ID: needs AUTH_MODE=jwt/)
    assert.match(refusal({ ...jwks, WEB_OIDC_CLIENT_ID: 'web' }), /^AUTH_ISSUER: the web app's sign-in .* needs/)
    for (const issuer of ['http://id.example/realms/shops', 'id.example', 'https://id.example/?realm=x']) {
      assert.match(
        refusal({ ...jwks, AUTH_ISSUER: issuer, WEB_OIDC_CLIENT_ID: 'web' }),
        new RegExp(
          `^AUTH_ISSUER: the web app's sign-in needs an https:// issuer URL.*\\(got '${issuer.replace(/[?.]/g, '\\$&')}'\\)$`,
        ),
      )
    }
    const issued = { ...jwks, AUTH_ISSUER: 'https://id.example', WEB_OIDC_CLIENT_ID: 'web' }
    assert.match(refusal({ ...issued, WEB_OIDC_SCOPES: 'profile email' }), /^WEB_OIDC_SCOPES: must include openid/)
    assert.match(refusal({ ...issued, WEB_OIDC_SCOPES: 'openid  "profile"' }), /^WEB_OIDC_SCOPES: must be scope words/)
  })

  test('AUTH_MAX_TOKEN_AGE reads a duration (default 24 h); the read role and actuator tokens need jwt', () => {
    const jwt = { AUTH_MODE: 'jwt', AUTH_JWT_SECRET: SECRET }
    assert.equal(loadConfig(jwt).auth.maxTokenAgeSeconds, 86_400)
    assert.equal(loadConfig(jwt).auth.pricesRead, 'off')
    assert.equal(loadConfig(jwt).auth.actuatorAuth, false)
    for (const [value, seconds] of [
      ['90', 90],
      ['90s', 90],
      ['15m', 900],
      ['8h', 28_800],
      ['7d', 604_800],
      ['0', 0],
    ] as const) {
      assert.equal(loadConfig({ ...jwt, AUTH_MAX_TOKEN_AGE: value }).auth.maxTokenAgeSeconds, seconds, value)
    }
    for (const value of ['1.5h', '24 hours', '-1', 'h']) {
      assert.match(refusal({ ...jwt, AUTH_MAX_TOKEN_AGE: value }), /^AUTH_MAX_TOKEN_AGE: must be a duration/, value)
    }
    const strict = loadConfig({ ...jwt, AUTH_PRICES_READ: 'on', ACTUATOR_AUTH: 'true' }).auth
    assert.deepEqual([strict.pricesRead, strict.actuatorAuth], ['on', true])
    assert.match(refusal({ AUTH_PRICES_READ: 'on' }), /^AUTH_PRICES_READ: needs AUTH_MODE=jwt/)
    assert.match(refusal({ ACTUATOR_AUTH: 'true' }), /^ACTUATOR_AUTH: needs AUTH_MODE=jwt/)
    assert.match(refusal({ ...jwt, ACTUATOR_AUTH: 'yes' }), /^ACTUATOR_AUTH: must be one of false, true/)
  })

  test('cache bounds read in MiB, the headers timeout in ms; a bad value names its variable', () => {
    const defaults = loadConfig({})
    assert.deepEqual(
      [defaults.resultCacheBytes, defaults.pageCacheBytes, defaults.headersTimeoutMs],
      [16 * 1024 * 1024, 32 * 1024 * 1024, 10_000],
    )
    const set = loadConfig({ RESULT_CACHE_MB: '4', PAGE_CACHE_MB: '64', HEADERS_TIMEOUT_MS: '5000' })
    assert.deepEqual([set.resultCacheBytes, set.pageCacheBytes, set.headersTimeoutMs], [4194304, 67108864, 5000])
    assert.match(refusal({ PAGE_CACHE_MB: '0' }), /^PAGE_CACHE_MB: /)
    assert.match(refusal({ RESULT_CACHE_MB: 'lots' }), /^RESULT_CACHE_MB: /)
    assert.match(refusal({ HEADERS_TIMEOUT_MS: '10' }), /^HEADERS_TIMEOUT_MS: /)
  })

  test('keep-alive timeout and the connection cap: defaults, values, a bad value names its variable', () => {
    const defaults = loadConfig({})
    assert.deepEqual([defaults.keepAliveTimeoutMs, defaults.maxConnections], [72_000, 1000])
    const set = loadConfig({ KEEP_ALIVE_TIMEOUT_MS: '5000', MAX_CONNECTIONS: '0' })
    assert.deepEqual([set.keepAliveTimeoutMs, set.maxConnections], [5000, 0])
    assert.match(refusal({ KEEP_ALIVE_TIMEOUT_MS: '0' }), /^KEEP_ALIVE_TIMEOUT_MS: /)
    assert.match(refusal({ MAX_CONNECTIONS: '-1' }), /^MAX_CONNECTIONS: /)
  })

  test('limits read as numbers; CORS_ORIGINS as a list', () => {
    const config = loadConfig({
      BODY_LIMIT: '2048',
      RATE_LIMIT_MAX: '100',
      RATE_LIMIT_WINDOW_MS: '1000',
      REQUEST_TIMEOUT_MS: '5000',
      CORS_ORIGINS: 'https://shop.example, https://admin.shop.example',
    })
    assert.equal(config.bodyLimit, 2048)
    assert.deepEqual(config.rateLimit, { max: 100, windowMs: 1000 })
    assert.equal(config.requestTimeoutMs, 5000)
    assert.deepEqual(config.corsOrigins, ['https://shop.example', 'https://admin.shop.example'])
    assert.deepEqual(loadConfig({}).rateLimit, { max: 0, windowMs: 60_000 })
    assert.match(refusal({ RATE_LIMIT_MAX: '-1' }), /^RATE_LIMIT_MAX: /)
    assert.match(refusal({ BODY_LIMIT: 'lots' }), /^BODY_LIMIT: /)
  })

  test('SEARCH_INDEX is on unless turned off; anything else is refused', () => {
    assert.equal(loadConfig({}).searchIndex, 'on')
    assert.equal(loadConfig({ SEARCH_INDEX: 'off' }).searchIndex, 'off')
    assert.match(refusal({ SEARCH_INDEX: 'maybe' }), /^SEARCH_INDEX: /)
  })

  test("SEARCH_THREADS: the index's thread alone by default, 0 one per core; a bad value names its variable", () => {
    assert.equal(loadConfig({}).searchThreads, 1)
    assert.equal(loadConfig({ SEARCH_THREADS: '3' }).searchThreads, 3)
    assert.equal(loadConfig({ SEARCH_THREADS: '0' }).searchThreads, availableParallelism())
    assert.match(refusal({ SEARCH_THREADS: '-1' }), /^SEARCH_THREADS: /)
    assert.match(refusal({ SEARCH_THREADS: 'many' }), /^SEARCH_THREADS: /)
  })

  test('RESULT_CACHE is on unless turned off; anything else is refused', () => {
    assert.equal(loadConfig({}).resultCache, 'on')
    assert.equal(loadConfig({ RESULT_CACHE: 'off' }).resultCache, 'off')
    assert.match(refusal({ RESULT_CACHE: 'sometimes' }), /^RESULT_CACHE: /)
  })

  test('TRUST_PROXY is off, on, or a list of proxy addresses and ranges', () => {
    assert.equal(loadConfig({}).trustProxy, false)
    assert.equal(loadConfig({ TRUST_PROXY: 'true' }).trustProxy, true)
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.168.1.7,::1' }).trustProxy, [
      '10.0.0.0/8',
      '192.168.1.7',
      '::1',
    ])
    assert.match(refusal({ TRUST_PROXY: '2' }), /^TRUST_PROXY: '2' is not an address/)
    assert.match(refusal({ TRUST_PROXY: '10.0.0.0/33' }), /^TRUST_PROXY: /)
    assert.match(refusal({ TRUST_PROXY: 'proxy.internal' }), /^TRUST_PROXY: /)
  })
})

describe('the server process', () => {
  test('refuses to start without authentication on a public HOST, in one line, before opening anything', async () => {
    const server = new URL('./server.ts', import.meta.url).pathname
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', server], {
      env: { PATH: process.env.PATH ?? '', HOST: '0.0.0.0', PORT: '0' },
    })
    const failed = (await run.then(
      () => assert.fail('the server started'),
      (error: unknown) => error,
    )) as { code: number; stderr: string; stdout: string }
    assert.equal(failed.code, 2)
    assert.equal(failed.stdout, '')
    assert.match(
      failed.stderr,
      /^optics-catalog: configuration error: AUTH_MODE: 'none' is allowed only on a loopback HOST/,
    )
    assert.equal(failed.stderr.trim().split('\n').length, 1)
  })
})

describe('configuration errors never print a secret', () => {
  test('URLs, secrets and keys are named with their value not shown', () => {
    const cases: [Record<string, string>, RegExp, string][] = [
      [{ DATABASE_URL: 'postgress://app:S3cretPassw0rd@db/x' }, /^DATABASE_URL: must be a postgres:\/\/ URL/, 'S3cret'],
      [{ DATABASE_READ_URL: 'mysql://app:S3cretPassw0rd@db/x' }, /^DATABASE_READ_URL: /, 'S3cret'],
      [{ AUTH_MODE: 'jwt', AUTH_JWT_SECRET: 'my-real-production-secret-31chr' }, /^AUTH_JWT_SECRET: /, 'production'],
      [{ AUTH_MODE: 'jwt', AUTH_JWKS_URL: 'ftp://u:S3cretPassw0rd@id/certs' }, /^AUTH_JWKS_URL: /, 'S3cret'],
    ]
    for (const [env, named, secret] of cases) {
      const message = refusal(env)
      assert.match(message, named)
      assert.match(message, /\(value not shown\)$/)
      assert.ok(!message.includes(secret), message)
    }
  })

  test('other values are still quoted, unless they hold a password', () => {
    assert.match(refusal({ LOG_LEVEL: 'loud' }), /^LOG_LEVEL: must be one of .* \(got 'loud'\)$/)
    assert.match(refusal({ AUTH_MAX_TOKEN_AGE: 'https://u:pw@x' }), /^AUTH_MAX_TOKEN_AGE: .*\(value not shown\)$/)
  })

  test('DATABASE_START_TIMEOUT_SECONDS: 30 by default, 0 allowed', () => {
    assert.equal(loadConfig({}).databaseStartTimeoutSeconds, 30)
    assert.equal(loadConfig({ DATABASE_START_TIMEOUT_SECONDS: '0' }).databaseStartTimeoutSeconds, 0)
    assert.match(refusal({ DATABASE_START_TIMEOUT_SECONDS: '-1' }), /^DATABASE_START_TIMEOUT_SECONDS: /)
  })

  test('redactSecrets hides URL passwords and the values of secret variables', () => {
    const env = { DATABASE_URL: 'postgres://app:S3cretPassw0rd@db/x', AUTH_JWT_SECRET: 'a'.repeat(40), HOST: 'db' }
    assert.equal(
      redactSecrets('connect to postgres://app:S3cretPassw0rd@db/x failed', env),
      'connect to postgres://app:***@db/x failed',
    )
    assert.equal(redactSecrets(`bad ${'a'.repeat(40)}`, env), 'bad <AUTH_JWT_SECRET>')
    assert.equal(redactSecrets('host db', env), 'host db')
  })
})

describe("the embedded database's buffer cache (EMBEDDED_SHARED_BUFFERS_MB)", () => {
  test('read in MiB, 16 by default; a bad value names its variable', () => {
    assert.equal(loadConfig({}).embeddedSharedBuffersMb, 16)
    assert.equal(loadConfig({ EMBEDDED_SHARED_BUFFERS_MB: '48' }).embeddedSharedBuffersMb, 48)
    for (const value of ['0', '1.5', '16MB', '4096']) {
      assert.match(refusal({ EMBEDDED_SHARED_BUFFERS_MB: value }), /^EMBEDDED_SHARED_BUFFERS_MB: /, value)
    }
  })

  test("the embedded database runs with it, and with PGlite's own start parameters", async () => {
    const config = loadConfig({ EMBEDDED_SHARED_BUFFERS_MB: '24' })
    const db = await openDatabase({ sharedBuffersMb: config.embeddedSharedBuffersMb })
    try {
      const [settings] = await db.rawTransaction((client) =>
        client.query<{ shared_buffers: string; search_path: string; max_worker_processes: string }>(
          `SELECT current_setting('shared_buffers') AS shared_buffers, current_setting('search_path') AS search_path,
                  current_setting('max_worker_processes') AS max_worker_processes`,
        ),
      )
      assert.deepEqual(settings, { shared_buffers: '24MB', search_path: 'public', max_worker_processes: '0' })
    } finally {
      await db.close()
    }
  })
})
