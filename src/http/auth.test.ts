import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, beforeEach, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { type CryptoKey, exportJWK, generateKeyPair, type JWTPayload, SignJWT, UnsecuredJWT } from 'jose'
import { clearGlassPrices, pricesPath, seedEntries, storedEntries } from '../../test/fixtures/glass-prices.js'
import { buildTestApp, eachDatabase, useTestApp } from '../../test/harness.js'

/*
 * Bearer-token authentication: tokens this test signs with the shared secret (HS256), and tokens signed by keys
 * of a JWKS this test serves on loopback, as an OIDC provider would.
 */

const SECRET = 'a-shared-secret-of-at-least-32-characters'
const ISSUER = 'https://id.optics.example/realms/shops'
const AUDIENCE = 'optics-catalog'
const entry = { manufacturer: 'Safilo', brand: 'Carrera', model: 'CARRERA 8862', price: 11990, purchase: 4800 }

const now = () => Math.floor(Date.now() / 1000)

interface TokenOptions {
  readonly secret?: string
  /** Default: now; null: no `iat`. */
  readonly issuedAt?: number | null
  readonly expiresAt?: number | null
  readonly issuer?: string
  readonly audience?: string
}

/** An HS256 token with the given claims, valid for five minutes unless told otherwise. */
async function hsToken(claims: JWTPayload, options: TokenOptions = {}): Promise<string> {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' })
  if (options.issuedAt !== null) jwt.setIssuedAt(options.issuedAt ?? now())
  if (options.expiresAt !== null) jwt.setExpirationTime(options.expiresAt ?? now() + 300)
  if (options.issuer) jwt.setIssuer(options.issuer)
  if (options.audience) jwt.setAudience(options.audience)
  return jwt.sign(new TextEncoder().encode(options.secret ?? SECRET))
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

function assertProblem(response: LightMyRequestResponse, status: number): Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body)
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
  const body = response.json() as Record<string, unknown>
  assert.equal(body.status, status)
  return body
}

/** Asserts a 401 whose challenge is a Bearer challenge (with `error` when a token was sent). */
function assertUnauthorized(response: LightMyRequestResponse, error?: string, description?: RegExp): void {
  const body = assertProblem(response, 401)
  const challenge = String(response.headers['www-authenticate'])
  assert.match(challenge, /^Bearer realm="optics-catalog"/)
  if (error) assert.match(challenge, new RegExp(`error="${error}"`))
  else assert.doesNotMatch(challenge, /error=/)
  if (description) assert.match(String(body.detail), description)
}

