import assert from 'node:assert/strict'
import { once } from 'node:events'
import { connect } from 'node:net'
import { Writable } from 'node:stream'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { clearGlassPrices, pricesPath, seedEntries, storedEntries } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, testConfig, useTestApp } from '../../test/harness.js'
import { buildApp } from '../app.js'
import { PROBLEM_CODES, type ProblemCode } from './problem-types.js'
import { requestSignal } from './request-timeout.js'
import { routesOf } from './route-table.js'

/* Every error is RFC 9457 problem details, whatever raised it: routes, the router, the body parser, the database. */

const searchPath = '/api/v2/good/nomenclature/search'
const entry = { manufacturer: 'Safilo', brand: 'Carrera', model: 'CARRERA 8862', price: 11990, purchase: 4800 }

/**
 * Asserts a problem response of `status` (and of the kind `code`, when given) in both shapes — RFC 9457 and
 * Spring Boot's default error body — and returns its body.
 */
function problemOf(response: LightMyRequestResponse, status: number, code?: ProblemCode): Record<string, unknown> {
  assert.equal(response.statusCode, status, response.body)
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
  const body = response.json() as Record<string, unknown>
  assert.equal(body.status, status)
  for (const key of ['title', 'detail', 'instance']) assert.equal(typeof body[key], 'string', key)
  assert.ok(PROBLEM_CODES.includes(body.code as ProblemCode), String(body.code))
  if (code) assert.equal(body.code, code)
  assert.equal(body.type, `urn:optics-catalog:problem:${body.code}`)
  assert.equal(body.error, body.title)
  assert.equal(body.message, body.detail)
  assert.equal(body.path, body.instance)
  assert.ok(Math.abs(Date.parse(String(body.timestamp)) - Date.now()) < 60_000, String(body.timestamp))
  assert.match(String(body.timestamp), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/)
  return body
}

const fieldsOf = (body: Record<string, unknown>) => ((body.errors ?? []) as { field: string }[]).map((e) => e.field)

