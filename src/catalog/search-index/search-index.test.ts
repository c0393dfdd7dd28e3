import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { buildTestApp, eachDatabase, useTestApp } from '../../../test/harness.js'
import { seedCatalogue } from '../../demo/demo-catalogue.js'
import { refreshMatview } from '../freshness/catalog-repository.js'
import { pruneChangeLog } from '../freshness/catalog-state.js'
import { glasses } from '../kinds/kinds.js'

/*
 * The index's life in a service: readiness while it loads, answers from it once loaded, a write seen by the very
 * next search (the index brought forward by the changed rows alone), a refresh applied the same way, and
 * SEARCH_INDEX=off.
 */

const frames = (app: FastifyInstance) =>
  app.inject({
    method: 'POST',
    url: '/api/v2/good/nomenclature/search/glasses?size=1',
    payload: { byPriceList: true, model: 'Index Probe' },
  })

eachDatabase('search index in the service', (ctx) => {
  const app = useTestApp(ctx, {
    env: { RESULT_CACHE: 'off' },
    setup: async () => {
      await seedCatalogue(ctx.db, { scale: 300 })
    },
  })

  test('readiness is DOWN while the first load runs, UP once every kind is loaded', async () => {
    app().searchIndex.start()
    assert.equal(app().searchIndex.warming, true)
    const loading = await app().inject({ method: 'GET', url: '/actuator/health/readiness' })
    assert.equal(loading.statusCode, 503)
    const during = loading.json().components.searchIndex
    assert.equal(during.status, 'DOWN')
    assert.equal(during.details.state, 'loading')
    assert.equal(during.details.kinds, 7)
    assert.ok(during.details.kindsLoaded < 7, 'not every kind is loaded yet')
    // Searches sent meanwhile are answered (from SQL), not refused.
    assert.equal((await frames(app())).statusCode, 200)
    const deadline = Date.now() + 60_000
    while (app().searchIndex.warming && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
    assert.equal(app().searchIndex.loaded, true)
    const ready = await app().inject({ method: 'GET', url: '/actuator/health/readiness' })
    assert.equal(ready.statusCode, 200)
    assert.deepEqual(ready.json().components.searchIndex, {
      status: 'UP',
      details: { state: 'loaded', kindsLoaded: 7, kinds: 7, reading: [] },
    })
  })

  test('a loaded index answers; a write shows in the very next search, applied to the index by its changed rows', async () => {
    await app().searchIndex.catchUp()
    const served = { ...app().searchIndex.served }
    const loads = { ...app().searchIndex.loads }
    const empty = await frames(app())
    assert.equal(empty.json().totalElements, 0)
    assert.equal(app().searchIndex.served.index, served.index + 1, 'answered from the index')

    const created = await app().inject({
      method: 'POST',
      url: '/api/v2/glasses/prices',
      payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'Index Probe 1', price: 1000, purchase: 500 },
    })
    assert.equal(created.statusCode, 200)
    const next = await frames(app())
    assert.equal(next.json().totalElements, 1, 'the write shows in the very next search')
    assert.equal(app().searchIndex.served.index, served.index + 2, 'answered from the index, caught up by the write')
    assert.equal(app().searchIndex.served.sql, served.sql)
    assert.deepEqual(
      app().searchIndex.loads,
      { read: loads.read, changes: loads.changes + 1, restored: 0 },
      'no table read anew',
    )

    const second = await app().inject({
      method: 'POST',
      url: '/api/v2/glasses/prices',
      payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'Index Probe 2', price: 1000, purchase: 500 },
    })
    assert.equal((await frames(app())).json().totalElements, 2)
    const deleted = await app().inject({ method: 'DELETE', url: `/api/v2/glasses/prices/${second.json().id}` })
    assert.equal(deleted.statusCode, 200)
    assert.equal((await frames(app())).json().totalElements, 1, 'the delete shows in the very next search')
    assert.equal(app().searchIndex.served.index, served.index + 4)
    assert.equal(app().searchIndex.loads.read, loads.read)
  })

  test('an id up to 2^32 − 1 is held by the index; beyond it the kind is answered by SQL, and rightly', async () => {
    await app().searchIndex.catchUp()
    const entry = (id: bigint, model: string) =>
      sql`INSERT INTO glasses_price (id, manufacturer, brand, model, price, purchase)
          VALUES (${id}, 'Safilo', 'Carrera', ${model}, 1000, 500)`.execute(ctx.db.primary)
    const search = (model: string) =>
      app().inject({
        method: 'POST',
        url: '/api/v2/good/nomenclature/search/glasses?size=5',
        payload: { byPriceList: true, model },
      })
    await entry(2n ** 32n - 1n, 'Index Probe Last Id')
    const served = { ...app().searchIndex.served }
    const last = await search('Index Probe Last Id')
    assert.deepEqual(
      last.json().content.map((item: { model: string }) => item.model),
      ['Index Probe Last Id'],
    )
    assert.equal(app().searchIndex.served.index, served.index + 1, 'the largest id the index keeps: answered from it')

    await entry(2n ** 32n, 'Index Probe Beyond')
    const beyond = await search('Index Probe Beyond')
    assert.equal(beyond.statusCode, 200)
    assert.deepEqual(
      beyond.json().content.map((item: { model: string }) => item.model),
      ['Index Probe Beyond'],
      'found all the same',
    )
    assert.equal(app().searchIndex.served.sql, served.sql + 1, 'answered by SQL')
    await sql`DELETE FROM glasses_price WHERE id >= ${2n ** 32n - 1n}`.execute(ctx.db.primary)
  })

  test('a matview refresh after a price change is applied by the SKUs it changed', async () => {
    await app().searchIndex.catchUp()
    const matviewSearch = (model: string) =>
      app().inject({
        method: 'POST',
        url: '/api/v2/good/nomenclature/search/glasses?size=100',
        payload: { byPriceList: false, model },
      })
    const listing = await app().inject({ method: 'GET', url: '/api/v2/glasses/prices/list?size=1&sortColumn=ID' })
    const entry = listing.json().content[0]
    const before = (await matviewSearch(entry.model)).json()
    const priced = before.content.filter((item: { retailPrice: number }) => item.retailPrice === entry.price)
    assert.ok(priced.length > 0, 'the entry prices goods in the matview')

    const price = entry.price + 111
    const updated = await app().inject({
      method: 'PUT',
      url: `/api/v2/glasses/prices/${entry.id}`,
      payload: {
        manufacturer: entry.manufacturer,
        brand: entry.brand,
        model: entry.model,
        price,
        purchase: entry.purchase,
      },
    })
    assert.equal(updated.statusCode, 200)
    await refreshMatview(ctx.db.primary, glasses, { concurrently: true })
    const served = { ...app().searchIndex.served }
    const loads = { ...app().searchIndex.loads }
    const after = (await matviewSearch(entry.model)).json()
    assert.equal(app().searchIndex.served.index, served.index + 1, 'answered from the index')
    assert.equal(app().searchIndex.loads.read, loads.read, 'no table read anew')
    assert.ok(app().searchIndex.loads.changes > loads.changes)
    assert.equal(after.totalElements, before.totalElements)
    assert.equal(
      after.content.filter((item: { retailPrice: number }) => item.retailPrice === price).length,
      priced.length,
      'the goods it prices show the new price',
    )

    const off = await buildTestApp(ctx.db, { SEARCH_INDEX: 'off', RESULT_CACHE: 'off' })
    try {
      const fromSql = await off.inject({
        method: 'POST',
        url: '/api/v2/good/nomenclature/search/glasses?size=100',
        payload: { byPriceList: false, model: entry.model },
      })
      assert.equal(JSON.stringify(after), fromSql.body, 'the same answer as SQL')
    } finally {
      await off.close()
    }
  })

  test('a bulk change of the whole list is applied in place by its new prices, without reading a table anew', async () => {
    await app().searchIndex.catchUp()
    const before = await app().inject({ method: 'GET', url: '/api/v2/glasses/prices/list?size=5&sortColumn=ID' })
    const changed = await app().inject({
      method: 'POST',
      url: '/api/v2/glasses/prices/list',
      payload: { priceTypeBase: 'PURCHASE', priceTypeChange: 'RETAIL', coefficient: 2.37, round: 'TENS' },
    })
    assert.equal(changed.statusCode, 200)
    await refreshMatview(ctx.db.primary, glasses, { concurrently: true })
    const loads = { ...app().searchIndex.loads }
    const served = { ...app().searchIndex.served }
    const requests = [
      { method: 'GET' as const, url: '/api/v2/glasses/prices/list?size=5&sortColumn=ID' },
      { method: 'GET' as const, url: '/api/v2/glasses/prices/list?size=5&sortColumn=PRICE&sortDirection=DESC' },
      {
        method: 'POST' as const,
        url: '/api/v2/good/nomenclature/search/glasses?size=5&sort=retailPrice,desc',
        payload: { byPriceList: false, model: 'a' },
      },
      {
        method: 'POST' as const,
        url: '/api/v2/good/nomenclature/search/glasses?size=5&sort=retailPrice,asc',
        payload: { byPriceList: true },
      },
    ]
    const answers = []
    for (const request of requests) answers.push((await app().inject(request)).body)
    assert.equal(app().searchIndex.served.index, served.index + requests.length, 'answered from the index')
    assert.equal(app().searchIndex.loads.read, loads.read, 'no table read anew')
    assert.ok(app().searchIndex.loads.changes > loads.changes)
    assert.notEqual(answers[0], before.body, 'the new prices show')
    const off = await buildTestApp(ctx.db, { SEARCH_INDEX: 'off', RESULT_CACHE: 'off' })
    try {
      for (const [index, request] of requests.entries()) {
        assert.equal(answers[index], (await off.inject(request)).body, `${request.url}: the same answer as SQL`)
      }
    } finally {
      await off.close()
    }
  })

  test('changes the log no longer holds are caught up by reading the table anew, never answered stale', async () => {
    await app().searchIndex.catchUp()
    const loads = { ...app().searchIndex.loads }
    const created = await app().inject({
      method: 'POST',
      url: '/api/v2/glasses/prices',
      payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'Index Probe 3', price: 1000, purchase: 500 },
    })
    assert.equal(created.statusCode, 200)
    // The write's log rows outlive their retention and are pruned, as a refresh does.
    await sql`UPDATE catalog_change SET logged_at = now() - interval '1 day'`.execute(ctx.db.primary)
    await pruneChangeLog(ctx.db.primary, glasses)
    const next = await frames(app())
    assert.equal(next.json().totalElements, 2, 'the write shows in the very next search')
    await app().searchIndex.catchUp()
    assert.ok(app().searchIndex.loads.read > loads.read, 'the price table was read anew')
    assert.equal((await frames(app())).body, next.body)
    const rest = await app().inject({ method: 'DELETE', url: `/api/v2/glasses/prices/${created.json().id}` })
    assert.equal(rest.statusCode, 200)
  })

  test('searches and listings answer while a write holds its rows (on the embedded database, its one connection); the write shows once it commits', async () => {
    await app().searchIndex.catchUp()
    const listing = await app().inject({ method: 'GET', url: '/api/v2/glasses/prices/list?size=1&sortColumn=ID' })
    const entry = listing.json().content[0]
    const held = 'Probe Held By A Write'
    let commit!: () => void
    const committed = new Promise<void>((resolve) => {
      commit = resolve
    })
    let holding!: () => void
    const holds = new Promise<void>((resolve) => {
      holding = resolve
    })
    const write = ctx.db.rawTransaction(async (client) => {
      await client.query('UPDATE glasses_price SET model = $1 WHERE id = $2', [held, entry.id])
      holding()
      await committed
    })
    try {
      await holds
      const served = app().searchIndex.served.index
      const within = <T>(answer: Promise<T>) =>
        Promise.race([answer, new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), 5_000).unref())])
      const search = await within(frames(app()))
      assert.notEqual(search, 'waited', 'the search did not wait for the write')
      assert.equal(search === 'waited' ? undefined : search.json().totalElements, 1)
      const byModel = (model: string) =>
        app().inject({ method: 'GET', url: `/api/v2/glasses/prices/list?model=${encodeURIComponent(model)}` })
      const during = await within(byModel(held))
      assert.notEqual(during, 'waited', 'the listing did not wait for the write')
      assert.equal(during === 'waited' ? undefined : during.json().totalElements, 0, 'the write is not committed yet')
      // Text beyond ASCII is normalised here too (where the database agreed at the first load), not by asking it.
      const cyrillic = await within(
        app().inject({
          method: 'POST',
          url: '/api/v2/good/nomenclature/search/glasses?size=1',
          payload: { byPriceList: true, model: 'ЧЁРН' },
        }),
      )
      assert.notEqual(cyrillic, 'waited', 'a search for Cyrillic text did not wait for the write')
      assert.equal(app().searchIndex.served.index, served + 3, 'all answered from the index')
    } finally {
      commit()
      await write
    }
    const after = await app().inject({
      method: 'GET',
      url: `/api/v2/glasses/prices/list?model=${encodeURIComponent(held)}`,
    })
    assert.deepEqual(
      after.json().content.map((item: { id: number }) => item.id),
      [entry.id],
      'the first listing after the commit shows the write',
    )
  })

  test('while one statement runs for seconds (on the embedded database, on its own thread), searches and readiness answer at once', async () => {
    await app().searchIndex.catchUp()
    await frames(app())
    const served = app().searchIndex.served.index
    const started = performance.now()
    const statement = ctx.db.rawTransaction(async (client) => {
      await client.query('SELECT pg_sleep(3)')
    })
    try {
      await new Promise((resolve) => setTimeout(resolve, 300))
      const search = await frames(app())
      const readiness = await app().inject({ method: 'GET', url: '/actuator/health/readiness' })
      const waited = performance.now() - started
      assert.equal(search.statusCode, 200)
      assert.equal(readiness.statusCode, 200, 'ready: the database is busy, not down')
      assert.ok(waited < 2_500, `answered ${Math.round(waited)} ms after the statement started`)
      assert.equal(app().searchIndex.served.index, served + 1, 'answered from the index')
    } finally {
      await statement
    }
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
