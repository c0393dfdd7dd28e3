import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import {
  clearGlassPrices,
  type EntrySeed,
  pricesPath,
  rayBanEntries,
  seedEntries,
  storedEntries,
  waitFor,
} from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'

/*
 * Exact text filters of the glass price list (beyond the contract): `exact` names the text filters compared whole,
 * on the keys' normal form, in the listing, the dry run, the bulk change (also as a job) and the export. A brand
 * picked from a list must not also select every brand containing it.
 */

const entries: EntrySeed[] = [
  ...rayBanEntries,
  { manufacturer: 'Оптика', brand: 'Полёт', model: 'П-1', price: 3000, purchase: 1500 },
  { manufacturer: 'Оптика', brand: 'Полет Плюс', model: 'П-2', price: 3100, purchase: 1600 },
]

const tenPercent = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.1, round: 'WHOLE' }

eachDatabase('glass price list: exact text filters', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: async () => {
      await clearGlassPrices(ctx.db)
      await sql`DELETE FROM write_job`.execute(ctx.db.primary)
      await seedEntries(ctx.db, entries)
    },
  })

  const listing = async (query: string) => {
    const response = await app().inject({ method: 'GET', url: `${pricesPath}/list?size=50&${query}` })
    assert.equal(response.statusCode, 200, response.body)
    const page = response.json()
    return { total: page.totalElements as number, models: (page.content as { model: string }[]).map((e) => e.model) }
  }
  const pricesByModel = async () =>
    Object.fromEntries((await storedEntries(ctx.db)).map((entry) => [entry.model, entry.price]))

  test('the listing: a substring takes Ray-Ban Junior too, the exact brand only Ray-Ban in any case', async () => {
    const rayBan = { total: 3, models: ['RB 3025', 'RB 2140', 'RB 4171'] }
    assert.deepEqual(await listing('brand=Ray-Ban'), { total: 5, models: [...rayBan.models, 'RJ 9052', 'RJ 1555'] })
    assert.deepEqual(await listing('brand=Ray-Ban&exact=brand'), rayBan)
    // Case, spaces around, a no-break space and ё/е: the same normal form, still exact.
    for (const brand of ['RAY-BAN', '%20ray-ban%20', 'Ray-Ban%C2%A0']) {
      assert.deepEqual(await listing(`brand=${brand}&exact=brand`), rayBan, brand)
    }
    assert.deepEqual(await listing(`brand=${encodeURIComponent('ПОЛЕТ')}&exact=brand`), { total: 1, models: ['П-1'] })
    assert.deepEqual(await listing(`brand=${encodeURIComponent('полет')}`), { total: 2, models: ['П-1', 'П-2'] })
    // A part of the value is no exact match; several exact filters combine; a name without its filter is no filter.
    assert.deepEqual(await listing('brand=Ray&exact=brand'), { total: 0, models: [] })
    assert.deepEqual(await listing('brand=Ray-Ban&model=rb%203025&exact=brand&exact=model'), {
      total: 1,
      models: ['RB 3025'],
    })
    assert.deepEqual(await listing('model=RJ&exact=brand'), { total: 2, models: ['RJ 9052', 'RJ 1555'] })
  })

  test('an unknown name in exact is a 400 naming it, and a bulk change with one writes nothing', async () => {
    const response = await app().inject({
      method: 'GET',
      url: `${pricesPath}/list?brand=Ray-Ban&exact=brand&exact=colour&exact=price`,
    })
    assert.equal(response.statusCode, 400, response.body)
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
    const problem = response.json()
    assert.equal(problem.errors.length, 1, response.body)
    assert.equal(problem.errors[0].field, 'exact')
    assert.match(problem.errors[0].message, /colour, price/)
    assert.match(problem.errors[0].message, /manufacturer, brand, model/)

    const before = await pricesByModel()
    const bulk = await app().inject({
      method: 'POST',
      url: `${pricesPath}/list?brand=Ray-Ban&exact=Brand`,
      payload: tenPercent,
    })
    assert.equal(bulk.statusCode, 400, bulk.body)
    assert.equal(bulk.json().errors[0].field, 'exact')
    assert.match(bulk.json().errors[0].message, /Brand/)
    assert.deepEqual(await pricesByModel(), before)
  })

  test('the dry run and the bulk change with the exact brand leave Ray-Ban Junior untouched', async () => {
    const preview = await app().inject({
      method: 'POST',
      url: `${pricesPath}/list?brand=RAY-BAN%C2%A0&exact=brand&dryRun=true`,
      payload: tenPercent,
    })
    assert.equal(preview.statusCode, 200, preview.body)
    const dryRun = preview.json()
    assert.equal(dryRun.selectedCount, 3)
    assert.equal(dryRun.changedCount, 3)
    assert.deepEqual(
      dryRun.changes.map((row: { model: string; oldValue: number; newValue: number }) => [
        row.model,
        row.oldValue,
        row.newValue,
      ]),
      [
        ['RB 3025', 1000, 1100],
        ['RB 2140', 2000, 2200],
        ['RB 4171', 3000, 3300],
      ],
    )

    const applied = await app().inject({
      method: 'POST',
      url: `${pricesPath}/list?brand=RAY-BAN%C2%A0&exact=brand`,
      payload: tenPercent,
    })
    assert.equal(applied.statusCode, 200, applied.body)
    assert.equal(applied.headers['x-changed-count'], '3')
    assert.deepEqual(await pricesByModel(), {
      'RB 3025': '1100.00',
      'RB 2140': '2200.00',
      'RB 4171': '3300.00',
      'RJ 9052': '1500.00',
      'RJ 1555': '2500.00',
      'П-1': '3000.00',
      'П-2': '3100.00',
    })
    // The change log records the selection as it was asked, exact included.
    const changes = (await app().inject({ method: 'GET', url: `${pricesPath}/changes` })).json()
    assert.deepEqual(changes.content[0].parameters.filter, { brand: 'RAY-BAN', exact: ['brand'] })
  })

  test('the bulk change as a job honours the exact brand', async () => {
    const accepted = await app().inject({
      method: 'POST',
      url: `${pricesPath}/list?brand=ray-ban&exact=brand`,
      headers: { prefer: 'respond-async, wait=0' },
      payload: tenPercent,
    })
    assert.equal(accepted.statusCode, 202, accepted.body)
    let job: Record<string, any> = {}
    await waitFor(async () => {
      job = (await app().inject({ method: 'GET', url: String(accepted.headers.location) })).json()
      return job.state !== 'running'
    })
    assert.equal(job.state, 'succeeded', JSON.stringify(job))
    assert.equal(job.result.headers['x-changed-count'], '3')
    const prices = await pricesByModel()
    assert.deepEqual(
      [prices['RB 3025'], prices['RB 2140'], prices['RB 4171'], prices['RJ 9052'], prices['RJ 1555']],
      ['1100.00', '2200.00', '3300.00', '1500.00', '2500.00'],
    )
  })

  test('the export writes the exact selection only', async () => {
    const exported = async (query: string) => {
      const response = await app().inject({ method: 'GET', url: `${pricesPath}/export?${query}` })
      assert.equal(response.statusCode, 200, response.body)
      return response.body
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split(',')[2])
    }
    assert.deepEqual(await exported('brand=Ray-Ban'), ['RB 3025', 'RB 2140', 'RB 4171', 'RJ 9052', 'RJ 1555'])
    assert.deepEqual(await exported('brand=Ray-Ban&exact=brand'), ['RB 3025', 'RB 2140', 'RB 4171'])
  })
})