eachDatabase('authentication with an HS256 secret', (ctx) => {
  const app = useTestApp(ctx, {
    env: { AUTH_MODE: 'jwt', AUTH_JWT_SECRET: SECRET },
    beforeEach: () => clearGlassPrices(ctx.db),
  })

  const list = (headers: Record<string, string> = {}) =>
    app().inject({ method: 'GET', url: `${pricesPath}/list`, headers })
  const create = (headers: Record<string, string>, body: Record<string, unknown> = entry) =>
    app().inject({ method: 'POST', url: pricesPath, headers, payload: body })

  describe('who may call', () => {
    test('an API call without a token is a 401 with a Bearer challenge', async () => {
      assertUnauthorized(await list(), undefined, /Bearer token/)
      assertUnauthorized(await list({ authorization: 'Basic dXNlcjpwYXNz' }))
      assertUnauthorized(await list({ authorization: 'Bearer' }))
      // Unknown API paths answer the same, so they reveal nothing without a token.
      assertUnauthorized(await app().inject({ method: 'GET', url: '/api/v2/unknown' }))
    })

    test('a valid token reads; the scheme name is case-insensitive', async () => {
      const token = await hsToken({ sub: 'u-1' })
      assert.equal((await list(bearer(token))).statusCode, 200)
      assert.equal((await list({ authorization: `bearer ${token}` })).statusCode, 200)
    })

    test('a token signed with another secret, altered, unsigned or garbage is a 401 invalid_token', async () => {
      const other = await hsToken({ sub: 'u-1' }, { secret: 'another-secret-of-at-least-32-characters!' })
      assertUnauthorized(await list(bearer(other)), 'invalid_token', /signature/)
      const valid = await hsToken({ sub: 'u-1', roles: [] })
      const [header, , signature] = valid.split('.')
      const forgedPayload = Buffer.from(JSON.stringify({ sub: 'u-1', roles: ['prices:write'], exp: now() + 300 }))
      const forged = `${header}.${forgedPayload.toString('base64url')}.${signature}`
      assertUnauthorized(await create(bearer(forged)), 'invalid_token')
      const unsigned = new UnsecuredJWT({ sub: 'u-1', roles: ['prices:write'] }).setExpirationTime('5m').encode()
      assertUnauthorized(await create(bearer(unsigned)), 'invalid_token')
      assertUnauthorized(await list(bearer('not-a-token')), 'invalid_token')
      assert.deepEqual(await storedEntries(ctx.db), [])
    })

    test('an expired token is a 401 saying so; a token without an expiry is refused', async () => {
      const expired = await hsToken({ sub: 'u-1' }, { expiresAt: now() - 120 })
      assertUnauthorized(await list(bearer(expired)), 'invalid_token', /expired/)
      const endless = await hsToken({ sub: 'u-1' }, { expiresAt: null })
      assertUnauthorized(await list(bearer(endless)), 'invalid_token', /exp/)
    })

    test('a token older than AUTH_MAX_TOKEN_AGE (24 h) is refused though unexpired', async () => {
      const old = await hsToken({ sub: 'u-1' }, { issuedAt: now() - 25 * 3600, expiresAt: now() + 300 })
      assertUnauthorized(await list(bearer(old)), 'invalid_token', /older than the maximum token age/)
      const dayOld = await hsToken({ sub: 'u-1' }, { issuedAt: now() - 23 * 3600, expiresAt: now() + 300 })
      assert.equal((await list(bearer(dayOld))).statusCode, 200)
    })

    test('a token valid for 100 years, or with no iat, is refused', async () => {
      const century = await hsToken({ sub: 'u-1' }, { expiresAt: now() + 100 * 365 * 86_400 })
      assertUnauthorized(await list(bearer(century)), 'invalid_token', /lives longer than the maximum token age/)
      const undated = await hsToken({ sub: 'u-1' }, { issuedAt: null })
      assertUnauthorized(await list(bearer(undated)), 'invalid_token', /iat/)
    })

    test('a token issued a year ahead is refused; a few seconds ahead is clock skew', async () => {
      const ahead = now() + 365 * 86_400
      const future = await hsToken({ sub: 'u-1' }, { issuedAt: ahead, expiresAt: ahead + 300 })
      assertUnauthorized(await list(bearer(future)), 'invalid_token', /issued in the future/)
      const skewed = await hsToken({ sub: 'u-1' }, { issuedAt: now() + 20 })
      assert.equal((await list(bearer(skewed))).statusCode, 200)
    })

    test('a token that names no user is refused', async () => {
      assertUnauthorized(
        await list(bearer(await hsToken({ roles: ['prices:write'] }))),
        'invalid_token',
        /names no user/,
      )
    })

    test('probes, metrics and the API documentation need no token', async () => {
      for (const url of ['/actuator/health', '/actuator/info', '/actuator/prometheus', '/actuator/metrics']) {
        assert.equal((await app().inject({ method: 'GET', url })).statusCode, 200, url)
      }
      for (const url of ['/v3/api-docs', '/swagger-ui', '/swagger-ui/index.html']) {
        assert.notEqual((await app().inject({ method: 'GET', url })).statusCode, 401, url)
      }
    })
  })

  describe('the log levels need the role prices:write', () => {
    const setLevel = (headers: Record<string, string>, configuredLevel: string | null) =>
      app().inject({ method: 'POST', url: '/actuator/loggers/ROOT', headers, payload: { configuredLevel } })

    test('without a token, reading or changing them is a 401, and the level stays', async () => {
      assertUnauthorized(await app().inject({ url: '/actuator/loggers' }))
      assertUnauthorized(await app().inject({ url: '/actuator/loggers/ROOT' }))
      assertUnauthorized(await setLevel({}, 'TRACE'))
      const admin = bearer(await hsToken({ sub: 'admin', roles: ['prices:write'] }))
      const root = await app().inject({ url: '/actuator/loggers/ROOT', headers: admin })
      assert.notEqual(root.json().configuredLevel, 'TRACE')
    })

    test('a token without the role is a 403 insufficient_scope naming it, and the level stays', async () => {
      const reader = bearer(await hsToken({ preferred_username: 'optician', roles: ['prices:read'] }))
      for (const response of [
        await app().inject({ url: '/actuator/loggers', headers: reader }),
        await setLevel(reader, 'TRACE'),
      ]) {
        const body = assertProblem(response, 403)
        assert.match(String(body.detail), /log levels needs the role prices:write, which optician/)
        assert.match(String(response.headers['www-authenticate']), /error="insufficient_scope", scope="prices:write"/)
      }
      const admin = bearer(await hsToken({ sub: 'admin', roles: ['prices:write'] }))
      assert.notEqual(
        (await app().inject({ url: '/actuator/loggers/ROOT', headers: admin })).json().configuredLevel,
        'TRACE',
      )
    })

    test('with the role, the level is read and changed', async () => {
      const admin = bearer(await hsToken({ sub: 'admin', scope: 'openid prices:write' }))
      assert.equal((await setLevel(admin, 'WARN')).statusCode, 204)
      const root = await app().inject({ url: '/actuator/loggers/ROOT', headers: admin })
      assert.deepEqual(root.json(), { configuredLevel: 'WARN', effectiveLevel: 'WARN' })
      assert.equal((await setLevel(admin, null)).statusCode, 204)
      assert.equal(
        (await app().inject({ url: '/actuator/loggers/ROOT', headers: admin })).json().configuredLevel,
        'OFF',
      )
    })
  })

  describe('writes need the role prices:write', () => {
    test('a write without the role is a 403 insufficient_scope, and nothing is written', async () => {
      const token = await hsToken({ preferred_username: 'viewer', roles: ['prices:read'], scope: 'openid profile' })
      const response = await create(bearer(token))
      const body = assertProblem(response, 403)
      assert.match(String(body.detail), /prices:write/)
      assert.match(String(response.headers['www-authenticate']), /error="insufficient_scope", scope="prices:write"/)
      assert.deepEqual(await storedEntries(ctx.db), [])

      const [id] = await seedEntries(ctx.db, [entry])
      for (const [method, url, payload] of [
        ['PUT', `${pricesPath}/${id}`, entry],
        ['DELETE', `${pricesPath}/${id}`, undefined],
        ['POST', `${pricesPath}/list`, { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', round: 'TENS' }],
        ['POST', `${pricesPath}/changes/1/revert`, undefined],
      ] as const) {
        const denied = await app().inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) })
        assertProblem(denied, 403)
      }
      assert.equal((await storedEntries(ctx.db))[0]?.price, '11990.00')
      // Reads stay open to the same caller.
      assert.equal((await list(bearer(token))).statusCode, 200)
    })

    test('a reader may dry-run the bulk change and the upload, which write nothing; anything else stays a 403', async () => {
      const reader = bearer(await hsToken({ preferred_username: 'viewer', roles: ['prices:read'] }))
      const [id] = await seedEntries(ctx.db, [entry])
      const bulk = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 2, round: 'TENS' }
      const post = (url: string, payload: string | Record<string, unknown>, type = 'application/json') =>
        app().inject({ method: 'POST', url, headers: { ...reader, 'content-type': type }, payload })
      for (const dryRun of ['true', 'TRUE', ' yes ', '1']) {
        const preview = await post(`${pricesPath}/list?dryRun=${encodeURIComponent(dryRun)}`, bulk)
        assert.equal(preview.statusCode, 200, preview.body)
        assert.deepEqual([preview.json().selectedCount, preview.json().changes[0].newValue], [1, 23980])
      }
      const csv = 'manufacturer,brand,model,price,purchase\nA,B,C,1,1\n'
      const checked = await post(`${pricesPath}/import?mode=upsert&dryRun=true`, csv, 'text/csv')
      assert.equal(checked.statusCode, 200, checked.body)
      assert.deepEqual([checked.json().dryRun, checked.json().created], [true, 1])
      // Not a dry run as the route reads one (false, a repeated parameter's first value false, another word, another
      // name), or a route without one: the role is needed.
      for (const url of [
        `${pricesPath}/list`,
        `${pricesPath}/list?dryRun=false`,
        `${pricesPath}/list?dryRun=false&dryRun=true`,
        `${pricesPath}/list?dryRun=sure`,
        `${pricesPath}/list?dryrun=true`,
      ]) {
        assertProblem(await post(url, bulk), 403)
      }
      assertProblem(await post(`${pricesPath}/import?mode=upsert`, csv, 'text/csv'), 403)
      const put = await app().inject({
        method: 'PUT',
        url: `${pricesPath}/${id}?dryRun=true`,
        headers: reader,
        payload: { ...entry, price: 1 },
      })
      assertProblem(put, 403)
      const stored = await storedEntries(ctx.db)
      assert.deepEqual(
        stored.map((row) => [row.model, row.price]),
        [[entry.model, '11990.00']],
      )
    })

    const grants: [string, JWTPayload][] = [
      ['roles', { roles: ['prices:read', 'prices:write'] }],
      ['realm_access.roles (Keycloak)', { realm_access: { roles: ['offline_access', 'prices:write'] } }],
      ['scope', { scope: 'openid profile prices:write' }],
    ]
    for (const [claim, grant] of grants) {
      test(`the role in ${claim} allows writes`, async () => {
        const response = await create(bearer(await hsToken({ sub: 'u-7', ...grant })))
        assert.equal(response.statusCode, 200, response.body)
        assert.equal((await storedEntries(ctx.db)).length, 1)
      })
    }
  })

  describe('roles are read strictly', () => {
    const lenient: [string, JWTPayload][] = [
      ['roles as a string', { roles: 'prices:write' }],
      ['a scope inside a roles string', { roles: 'x prices:write' }],
      ['nested arrays', { roles: [['prices:write']] }],
      ['a trailing tab', { roles: ['prices:write\t'] }],
      ['surrounding spaces', { realm_access: { roles: [' prices:write '] } }],
      ['realm roles as a string', { realm_access: { roles: 'prices:write' } }],
      ['a scope separated by a tab', { scope: 'openid\tprices:write' }],
      ['a scope as an array', { scope: ['prices:write'] }],
      ['another case', { roles: ['PRICES:WRITE'] }],
    ]
    for (const [what, claims] of lenient) {
      test(`${what} grants no write`, async () => {
        const response = await create(bearer(await hsToken({ sub: 'u-9', ...claims })))
        assertProblem(response, 403)
        assert.deepEqual(await storedEntries(ctx.db), [])
      })
    }
  })

  describe('the user of a price change is the token’s name', () => {
    const names: [string, JWTPayload, string][] = [
      [
        'preferred_username',
        { preferred_username: 'anna.petrova', name: 'Anna Petrova', sub: 'f81d4fae' },
        'anna.petrova',
      ],
      ['name', { name: 'Anna Petrova', sub: 'f81d4fae' }, 'Anna Petrova'],
      ['sub', { sub: 'f81d4fae' }, 'f81d4fae'],
    ]
    for (const [claim, claims, user] of names) {
      test(`from ${claim} when it is the first present`, async () => {
        const token = await hsToken({ ...claims, roles: ['prices:write'] })
        const created = await create(bearer(token))
        assert.equal(created.statusCode, 200, created.body)
        const stored = await storedEntries(ctx.db)
        assert.equal(stored[0]?.updated_by, user)
        assert.equal((await list(bearer(token))).json().content[0].user, user)
        const changes = await app().inject({ method: 'GET', url: `${pricesPath}/changes`, headers: bearer(token) })
        assert.equal(changes.json().content[0].user, user)
      })
    }

    test('a bulk change records the caller too', async () => {
      await seedEntries(ctx.db, [entry])
      const token = await hsToken({ preferred_username: 'price.manager', roles: ['prices:write'] })
      const response = await app().inject({
        method: 'POST',
        url: `${pricesPath}/list`,
        headers: bearer(token),
        payload: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.1, round: 'TENS' },
      })
      assert.equal(response.statusCode, 200, response.body)
      assert.equal((await storedEntries(ctx.db))[0]?.updated_by, 'price.manager')
    })
  })
})

