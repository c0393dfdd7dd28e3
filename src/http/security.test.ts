import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pricesPath } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'

/* Security headers, CORS and the per-client rate limit, as a browser or a client meets them (timeouts: request-timeout.test.ts). */

const FRONT_END = 'https://shop.optics.example'

eachDatabase('security headers', (ctx) => {
  const app = useTestApp(ctx)

  test('API answers, errors included, carry the security headers and a policy that allows nothing', async () => {
    for (const [method, url] of [
      ['GET', `${pricesPath}/list`],
      ['GET', `${pricesPath}/999`],
      ['GET', '/nowhere'],
    ] as const) {
      const response = await app().inject({ method, url })
      assert.equal(response.headers['x-content-type-options'], 'nosniff', url)
      assert.equal(response.headers['x-frame-options'], 'SAMEORIGIN', url)
      assert.equal(response.headers['referrer-policy'], 'no-referrer', url)
      assert.match(String(response.headers['strict-transport-security']), /max-age=\d+/, url)
      assert.equal(
        response.headers['content-security-policy'],
        "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        url,
      )
    }
  })

  test('the API documentation under /swagger-ui may load its own scripts, styles and the OpenAPI document', async () => {
    for (const url of ['/swagger-ui', '/swagger-ui/', '/swagger-ui/static/swagger-ui-bundle.js']) {
      const policy = String((await app().inject({ method: 'GET', url })).headers['content-security-policy'])
      assert.match(policy, /default-src 'self'/, url)
      assert.match(policy, /script-src 'self'(;|$)/, url)
      assert.match(policy, /style-src 'self' 'unsafe-inline'/, url)
      assert.match(policy, /connect-src 'self'/, url)
      assert.doesNotMatch(policy, /unsafe-eval/, url)
    }
    // Only that prefix: a look-alike path keeps the API's policy.
    const lookalike = await app().inject({ method: 'GET', url: '/swagger-uix' })
    assert.match(String(lookalike.headers['content-security-policy']), /^default-src 'none'/)
  })

  test('without CORS_ORIGINS no origin is allowed', async () => {
    const response = await app().inject({ method: 'GET', url: `${pricesPath}/list`, headers: { origin: FRONT_END } })
    assert.equal(response.headers['access-control-allow-origin'], undefined)
  })
})

eachDatabase('CORS', (ctx) => {
  const app = useTestApp(ctx, {
    env: { CORS_ORIGINS: `${FRONT_END}, https://admin.optics.example` },
  })

  test('a listed origin may read the answer and its ETag, change headers and request id', async () => {
    const response = await app().inject({ method: 'GET', url: `${pricesPath}/list`, headers: { origin: FRONT_END } })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers['access-control-allow-origin'], FRONT_END)
    const exposed = String(response.headers['access-control-expose-headers']).split(/,\s*/)
    for (const header of ['ETag', 'X-Changed-Count', 'X-Price-Change-Batch', 'X-Request-Id']) {
      assert.ok(exposed.includes(header), header)
    }
  })

  test('a preflight for a write with If-Match, Authorization and JSON is allowed', async () => {
    const response = await app().inject({
      method: 'OPTIONS',
      url: `${pricesPath}/12`,
      headers: {
        origin: FRONT_END,
        'access-control-request-method': 'PUT',
        'access-control-request-headers': 'authorization, content-type, if-match',
      },
    })
    assert.equal(response.statusCode, 204)
    assert.equal(response.headers['access-control-allow-origin'], FRONT_END)
    assert.match(String(response.headers['access-control-allow-methods']), /PUT/)
    assert.match(String(response.headers['access-control-allow-methods']), /DELETE/)
    const allowed = String(response.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)
    for (const header of ['if-match', 'authorization', 'content-type']) assert.ok(allowed.includes(header), header)
  })

  test("a preflight may ask for any request header, as Spring's @CrossOrigin allows", async () => {
    const asked = 'x-requested-with, cache-control, traceparent, sentry-trace, baggage, x-custom-thing'
    const response = await app().inject({
      method: 'OPTIONS',
      url: `${pricesPath}/list`,
      headers: { origin: FRONT_END, 'access-control-request-method': 'POST', 'access-control-request-headers': asked },
    })
    assert.equal(response.statusCode, 204)
    assert.equal(response.headers['access-control-allow-origin'], FRONT_END)
    const allowed = String(response.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/)
    for (const header of asked.split(', ')) assert.ok(allowed.includes(header), header)
    // The answer depends on the headers asked for, so caches keep one per set.
    assert.match(String(response.headers.vary), /access-control-request-headers/i)
    assert.equal(response.headers['access-control-allow-credentials'], undefined)
  })

  test('an origin not listed gets no CORS headers, so the browser keeps the answer from it', async () => {
    const response = await app().inject({
      method: 'GET',
      url: `${pricesPath}/list`,
      headers: { origin: 'https://evil.example' },
    })
    assert.equal(response.headers['access-control-allow-origin'], undefined)
  })

  test('an OPTIONS that is not a preflight still answers Allow', async () => {
    const response = await app().inject({ method: 'OPTIONS', url: '/api/v2/good/nomenclature/status' })
    assert.equal(response.statusCode, 200)
    assert.equal(response.headers.allow, 'GET, HEAD, OPTIONS')
  })
})

