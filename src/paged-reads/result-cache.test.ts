import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { buildTestApp, eachDatabase, useTestApp } from '../../test/harness.js'
import { insertPriceEntries, insertSkus, refreshMatview } from '../catalog/freshness/catalog-repository.js'
import { glasses } from '../catalog/kinds/kinds.js'
import { ResultCache } from './result-cache.js'

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

  // The SQL path's caches are under test here; the search index has its own tests.
  const app = useTestApp(ctx, { env: { SEARCH_INDEX: 'off' }, setup: () => addFrames(5) })

  test('a remembered total is served while the data version stays the same', async () => {
    const total = await searchTotal(app(), true)
    assert.equal(total, 5)
    // Rows written behind the version's back (trigger off) do not move the version: the remembered total stays.
    await sql`ALTER TABLE glasses_price DISABLE TRIGGER glasses_price_catalog_stale`.execute(ctx.db.primary)
    try {
      await sql`INSERT INTO glasses_price (manufacturer, brand, model, price, purchase)
                VALUES ('Safilo', 'Carrera', 'CARRERA HIDDEN', 1, 1)`.execute(ctx.db.primary)
      assert.equal(await searchTotal(app(), true), 5, 'served from the cache')
    } finally {
      await sql`DELETE FROM glasses_price WHERE model = 'CARRERA HIDDEN'`.execute(ctx.db.primary)
      await sql`ALTER TABLE glasses_price ENABLE TRIGGER glasses_price_catalog_stale`.execute(ctx.db.primary)
    }
  })

  test('with RESULT_CACHE=off every total and page is read afresh', async () => {
    const uncached = await buildTestApp(ctx.db, { RESULT_CACHE: 'off', SEARCH_INDEX: 'off' })
    const before = await searchTotal(uncached, true)
    await sql`ALTER TABLE glasses_price DISABLE TRIGGER glasses_price_catalog_stale`.execute(ctx.db.primary)
    try {
      await sql`INSERT INTO glasses_price (manufacturer, brand, model, price, purchase)
                VALUES ('Safilo', 'Carrera', 'CARRERA UNSEEN', 1, 1)`.execute(ctx.db.primary)
      assert.equal(await searchTotal(uncached, true), before + 1, 'counted again although the version stayed')
      const listed = await uncached.inject({ method: 'GET', url: '/api/v2/glasses/prices/list?size=500' })
      assert.ok(listed.json().content.some((item: { model: string }) => item.model === 'CARRERA UNSEEN'))
    } finally {
      await sql`DELETE FROM glasses_price WHERE model = 'CARRERA UNSEEN'`.execute(ctx.db.primary)
      await sql`ALTER TABLE glasses_price ENABLE TRIGGER glasses_price_catalog_stale`.execute(ctx.db.primary)
      await uncached.close()
    }
  })

  test('a matview search total changes with the refresh that changes the matview, not before', async () => {
    const before = await searchTotal(app(), false)
    await addFrames(2, false)
    assert.equal(await searchTotal(app(), false), before, 'the matview has not been refreshed yet')
    await refreshMatview(ctx.db.primary, glasses)
    assert.equal(await searchTotal(app(), false), before + 2)
  })

  test('a price-list search total changes with the write itself', async () => {
    const before = await searchTotal(app(), true)
    await addFrames(3, false)
    assert.equal(await searchTotal(app(), true), before + 3)
    await sql`DELETE FROM glasses_price WHERE model = ${`CARRERA ${1000 + serial - 1}`}`.execute(ctx.db.primary)
    assert.equal(await searchTotal(app(), true), before + 2)
  })

  test('the listing total changes with a create and a delete through the API', async () => {
    const before = await listingTotal(app())
    const created = await app().inject({
      method: 'POST',
      url: '/api/v2/glasses/prices',
      payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'CARRERA NEW', price: 100, purchase: 50 },
    })
    assert.equal(created.statusCode, 200)
    assert.equal(await listingTotal(app()), before + 1)
    const removed = await app().inject({ method: 'DELETE', url: `/api/v2/glasses/prices/${created.json().id}` })
    assert.equal(removed.statusCode, 200)
    assert.equal(await listingTotal(app()), before)
  })

  /** The models of the whole unfiltered search: an unselective search, so its page is remembered too. */
  const unfilteredModels = async (byPriceList: boolean) => {
    const response = await app().inject({
      method: 'POST',
      url: '/api/v2/good/nomenclature/search/glasses?size=200',
      payload: { byPriceList },
    })
    assert.equal(response.statusCode, 200)
    const body = response.json()
    assert.equal(body.totalElements, body.content.length)
    return (body.content as { model: string }[]).map((item) => item.model).sort()
  }

  test('a remembered page of an unfiltered search changes with the refresh that changes the matview', async () => {
    await refreshMatview(ctx.db.primary, glasses)
    const before = await unfilteredModels(false)
    await addFrames(2, false)
    const added = [`CARRERA ${1000 + serial - 2}`, `CARRERA ${1000 + serial - 1}`]
    assert.deepEqual(await unfilteredModels(false), before, 'the matview has not been refreshed yet')
    await refreshMatview(ctx.db.primary, glasses)
    assert.deepEqual(await unfilteredModels(false), [...before, ...added].sort())
  })

  test('a remembered page of an unfiltered price-list search changes with the write itself', async () => {
    const before = await unfilteredModels(true)
    await addFrames(1, false)
    const added = `CARRERA ${1000 + serial - 1}`
    assert.deepEqual(await unfilteredModels(true), [...before, added].sort())
    await sql`DELETE FROM glasses_price WHERE model = ${added}`.execute(ctx.db.primary)
    assert.deepEqual(await unfilteredModels(true), before)
  })

  test('a remembered page of the unfiltered listing changes with the write itself', async () => {
    const listed = async () => {
      const response = await app().inject({ method: 'GET', url: '/api/v2/glasses/prices/list?size=500' })
      assert.equal(response.statusCode, 200)
      return (response.json().content as { model: string }[]).map((item) => item.model).sort()
    }
    const before = await listed()
    assert.deepEqual(await listed(), before)
    await addFrames(1, false)
    const added = `CARRERA ${1000 + serial - 1}`
    assert.deepEqual(await listed(), [...before, added].sort())
  })

  // A second instance needs the server: an embedded database has one connection.
  if (ctx.target === 'postgres') {
    test('a write through another instance shows in this instance’s next answer', async () => {
      const other = await buildTestApp(await ctx.openAnother())
      try {
        const search = await searchTotal(app(), true)
        const listing = await listingTotal(app())
        const models = await unfilteredModels(true)
        const created = await other.inject({
          method: 'POST',
          url: '/api/v2/glasses/prices',
          payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'CARRERA OTHER', price: 100, purchase: 50 },
        })
        assert.equal(created.statusCode, 200)
        assert.equal(await searchTotal(app(), true), search + 1)
        assert.equal(await listingTotal(app()), listing + 1)
        assert.deepEqual(await unfilteredModels(true), [...models, 'CARRERA OTHER'].sort())
      } finally {
        await other.close()
      }
    })
  }
})

test('concurrent requests for one uncached result share one computation; a failure is not remembered', async () => {
  const cache = new ResultCache()
  let computations = 0
  const compute = async () => {
    computations++
    await new Promise((resolve) => setTimeout(resolve, 20))
    return { value: 42, version: 'v1' }
  }
  const answers = await Promise.all(Array.from({ length: 8 }, () => cache.getOrCompute('total', 'v1', compute)))
  assert.deepEqual(answers, Array(8).fill(42))
  assert.equal(computations, 1)
  assert.equal(await cache.getOrCompute('total', 'v1', compute), 42)
  assert.equal(computations, 1, 'then served from the cache')
  await cache.getOrCompute('total', 'v2', compute)
  assert.equal(computations, 2, 'another version computes again')

  const failing = async (): Promise<{ value: number; version: string }> => {
    throw new Error('the database went away')
  }
  const failures = await Promise.allSettled([
    cache.getOrCompute('other', 'v1', failing),
    cache.getOrCompute('other', 'v1', failing),
  ])
  assert.deepEqual(
    failures.map((f) => f.status),
    ['rejected', 'rejected'],
  )
  assert.equal(await cache.getOrCompute('other', 'v1', compute), 42, 'the failure left nothing behind')
})
