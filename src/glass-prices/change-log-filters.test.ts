import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { clearGlassPrices, pricesPath, seedEntries } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import { updateGlassPrice } from './glass-price-repository.js'

/*
 * The change log narrowed by who made a change, the days it was made on (in the business time zone) and its
 * kinds, each a query parameter, all of them together; a bad day or kind is a 400 naming it. And a change opened
 * to its entries: each entry's key, whether it still exists, and what the change wrote, old → new.
 */

interface Change {
  id: number
  action: string
  user: string
}

const carrera = (model: string, price: string, purchase: string) => ({
  manufacturer: 'Safilo',
  brand: 'Carrera',
  model,
  price,
  purchase,
})

eachDatabase('glass price list: the change log filtered, a change opened to its entries', (ctx) => {
  const app = useTestApp(ctx, { beforeEach: () => clearGlassPrices(ctx.db) })

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    app().inject({ method, url: `${pricesPath}${url}`, ...(payload ? { payload } : {}) })
  const changes = async (query: string) => {
    const response = await call('GET', `/changes${query}`)
    assert.equal(response.statusCode, 200, response.body)
    const page = response.json() as { totalElements: number; content: Change[] }
    assert.equal(page.totalElements, page.content.length)
    return page.content.map((change) => `${change.action} ${change.user}`)
  }

  /** An edit by anna, a bulk change and an upload by anonymous, a deletion; anna's edit dated `annaAt`. */
  const history = async (annaAt?: string) => {
    const [first, second] = await seedEntries(ctx.db, [
      carrera('CA 1', '10000.00', '5000.00'),
      carrera('CA 2', '20000.00', '8000.00'),
      carrera('CA 3', '30000.00', '0.00'),
    ])
    await updateGlassPrice(ctx.db.primary, String(first), { ...carrera('CA 1', '11000', '5000') }, 'anna')
    if (annaAt !== undefined) {
      await sql`UPDATE glass_price_change SET created_at = ${annaAt}::timestamptz WHERE created_by = 'anna'`.execute(
        ctx.db.primary,
      )
    }
    const bulk = await call('POST', '/list?model=CA', {
      priceTypeBase: 'RETAIL',
      priceTypeChange: 'RETAIL',
      difference: 100,
      round: 'WHOLE',
    })
    assert.equal(bulk.statusCode, 200, bulk.body)
    const upload = await app().inject({
      method: 'POST',
      url: `${pricesPath}/import?mode=upsert`,
      headers: { 'content-type': 'text/csv' },
      payload: 'manufacturer,brand,model,price,purchase\nSafilo,Carrera,CA 4,4000,2000\n',
    })
    assert.equal(upload.statusCode, 200, upload.body)
    assert.equal((await call('DELETE', `/${second}`)).statusCode, 200)
    return { first: first!, second: second!, bulk: Number(bulk.headers['x-price-change-batch']) }
  }

  test('by user (a case-insensitive part of the name) and by kinds of change, together', async () => {
    await history()
    assert.deepEqual(await changes(''), [
      'DELETE anonymous',
      'IMPORT anonymous',
      'BULK_CHANGE anonymous',
      'UPDATE anna',
    ])
    assert.deepEqual(await changes('?user=ANN'), ['UPDATE anna'])
    assert.deepEqual(await changes('?user=%20nobody%20'), [])
    assert.deepEqual(await changes('?action=IMPORT&action=BULK_CHANGE'), ['IMPORT anonymous', 'BULK_CHANGE anonymous'])
    assert.deepEqual(await changes('?action=UPDATE'), ['UPDATE anna'])
    assert.deepEqual(await changes('?action=UPDATE&user=anon'), [])
    assert.deepEqual(await changes('?action=DELETE&user=anon&size=1'), ['DELETE anonymous'])
    // Blank filters are no filters, as the listing's.
    assert.equal((await changes('?user=&from=&to=')).length, 4)
  })

  test('by days of the business time zone, both bounds inclusive', async () => {
    // 21:30 UTC on 10 January is 00:30 on 11 January in Moscow (BUSINESS_TIMEZONE).
    await history('2026-01-10T21:30:00Z')
    assert.deepEqual(await changes('?from=2026-01-11&to=2026-01-11'), ['UPDATE anna'])
    assert.deepEqual(await changes('?to=2026-01-10'), [])
    assert.deepEqual(await changes('?from=2026-01-12&user=anna'), [])
    assert.deepEqual(await changes('?to=2026-01-11'), ['UPDATE anna'])
    assert.equal((await changes('?from=2026-01-11')).length, 4)
    assert.equal((await changes('?from=2026-01-12')).length, 3)
  })

  test('a day that is not one, from after to, or an unknown kind is a 400 naming the field', async () => {
    for (const [query, field] of [
      ['?from=2026-02-30', 'from'],
      ['?to=yesterday', 'to'],
      ['?from=2026-03-02&to=2026-03-01', 'from'],
      ['?action=EDIT', 'action'],
    ] as const) {
      const response = await call('GET', `/changes${query}`)
      assert.equal(response.statusCode, 400, `${query}: ${response.body}`)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
      const problem = response.json()
      assert.ok(
        problem.errors.some((error: { field: string }) => error.field.replace(/\.\d+$/, '') === field),
        `${query}: ${response.body}`,
      )
    }
  })

  test("a change's entries: key, whether it exists, and old → new of what the change wrote", async () => {
    const { first, second, bulk } = await history()
    const response = await call('GET', `/changes/${bulk}/entries`)
    assert.equal(response.statusCode, 200, response.body)
    const page = response.json()
    assert.equal(page.totalElements, 3)
    const [one, two, three] = page.content
    assert.deepEqual(one, {
      entryId: first,
      manufacturer: 'Safilo',
      brand: 'Carrera',
      model: 'CA 1',
      exists: true,
      changes: [{ field: 'price', oldValue: 11000, newValue: 11100 }],
    })
    // Deleted since: its key as last recorded.
    assert.deepEqual(two, {
      entryId: second,
      manufacturer: 'Safilo',
      brand: 'Carrera',
      model: 'CA 2',
      exists: false,
      changes: [{ field: 'price', oldValue: 20000, newValue: 20100 }],
    })
    assert.equal(three.model, 'CA 3')
    const nextPage = (await call('GET', `/changes/${bulk}/entries?size=2&page=1`)).json()
    assert.deepEqual(
      [nextPage.totalElements, nextPage.content.map((entry: { model: string }) => entry.model)],
      [3, ['CA 3']],
    )

    const missing = await call('GET', '/changes/999999/entries')
    assert.equal(missing.statusCode, 404, missing.body)
    const bad = await call('GET', '/changes/abc/entries')
    assert.equal(bad.statusCode, 400, bad.body)
    assert.equal(bad.json().errors[0].field, 'batch')
  })
})