eachDatabase('authentication with issuer and audience', (ctx) => {
  const app = useTestApp(ctx, {
    env: {
      AUTH_MODE: 'jwt',
      AUTH_JWT_SECRET: SECRET,
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
    },
  })

  const list = async (options: TokenOptions) =>
    app().inject({ method: 'GET', url: `${pricesPath}/list`, headers: bearer(await hsToken({ sub: 'u-1' }, options)) })

  test('a token from the issuer for the audience is accepted', async () => {
    assert.equal((await list({ issuer: ISSUER, audience: AUDIENCE })).statusCode, 200)
  })

  test('another issuer, another audience, or neither is a 401 invalid_token', async () => {
    assertUnauthorized(await list({ issuer: 'https://evil.example', audience: AUDIENCE }), 'invalid_token', /issuer/)
    assertUnauthorized(await list({ issuer: ISSUER, audience: 'another-service' }), 'invalid_token', /audience/)
    assertUnauthorized(await list({ audience: AUDIENCE }), 'invalid_token')
    assertUnauthorized(await list({ issuer: ISSUER }), 'invalid_token')
  })
})

/** A JWKS endpoint on loopback, as an OIDC provider serves it; counts its requests. */
async function serveJwks(keys: object[]): Promise<{ url: string; requests: () => number; server: Server }> {
  let requests = 0
  const server = createServer((request, response) => {
    requests++
    if (request.url !== '/realms/shops/protocol/openid-connect/certs') {
      response.writeHead(404).end()
      return
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys }))
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/realms/shops/protocol/openid-connect/certs`,
    requests: () => requests,
    server,
  }
}

eachDatabase('authentication with an OIDC provider’s JWKS', (ctx) => {
  let jwks: Awaited<ReturnType<typeof serveJwks>>
  let es256: Awaited<ReturnType<typeof generateKeyPair>>
  let rs256: Awaited<ReturnType<typeof generateKeyPair>>
  let stranger: Awaited<ReturnType<typeof generateKeyPair>>

  // The provider's keys are served first: the app's configuration names their address.
  const app = useTestApp(ctx, {
    setup: async () => {
      es256 = await generateKeyPair('ES256')
      rs256 = await generateKeyPair('RS256')
      stranger = await generateKeyPair('ES256')
      jwks = await serveJwks([
        { ...(await exportJWK(es256.publicKey)), kid: 'ec-1', alg: 'ES256', use: 'sig' },
        { ...(await exportJWK(rs256.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig' },
      ])
    },
    env: () => ({ AUTH_MODE: 'jwt', AUTH_JWKS_URL: jwks.url, AUTH_ISSUER: ISSUER }),
  })
  after(() => jwks?.server.close())
  beforeEach(() => clearGlassPrices(ctx.db))

  const sign = (claims: JWTPayload, key: CryptoKey, alg: string, kid: string) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg, kid })
      .setIssuer(ISSUER)
      .setIssuedAt()
      .setExpirationTime(now() + 300)
      .sign(key)

  test('tokens signed by either key of the JWKS are accepted, and the keys are fetched once', async () => {
    const ec = await sign(
      { preferred_username: 'anna', realm_access: { roles: ['prices:write'] } },
      es256.privateKey,
      'ES256',
      'ec-1',
    )
    const created = await app().inject({ method: 'POST', url: pricesPath, headers: bearer(ec), payload: entry })
    assert.equal(created.statusCode, 200, created.body)
    assert.equal((await storedEntries(ctx.db))[0]?.updated_by, 'anna')
    const rsa = await sign({ sub: 'svc-report' }, rs256.privateKey, 'RS256', 'rsa-1')
    for (let i = 0; i < 3; i++) {
      const listed = await app().inject({ method: 'GET', url: `${pricesPath}/list`, headers: bearer(rsa) })
      assert.equal(listed.statusCode, 200, listed.body)
    }
    assert.equal(jwks.requests(), 1)
  })

  test('a token signed by a key the provider does not publish is a 401', async () => {
    const token = await sign({ sub: 'intruder', roles: ['prices:write'] }, stranger.privateKey, 'ES256', 'ec-1')
    assertUnauthorized(
      await app().inject({ method: 'POST', url: pricesPath, headers: bearer(token), payload: entry }),
      'invalid_token',
    )
    const unknownKid = await sign({ sub: 'intruder' }, stranger.privateKey, 'ES256', 'ec-unknown')
    assertUnauthorized(
      await app().inject({ method: 'GET', url: `${pricesPath}/list`, headers: bearer(unknownKid) }),
      'invalid_token',
    )
    assert.deepEqual(await storedEntries(ctx.db), [])
  })

  test('an HS256 token is refused when the keys come from a JWKS', async () => {
    const token = await hsToken({ sub: 'u-1', roles: ['prices:write'] }, { issuer: ISSUER })
    assertUnauthorized(
      await app().inject({ method: 'GET', url: `${pricesPath}/list`, headers: bearer(token) }),
      'invalid_token',
    )
  })

  test('a provider whose keys cannot be fetched makes API calls a 503, not a 401 or 500', async () => {
    const down = await serveJwks([])
    const url = down.url
    down.server.close()
    await once(down.server, 'close')
    const unreachable = await buildTestApp(ctx.db, { AUTH_MODE: 'jwt', AUTH_JWKS_URL: url })
    try {
      const token = await sign({ sub: 'anna' }, es256.privateKey, 'ES256', 'ec-1')
      const response = await unreachable.inject({ method: 'GET', url: `${pricesPath}/list`, headers: bearer(token) })
      assertProblem(response, 503)
      assert.equal(response.headers['retry-after'], '5')
    } finally {
      await unreachable.close()
    }
  })
})

eachDatabase('authentication with the read role, actuator tokens and a 1 h token age', (ctx) => {
  let id: number
  const app = useTestApp(ctx, {
    env: {
      AUTH_MODE: 'jwt',
      AUTH_JWT_SECRET: SECRET,
      AUTH_PRICES_READ: 'on',
      ACTUATOR_AUTH: 'true',
      AUTH_MAX_TOKEN_AGE: '1h',
    },
    setup: async () => {
      await clearGlassPrices(ctx.db)
      ;[id = 0] = await seedEntries(ctx.db, [entry])
    },
  })

  const readsOfPurchasePrices = () => [
    `${pricesPath}/list`,
    `${pricesPath}/${id}`,
    `${pricesPath}/${id}/history`,
    `${pricesPath}/changes`,
    `${pricesPath}/export`,
  ]
  const get = (url: string, token?: string) =>
    app().inject({ method: 'GET', url, headers: token === undefined ? {} : bearer(token) })

  test('purchase prices and the history need prices:read; the nomenclature search does not', async () => {
    const optician = await hsToken({ preferred_username: 'optician', roles: ['catalog:read'] })
    for (const url of readsOfPurchasePrices()) {
      const response = await get(url, optician)
      const body = assertProblem(response, 403)
      assert.match(String(body.detail), /prices:read/, url)
      assert.match(String(response.headers['www-authenticate']), /error="insufficient_scope", scope="prices:read"/)
    }
    const search = await app().inject({
      method: 'POST',
      url: '/api/v2/good/nomenclature/search/glasses',
      headers: bearer(optician),
      payload: { byPriceList: true },
    })
    assert.equal(search.statusCode, 200, search.body)
  })

  test('a dry run of the bulk change or the upload shows purchase prices: it needs prices:read', async () => {
    const optician = bearer(await hsToken({ preferred_username: 'optician', roles: ['catalog:read'] }))
    const preview = await app().inject({
      method: 'POST',
      url: `${pricesPath}/list?dryRun=true`,
      headers: optician,
      payload: { priceTypeBase: 'PURCHASE', priceTypeChange: 'RETAIL', round: 'TENS' },
    })
    assertProblem(preview, 403)
    assert.match(String(preview.headers['www-authenticate']), /scope="prices:read"/)
    const checked = await app().inject({
      method: 'POST',
      url: `${pricesPath}/import?dryRun=true`,
      headers: { ...optician, 'content-type': 'text/csv' },
      payload: 'manufacturer,brand,model,price,purchase\nA,B,C,1,1\n',
    })
    assertProblem(checked, 403)
    assert.match(String(checked.headers['www-authenticate']), /scope="prices:read"/)
  })

  test('prices:read (in roles or scope) or prices:write reads them', async () => {
    for (const claims of [{ roles: ['prices:read'] }, { scope: 'openid prices:read' }, { roles: ['prices:write'] }]) {
      const token = await hsToken({ sub: 'manager', ...claims })
      for (const url of readsOfPurchasePrices()) {
        assert.equal((await get(url, token)).statusCode, 200, `${url} with ${JSON.stringify(claims)}`)
      }
    }
    const listed = await get(`${pricesPath}/list`, await hsToken({ sub: 'm', roles: ['prices:read'] }))
    assert.equal(listed.json().content[0].purchase, 4800)
  })

  test('metrics and info need a token with ACTUATOR_AUTH; health probes stay open', async () => {
    for (const url of [
      '/actuator/prometheus',
      '/actuator/metrics',
      '/actuator/metrics/http.server.requests',
      '/actuator/info',
    ]) {
      assertUnauthorized(await get(url))
      assert.equal((await get(url, await hsToken({ sub: 'prometheus' }))).statusCode, 200, url)
    }
    for (const url of ['/actuator/health', '/actuator/health/liveness', '/actuator/health/readiness']) {
      assert.notEqual((await get(url)).statusCode, 401, url)
    }
  })

  test('AUTH_MAX_TOKEN_AGE=1h refuses a token issued two hours ago, and one living a day', async () => {
    const reader = { sub: 'm', roles: ['prices:read'] }
    const old = await hsToken(reader, { issuedAt: now() - 2 * 3600, expiresAt: now() + 60 })
    assertUnauthorized(await get(`${pricesPath}/list`, old), 'invalid_token', /older than the maximum token age/)
    const long = await hsToken(reader, { expiresAt: now() + 86_400 })
    assertUnauthorized(await get(`${pricesPath}/list`, long), 'invalid_token', /lives longer/)
  })
})