eachDatabase('errors as problem details', (ctx) => {
  const app = useTestApp(ctx, {
    env: { BODY_LIMIT: '4096' },
    beforeEach: () => clearGlassPrices(ctx.db),
  })

  describe('unknown paths and methods', () => {
    test('an unknown path is a 404 naming it', async () => {
      const body = problemOf(await app().inject({ method: 'GET', url: '/api/v2/nothing?x=1' }), 404, 'not-found')
      assert.equal(body.instance, '/api/v2/nothing')
      assert.equal(body.title, 'Not Found')
      problemOf(await app().inject({ method: 'POST', url: '/elsewhere', payload: {} }), 404)
    })

    test('a known path with another method is a 405 whose Allow lists the methods of that path', async () => {
      const patch = await app().inject({ method: 'PATCH', url: `${pricesPath}/1`, payload: {} })
      problemOf(patch, 405, 'method-not-allowed')
      assert.equal(patch.headers.allow, 'GET, HEAD, PUT, DELETE, OPTIONS')

      const getSearch = await app().inject({ method: 'GET', url: `${searchPath}/lenses` })
      assert.match(String(problemOf(getSearch, 405).detail), /GET is not supported/)
      assert.equal(getSearch.headers.allow, 'POST, OPTIONS')

      const putStatus = await app().inject({ method: 'PUT', url: '/api/v2/good/nomenclature/status', payload: {} })
      problemOf(putStatus, 405)
      assert.equal(putStatus.headers.allow, 'GET, HEAD, OPTIONS')

      // `DELETE …/list` is `DELETE …/{id}` with the id "list", as Spring routes it: a 400, not a 405.
      const deleteList = await app().inject({ method: 'DELETE', url: `${pricesPath}/list` })
      assert.deepEqual(fieldsOf(problemOf(deleteList, 400)), ['id'])
    })

    test('a trailing slash is another path (404), as Spring 6 matches', async () => {
      problemOf(await app().inject({ method: 'GET', url: `${pricesPath}/1/` }), 404)
    })

    test('OPTIONS answers the methods of a known path with Allow, and 404 for an unknown one', async () => {
      const known = await app().inject({ method: 'OPTIONS', url: `${pricesPath}/7/history` })
      assert.equal(known.statusCode, 200)
      assert.equal(known.headers.allow, 'GET, HEAD, OPTIONS')
      problemOf(await app().inject({ method: 'OPTIONS', url: '/api/v2/nothing' }), 404)
    })

    test('HEAD answers wherever GET does, without a body', async () => {
      const head = await app().inject({ method: 'HEAD', url: `${pricesPath}/list` })
      assert.equal(head.statusCode, 200)
      assert.equal(head.body, '')
    })

    test('every API route documents the problems answered before it: 401, 429, 403 on writes and price reads, 413/415 with a body', () => {
      const api = routesOf(app()).filter((route) => route.url.startsWith('/api/'))
      assert.ok(api.length >= 15)
      for (const route of api) {
        const documented = Object.keys((route.options.schema?.response ?? {}) as object)
        const name = `${route.method} ${route.url}`
        for (const status of ['401', '429']) assert.ok(documented.includes(status), `${name} ${status}`)
        const roles = route.options.config?.writesCatalog === true || route.options.config?.readsPurchasePrices === true
        assert.equal(documented.includes('403'), roles, `${name} 403`)
        const readsBody = route.options.schema?.body !== undefined
        for (const status of ['413', '415']) assert.equal(documented.includes(status), readsBody, `${name} ${status}`)
      }
    })

    test('a URL that does not percent-decode is a 400', async () => {
      const body = problemOf(
        await app().inject({ method: 'GET', url: `${pricesPath}/%E0%A4%A` }),
        400,
        'malformed-request',
      )
      assert.match(String(body.detail), /percent-encoded/)
    })
  })

  describe('request bodies', () => {
    test('a body that is not JSON by its Content-Type is a 415 with Accept, and nothing is written', async () => {
      for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
        const response = await app().inject({
          method: 'POST',
          url: pricesPath,
          headers: { 'content-type': type },
          payload: JSON.stringify(entry),
        })
        problemOf(response, 415, 'unsupported-media-type')
        assert.equal(response.headers.accept, 'application/json')
      }
      assert.deepEqual(await storedEntries(ctx.db), [])
    })

    test('a body without a Content-Type is a 415', async () => {
      const response = await app().inject({ method: 'POST', url: pricesPath, payload: JSON.stringify(entry) })
      assert.match(String(problemOf(response, 415).detail), /Content-Type: application\/json/)
      assert.deepEqual(await storedEntries(ctx.db), [])
    })

    test('application/*+json and a charset are read as JSON', async () => {
      for (const type of ['application/json; charset=utf-8', 'application/vnd.optics+json']) {
        const response = await app().inject({
          method: 'POST',
          url: `${searchPath}/glasses`,
          headers: { 'content-type': type },
          payload: '{"byPriceList": true}',
        })
        assert.equal(response.statusCode, 200, `${type}: ${response.body}`)
      }
    })

    test('a route that takes a body answers 400 without one, naming the body', async () => {
      const response = await app().inject({ method: 'POST', url: `${searchPath}/lenses` })
      const body = problemOf(response, 400)
      assert.deepEqual(body.errors, [{ field: '(body)', message: 'is required' }])
    })

    test('DELETE and revert take no body and work without a Content-Type, or with JSON and nothing in it', async () => {
      const [id] = await seedEntries(ctx.db, [entry])
      const deleted = await app().inject({ method: 'DELETE', url: `${pricesPath}/${id}` })
      assert.equal(deleted.statusCode, 200, deleted.body)
      const batch = (await app().inject({ method: 'GET', url: `${pricesPath}/changes` })).json().content[0].id
      const reverted = await app().inject({
        method: 'POST',
        url: `${pricesPath}/changes/${batch}/revert`,
        headers: { 'content-type': 'application/json' },
      })
      assert.equal(reverted.statusCode, 200, reverted.body)
      assert.equal((await storedEntries(ctx.db)).length, 1)
      const again = await app().inject({ method: 'POST', url: `${pricesPath}/changes/${reverted.json().batch}/revert` })
      assert.equal(again.statusCode, 200, again.body)
      assert.deepEqual(await storedEntries(ctx.db), [])
    })

    test('a body over BODY_LIMIT is a 413 naming the limit, and nothing is written', async () => {
      const response = await app().inject({
        method: 'POST',
        url: pricesPath,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ ...entry, model: 'M'.repeat(5000) }),
      })
      assert.match(String(problemOf(response, 413, 'body-too-large').detail), /4096 bytes/)
      assert.deepEqual(await storedEntries(ctx.db), [])
    })

    test('malformed JSON is a 400; a __proto__ key is refused as such', async () => {
      const post = (payload: string) =>
        app().inject({ method: 'POST', url: pricesPath, headers: { 'content-type': 'application/json' }, payload })
      assert.match(String(problemOf(await post('{"manufacturer": '), 400, 'malformed-body').detail), /not valid JSON/)
      const poisoned = await post('{"manufacturer":"a","brand":"b","model":"c","price":1,"purchase":1,"__proto__":{}}')
      assert.match(String(problemOf(poisoned, 400, 'malformed-body').detail), /__proto__/)
      assert.deepEqual(await storedEntries(ctx.db), [])
    })
  })

  describe('values the database would refuse', () => {
    test('a NUL character in any value is a 400 naming the field, before the database sees it', async () => {
      const cases: [string, () => Promise<LightMyRequestResponse>][] = [
        [
          'brand',
          () =>
            app().inject({
              method: 'POST',
              url: `${searchPath}/glasses`,
              payload: { byPriceList: false, brand: 'a\u0000' },
            }),
        ],
        ['model', () => app().inject({ method: 'GET', url: `${pricesPath}/list?model=x%00y` })],
        [
          'manufacturer',
          () => app().inject({ method: 'POST', url: pricesPath, payload: { ...entry, manufacturer: 'Sa\u0000filo' } }),
        ],
        ['id', () => app().inject({ method: 'GET', url: `${pricesPath}/%00` })],
        [
          'sort',
          () =>
            app().inject({ method: 'POST', url: `${searchPath}/lenses?sort=brand%00`, payload: { byPriceList: true } }),
        ],
        [
          'nested.0',
          () =>
            app().inject({
              method: 'POST',
              url: `${searchPath}/extras`,
              payload: { byPriceList: true, nested: ['\u0000'] },
            }),
        ],
      ]
      for (const [field, send] of cases) {
        const body = problemOf(await send(), 400, 'invalid-request')
        assert.deepEqual(fieldsOf(body), [field])
      }
      assert.deepEqual(await storedEntries(ctx.db), [])
    })

    test('a number beyond any range is a 400 naming the field, or simply matches nothing; never a 5xx', async () => {
      problemOf(await app().inject({ method: 'GET', url: `${pricesPath}/list?priceFrom=1e400` }), 400)
      const digits = '9'.repeat(200)
      const long = await app().inject({ method: 'GET', url: `${pricesPath}/list?priceTo=${digits}` })
      assert.deepEqual(fieldsOf(problemOf(long, 400)), ['priceTo'])
      const search = (payload: string) =>
        app().inject({
          method: 'POST',
          url: `${searchPath}/lenses`,
          headers: { 'content-type': 'application/json' },
          payload,
        })
      assert.deepEqual(fieldsOf(problemOf(await search(`{"byPriceList":false,"diameter":"${digits}"}`), 400)), [
        'diameter',
      ])
      for (const number of ['1e300', '1e400', '-1e400', '1e-300']) {
        const response = await search(`{"byPriceList":true,"refractionIndex":${number}}`)
        assert.equal(response.statusCode, 200, `${number}: ${response.body}`)
        assert.equal(response.json().totalElements, 0)
      }
      const created = await app().inject({ method: 'POST', url: pricesPath, payload: { ...entry, price: 1e300 } })
      assert.deepEqual(fieldsOf(problemOf(created, 400)), ['price'])
      const bulk = await app().inject({
        method: 'POST',
        url: `${pricesPath}/list`,
        headers: { 'content-type': 'application/json' },
        payload: '{"priceTypeBase":"RETAIL","priceTypeChange":"RETAIL","round":"TENS","coefficient":1e300}',
      })
      assert.deepEqual(fieldsOf(problemOf(bulk, 400)), ['coefficient'])
      assert.deepEqual(await storedEntries(ctx.db), [])
    })
  })
})

