import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, eachDatabase } from '../../../test/harness.js'
import { seedCatalogue } from '../demo-catalogue.js'

/*
 * The index's life in a service: readiness while it loads, answers from it once loaded, a write seen by the very
 * next search (from SQL until the index catches up, then from the index again), and SEARCH_INDEX=off.
 */

const frames = (app: FastifyInstance) =>
  app.inject({
    method: 'POST',
    url: '/api/v2/good/nomenclature/search/glasses?size=1',
    payload: { byPriceList: true, model: 'Index Probe' },
  })

eachDatabase('search index in the service', (ctx) => {
  let app: FastifyInstance

  before(async () => {
    await seedCatalogue(ctx.db, { scale: 300 })
    app = await buildTestApp(ctx.db, { RESULT_CACHE: 'off' })
  })
  after(() => app?.close())

  test('readiness is DOWN while the first load runs, UP once every kind is loaded', async () => {
    app.searchIndex.start()
    assert.equal(app.searchIndex.warming, true)
    assert.equal((await app.inject({ method: 'GET', url: '/actuator/health/readiness' })).statusCode, 503)
    const deadline = Date.now() + 60_000
    while (app.searchIndex.warming && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.equal(app.searchIndex.loaded, true)
    assert.equal((await app.inject({ method: 'GET', url: '/actuator/health/readiness' })).statusCode, 200)
  })

  test('a loaded index answers; a write shows in the next search, then the index answers again', async () => {
    await app.searchIndex.catchUp()
    const before = { ...app.searchIndex.served }
    const empty = await frames(app)
    assert.equal(empty.json().totalElements, 0)
    assert.equal(app.searchIndex.served.index, before.index + 1, 'answered from the index')

    const created = await app.inject({
      method: 'POST',
      url: '/api/v2/glasses/prices',
      payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'Index Probe 1', price: 1000, purchase: 500 },
    })
    assert.equal(created.statusCode, 200)
    const next = await frames(app)
    assert.equal(next.json().totalElements, 1, 'the write shows in the very next search')
    assert.equal(app.searchIndex.served.sql, before.sql + 1, 'answered from SQL while the index is behind')

    await app.searchIndex.catchUp()
    const again = await frames(app)
    assert.equal(again.body, next.body)
    assert.equal(app.searchIndex.served.index, before.index + 2, 'answered from the index once caught up')
  })

  test('with SEARCH_INDEX=off every answer comes from SQL and readiness does not wait', async () => {
    const off = await buildTestApp(ctx.db, { SEARCH_INDEX: 'off' })
    try {
      off.searchIndex.start()
      assert.equal(off.searchIndex.warming, false)
      assert.equal((await off.inject({ method: 'GET', url: '/actuator/health/readiness' })).statusCode, 200)
      await off.searchIndex.catchUp()
      assert.equal((await frames(off)).json().totalElements, 1)
      assert.equal(off.searchIndex.served.index, 0)
    } finally {
      await off.close()
    }
  })
})