eachDatabase('CORS with authentication', (ctx) => {
  const app = useTestApp(ctx, {
    env: {
      CORS_ORIGINS: FRONT_END,
      AUTH_MODE: 'jwt',
      AUTH_JWT_SECRET: 'a-shared-secret-of-at-least-32-characters',
    },
  })

  test('a preflight needs no token, and a 401 is readable by the front end', async () => {
    const preflight = await app().inject({
      method: 'OPTIONS',
      url: `${pricesPath}/list`,
      headers: { origin: FRONT_END, 'access-control-request-method': 'POST' },
    })
    assert.equal(preflight.statusCode, 204)
    const refused = await app().inject({ method: 'GET', url: `${pricesPath}/list`, headers: { origin: FRONT_END } })
    assert.equal(refused.statusCode, 401)
    assert.equal(refused.headers['access-control-allow-origin'], FRONT_END)
  })
})

eachDatabase('rate limit', (ctx) => {
  const app = useTestApp(ctx, {
    env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '600000' },
  })

  const list = (remoteAddress: string) => app().inject({ method: 'GET', url: `${pricesPath}/list`, remoteAddress })

  test('a client over RATE_LIMIT_MAX in the window gets a 429 with Retry-After; another client does not', async () => {
    for (let i = 0; i < 3; i++) {
      const response = await list('192.0.2.10')
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['x-ratelimit-remaining'], String(2 - i))
    }
    const limited = await list('192.0.2.10')
    assert.equal(limited.statusCode, 429)
    assert.match(String(limited.headers['content-type']), /^application\/problem\+json/)
    const body = limited.json()
    assert.equal(body.status, 429)
    assert.match(body.detail, /at most 3 per 600 s/)
    assert.ok(Number(limited.headers['retry-after']) > 0)
    // Unknown paths count too, and stay refused.
    assert.equal((await app().inject({ method: 'GET', url: '/nowhere', remoteAddress: '192.0.2.10' })).statusCode, 429)

    assert.equal((await list('192.0.2.11')).statusCode, 200)
  })

  test('probes are never limited', async () => {
    for (let i = 0; i < 6; i++) {
      const health = await app().inject({ method: 'GET', url: '/actuator/health', remoteAddress: '192.0.2.20' })
      assert.equal(health.statusCode, 200)
    }
  })
})

eachDatabase('rate limit behind a trusted proxy', (ctx) => {
  const app = useTestApp(ctx, {
    env: { RATE_LIMIT_MAX: '2', TRUST_PROXY: '10.0.0.0/8' },
  })

  const list = (forwardedFor: string, remoteAddress = '10.0.0.5') =>
    app().inject({
      method: 'GET',
      url: `${pricesPath}/list`,
      remoteAddress,
      headers: { 'x-forwarded-for': forwardedFor },
    })

  test('clients are told apart by X-Forwarded-For when the proxy is trusted, and only then', async () => {
    assert.equal((await list('203.0.113.1')).statusCode, 200)
    assert.equal((await list('203.0.113.1')).statusCode, 200)
    assert.equal((await list('203.0.113.1')).statusCode, 429)
    assert.equal((await list('203.0.113.2')).statusCode, 200)
    // An untrusted peer cannot pick its identity with the header.
    assert.equal((await list('203.0.113.3', '198.51.100.9')).statusCode, 200)
    assert.equal((await list('203.0.113.4', '198.51.100.9')).statusCode, 200)
    assert.equal((await list('203.0.113.5', '198.51.100.9')).statusCode, 429)
  })
})

eachDatabase('rate limit off', (ctx) => {
  const app = useTestApp(ctx)

  test('with RATE_LIMIT_MAX=0 (the default) nothing is counted', async () => {
    for (let i = 0; i < 5; i++) {
      const response = await app().inject({ method: 'GET', url: `${pricesPath}/list` })
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['x-ratelimit-limit'], undefined)
    }
  })
})