eachDatabase('errors: the unexpected and the slow', (ctx) => {
  const lines: string[] = []
  let app: FastifyInstance
  before(async () => {
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean))
        done()
      },
    })
    app = await buildApp({
      config: testConfig({ REQUEST_TIMEOUT_MS: '200' }),
      db: ctx.db,
      logger: { level: 'info', stream },
    })
    app.get('/failing', async () => {
      throw new Error('relation "secret_table" does not exist (/srv/app/src/db.js:42)')
    })
    app.get('/stuck', async (request) => {
      // Answers nothing until the timeout aborts it.
      await once(requestSignal(request), 'abort')
      return {}
    })
    await app.ready()
  })
  after(() => app?.close())

  test('a 500 says nothing of the internals; its log line has the error and the request id', async () => {
    const response = await app.inject({ method: 'GET', url: '/failing', headers: { 'x-request-id': 'req-500-check' } })
    const body = problemOf(response, 500, 'internal-error')
    assert.doesNotMatch(response.body, /secret_table|\/srv|db\.js|stack/)
    assert.equal(body.requestId, 'req-500-check')
    const logged = lines.map((line) => JSON.parse(line)).find((line) => line.msg === 'unhandled error')
    assert.ok(logged, 'the error is logged')
    assert.equal(logged.reqId, 'req-500-check')
    assert.equal(logged.level, 50)
    assert.match(logged.err.message, /secret_table/)
  })

  test('a request that outlives REQUEST_TIMEOUT_MS is abandoned with a 503 and Retry-After', async () => {
    const response = await app.inject({ method: 'GET', url: '/stuck' })
    assert.match(String(problemOf(response, 503, 'service-timeout').detail), /took too long/)
    assert.equal(response.headers['retry-after'], '5')
  })

  test('a request the HTTP parser refuses gets problem details on the socket', async () => {
    await app.listen({ host: '127.0.0.1', port: 0 })
    const address = app.server.address()
    assert.ok(address && typeof address === 'object')
    const socket = connect(address.port, '127.0.0.1')
    socket.write('GET /api/v2/glasses/prices/list HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n')
    let text = ''
    socket.on('data', (chunk) => {
      text += String(chunk)
    })
    await once(socket, 'close')
    assert.match(text, /^HTTP\/1\.1 400 Bad Request\r\n/)
    assert.match(text, /content-type: application\/problem\+json/i)
    const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4))
    assert.equal(body.status, 400)
    assert.equal(body.instance, '/api/v2/glasses/prices/list')
    assert.equal(body.code, 'malformed-request')
    assert.equal(body.path, body.instance)
  })
})

