import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { buildTestApp, eachDatabase } from '../../test/harness.js'
import { insertPriceEntries, insertSkus, refreshMatview } from './catalog-repository.js'
import { glasses } from './kinds.js'

/*
 * The totals of searches and of the price-list listing are remembered per data version. These tests prove the
 * remembered total is served while nothing changed, and that every write or refresh shows in the very next
 * answer, on this instance and on another one.
 */

const frame = (model: string, index: number) => ({
  barcode: `46${String(index).padStart(11, '0')}`,
  manufacturer: 'Safilo',
  brand: 'Carrera',
  model,
  color: 'black',
  size: '54-18-145',
})

eachDatabase('result cache of search and listing totals', (ctx) => {
  let app: FastifyInstance
  let serial = 0

  const addFrames = async (count: number, refresh = true) => {
    const models = Array.from({ length: count }, () => `CARRERA ${1000 + serial++}`)
    await insertPriceEntries(
      ctx.db.primary,
      glasses,
      models.map((model) => ({ manufacturer: 'Safilo', brand: 'Carrera', model, price: 9990, purchase: 4000 })),
    )
    await insertSkus(
      ctx.db.primary,
      glasses,
      models.map((model) => frame(model, serial * 10 + models.indexOf(model))),
    )
    if (refresh) await refreshMatview(ctx.db.primary, glasses)
  }

  /** The total of a search whose first page (size 1) is full, so the total is a count, not the page's length. */
  const searchTotal = async (target: FastifyInstance, byPriceList: boolean) => {
    const response = await target.inject({
      method: 'POST',
      url: '/api/v2/good/nomenclature/search/glasses?size=1',
      payload: { byPriceList, brand: 'carrera' },
    })
    assert.equal(response.statusCode, 200)
    return response.json().totalElements as number
  }

  const listingTotal = async (target: FastifyInstance) => {
    const response = await target.inject({ method: 'GET', url: '/api/v2/glasses/prices/list?size=1&brand=carr' })
    assert.equal(response.statusCode, 200)
    return response.json().totalElements as number
  }

  before(async () => {
    await addFrames(5)
    app = await buildTestApp(ctx.db)
  })
  after(() => app?.close())

  test('a remembered total is served while the data version stays the same', async () => {
    const total = await searchTotal(app, true)
    assert.equal(total, 5)
    // Rows written behind the version's back (trigger off) do not move the version: the remembered total stays.
    await sql`ALTER TABLE glasses_price DISABLE TRIGGER glasses_price_catalog_stale`.execute(ctx.db.primary)
    try {
      await sql`INSERT INTO glasses_price (manufacturer, brand, model, price, purchase)
                VALUES ('Safilo', 'Carrera', 'CARRERA HIDDEN', 1, 1)`.execute(ctx.db.primary)
      assert.equal(await searchTotal(app, true), 5, 'served from the cache')
    } finally {
      await sql`DELETE FROM glasses_price WHERE model = 'CARRERA HIDDEN'`.execute(ctx.db.primary)
      await sql`ALTER TABLE glasses_price ENABLE TRIGGER glasses_price_catalog_stale`.execute(ctx.db.primary)
    }
  })

  test('a matview search total changes with the refresh that changes the matview, not before', async () => {
    const before = await searchTotal(app, false)
    await addFrames(2, false)
    assert.equal(await searchTotal(app, false), before, 'the matview has not been refreshed yet')
    await refreshMatview(ctx.db.primary, glasses)
    assert.equal(await searchTotal(app, false), before + 2)
  })

  test('a price-list search total changes with the write itself', async () => {
    const before = await searchTotal(app, true)
    await addFrames(3, false)
    assert.equal(await searchTotal(app, true), before + 3)
    await sql`DELETE FROM glasses_price WHERE model = ${`CARRERA ${1000 + serial - 1}`}`.execute(ctx.db.primary)
    assert.equal(await searchTotal(app, true), before + 2)
  })

  test('the listing total changes with a create and a delete through the API', async () => {
    const before = await listingTotal(app)
    const created = await app.inject({
      method: 'POST',
      url: '/api/v2/glasses/prices',
      payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'CARRERA NEW', price: 100, purchase: 50 },
    })
    assert.equal(created.statusCode, 200)
    assert.equal(await listingTotal(app), before + 1)
    const removed = await app.inject({ method: 'DELETE', url: `/api/v2/glasses/prices/${created.json().id}` })
    assert.equal(removed.statusCode, 200)
    assert.equal(await listingTotal(app), before)
  })

  // A second instance needs the server: an embedded database has one connection.
  if (ctx.target === 'postgres') {
    test('a write through another instance shows in this instance’s next answer', async () => {
      const other = await buildTestApp(await ctx.openAnother())
      try {
        const search = await searchTotal(app, true)
        const listing = await listingTotal(app)
        const created = await other.inject({
          method: 'POST',
          url: '/api/v2/glasses/prices',
          payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'CARRERA OTHER', price: 100, purchase: 50 },
        })
        assert.equal(created.statusCode, 200)
        assert.equal(await searchTotal(app, true), search + 1)
        assert.equal(await listingTotal(app), listing + 1)
      } finally {
        await other.close()
      }
    })
  }
})