eachDatabase('errors: a stable code per kind of refusal', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: () => clearGlassPrices(ctx.db),
  })

  const create = (payload: Record<string, unknown>) => app().inject({ method: 'POST', url: pricesPath, payload })
  const lastChange = async () =>
    (await app().inject({ method: 'GET', url: `${pricesPath}/changes` })).json().content[0].id as number
  const revert = (batch: number) => app().inject({ method: 'POST', url: `${pricesPath}/changes/${batch}/revert` })

  test('the three 409s — a duplicate key, a change already reverted, a revert every entry refuses — differ by code', async () => {
    const created = await create(entry)
    assert.equal(created.statusCode, 200, created.body)
    const duplicate = problemOf(await create({ ...entry, model: ' carrera 8862 ' }), 409, 'duplicate-key')
    assert.equal(duplicate.existingId, created.json().id)

    const batch = await lastChange()
    const id = created.json().id as number
    const put = await app().inject({ method: 'PUT', url: `${pricesPath}/${id}`, payload: { ...entry, price: 12990 } })
    assert.equal(put.statusCode, 200, put.body)
    // The created entry was edited since: reverting its creation restores nothing.
    problemOf(await revert(batch), 409, 'revert-conflicts')

    const update = await lastChange()
    assert.equal((await revert(update)).statusCode, 200)
    problemOf(await revert(update), 409, 'already-reverted')
  })

  test('a stale If-Match, a missing entry, an unknown path and a rejected bulk change each have their code', async () => {
    const [id] = await seedEntries(ctx.db, [{ ...entry, price: 40 }])
    const stale = await app().inject({
      method: 'PUT',
      url: `${pricesPath}/${id}`,
      headers: { 'if-match': '"99"' },
      payload: entry,
    })
    problemOf(stale, 412, 'stale-etag')
    problemOf(await app().inject({ method: 'GET', url: `${pricesPath}/999999` }), 404, 'entry-not-found')
    problemOf(await app().inject({ method: 'GET', url: `${pricesPath}/999999/history` }), 404, 'entry-not-found')
    problemOf(
      await app().inject({ method: 'POST', url: `${pricesPath}/changes/999999/revert` }),
      404,
      'entry-not-found',
    )
    problemOf(await app().inject({ method: 'GET', url: '/api/v2/nothing' }), 404, 'not-found')
    const bulk = await app().inject({
      method: 'POST',
      url: `${pricesPath}/list`,
      payload: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', round: 'HUNDREDS' },
    })
    problemOf(bulk, 422, 'bulk-change-rejected')
  })
})
