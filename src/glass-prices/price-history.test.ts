import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  changeCount,
  clearGlassPrices,
  numberedEntries,
  pricesPath,
  seedEntries,
  storedEntries,
  storedEntry,
} from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'

/* History and undo of the glass price list (SPEC §6), through the API. */

const entry = { manufacturer: 'Safilo', brand: 'Carrera', model: 'CARRERA 8862', price: 11990, purchase: 4800 }
const raise = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.1, round: 'TENS' }

eachDatabase('glass price list: history and revert', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: () => clearGlassPrices(ctx.db),
  })

  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    app().inject({ method, url: `${pricesPath}${url}`, ...(payload ? { payload } : {}) })
  const bulk = async (body: object, query = '') => {
    const response = await call('POST', `/list${query}`, body)
    assert.equal(response.statusCode, 200, response.body)
    return Number(response.headers['x-price-change-batch'])
  }
  const revert = (batch: number | string) => call('POST', `/changes/${batch}/revert`)

  test('every create, update, delete and bulk change is listed in /changes, newest first, with its parameters', async () => {
    const created = (await call('POST', '', entry)).json()
    await call('PUT', `/${created.id}`, { ...entry, price: 12990 })
    const batch = await bulk(raise, '?model=8862')
    assert.equal((await call('DELETE', `/${created.id}`)).statusCode, 200)
    const response = await call('GET', '/changes')
    assert.equal(response.statusCode, 200)
    const page = response.json()
    assert.equal(page.totalElements, 4)
    assert.equal(page.size, 20)
    assert.deepEqual(
      page.content.map((change: { action: string }) => change.action),
      ['DELETE', 'BULK_CHANGE', 'UPDATE', 'CREATE'],
    )
    const bulkChange = page.content[1]
    assert.deepEqual(bulkChange, {
      id: batch,
      action: 'BULK_CHANGE',
      createdAt: bulkChange.createdAt,
      user: 'anonymous',
      changedCount: 1,
      parameters: { filter: { model: '8862' }, ...raise, coefficient: '1.1' },
      reverts: null,
      revertedBy: null,
    })
    assert.ok(!Number.isNaN(Date.parse(bulkChange.createdAt)))
    const second = (await call('GET', '/changes?size=3&page=1')).json()
    assert.deepEqual(
      [second.content.length, second.content[0].action, second.totalPages, second.last],
      [1, 'CREATE', 2, true],
    )
  })

  test("an entry's history lists its changes newest first, old → new per field, and outlives the entry", async () => {
    const { id } = (await call('POST', '', entry)).json()
    await call('PUT', `/${id}`, { ...entry, model: 'CARRERA 8862/N', purchase: '4900.50' })
    const batch = await bulk(raise)
    await call('DELETE', `/${id}`)
    const response = await call('GET', `/${id}/history`)
    assert.equal(response.statusCode, 200)
    const items = response.json().content
    assert.deepEqual(
      items.map((item: { action: string; batch: number }) => item.action),
      ['DELETE', 'BULK_CHANGE', 'UPDATE', 'CREATE'],
    )
    assert.equal(items[1].batch, batch)
    assert.deepEqual(items[1].changes, [{ field: 'price', oldValue: 11990, newValue: 13190 }])
    assert.deepEqual(items[2].changes, [
      { field: 'model', oldValue: 'CARRERA 8862', newValue: 'CARRERA 8862/N' },
      { field: 'purchase', oldValue: 4800, newValue: 4900.5 },
    ])
    assert.deepEqual(items[3].changes, [
      { field: 'manufacturer', oldValue: null, newValue: 'Safilo' },
      { field: 'brand', oldValue: null, newValue: 'Carrera' },
      { field: 'model', oldValue: null, newValue: 'CARRERA 8862' },
      { field: 'price', oldValue: null, newValue: 11990 },
      { field: 'purchase', oldValue: null, newValue: 4800 },
    ])
    assert.deepEqual(
      items[0].changes.map((change: { newValue: unknown }) => change.newValue),
      [null, null, null, null, null],
    )
    const paged = (await call('GET', `/${id}/history?size=1&page=3`)).json()
    assert.deepEqual([paged.content[0].action, paged.totalElements, paged.last], ['CREATE', 4, true])
  })

  test('history of an id that never existed is a 404; of a malformed id a 400', async () => {
    assert.equal((await call('GET', '/987654/history')).statusCode, 404)
    assert.equal((await call('GET', '/abc/history')).statusCode, 400)
  })

  test('revert of a bulk change restores the old prices, is itself a change, and marks the original reverted', async () => {
    const ids = await seedEntries(ctx.db, [
      { ...entry, model: 'a', price: 1000 },
      { ...entry, model: 'b', price: 2000 },
    ])
    const batch = await bulk(raise)
    const response = await revert(batch)
    assert.equal(response.statusCode, 200)
    const result = response.json()
    assert.deepEqual(result, {
      batch: result.batch,
      reverted: batch,
      restoredCount: 2,
      conflictCount: 0,
      conflicts: [],
    })
    assert.deepEqual(
      (await storedEntries(ctx.db)).map((stored) => [stored.id, stored.price, stored.version]),
      [
        [ids[0], '1000.00', 3],
        [ids[1], '2000.00', 3],
      ],
    )
    const changes = (await call('GET', '/changes')).json().content
    assert.deepEqual(
      changes.map((change: Record<string, unknown>) => [change.id, change.action, change.reverts, change.revertedBy]),
      [
        [result.batch, 'REVERT', batch, null],
        [batch, 'BULK_CHANGE', null, result.batch],
      ],
    )
    const history = (await call('GET', `/${ids[0]}/history`)).json().content
    assert.deepEqual(history[0].changes, [{ field: 'price', oldValue: 1100, newValue: 1000 }])
  })

  test('reverting the same change twice is a 409 and does not re-apply anything', async () => {
    await seedEntries(ctx.db, [{ ...entry, price: 1000 }])
    const batch = await bulk(raise)
    assert.equal((await revert(batch)).statusCode, 200)
    await call('PUT', `/${(await storedEntries(ctx.db))[0]!.id}`, { ...entry, price: 1100 })
    const again = await revert(batch)
    assert.equal(again.statusCode, 409)
    assert.match(again.json().detail, /already reverted/)
    assert.equal((await storedEntries(ctx.db))[0]?.price, '1100.00')
  })

  test('revert after a later edit of one entry restores the others and reports that one as a conflict', async () => {
    const [edited, untouched] = await seedEntries(ctx.db, [
      { ...entry, model: 'edited', price: 1000 },
      { ...entry, model: 'untouched', price: 2000 },
    ])
    const batch = await bulk(raise)
    await call('PUT', `/${edited}`, { ...entry, model: 'edited', price: 1500 })
    const response = await revert(batch)
    assert.equal(response.statusCode, 200)
    const result = response.json()
    assert.deepEqual([result.restoredCount, result.conflictCount], [1, 1])
    assert.deepEqual(result.conflicts, [{ entryId: edited, reason: 'CHANGED' }])
    assert.equal((await storedEntry(ctx.db, edited!))?.price, '1500.00', 'the later edit stays')
    assert.equal((await storedEntry(ctx.db, untouched!))?.price, '2000.00')
  })

  test('revert when every entry was changed since is a 409 listing them, and records nothing', async () => {
    const [id] = await seedEntries(ctx.db, [{ ...entry, price: 1000 }])
    const batch = await bulk(raise)
    await call('DELETE', `/${id}`)
    const before = await changeCount(ctx.db)
    const response = await revert(batch)
    assert.equal(response.statusCode, 409)
    assert.deepEqual(response.json().conflicts, [{ entryId: id, reason: 'DELETED' }])
    assert.equal(await changeCount(ctx.db), before)
    assert.equal((await call('GET', '/changes')).json().content[1].revertedBy, null)
  })

  test('revert of a bulk change of purchase prices restores exactly the entries that still hold its values', async () => {
    // Each entry meets one fate after the bulk change; the revert must tell them apart by the field it changed.
    const fates = ['untouched', 'purchase edited', 'retail edited', 'purchase edited and set back', 'deleted'] as const
    const seeds = numberedEntries('Fate', 20)
    const ids = await seedEntries(ctx.db, seeds)
    const batch = await bulk({
      priceTypeBase: 'PURCHASE',
      priceTypeChange: 'PURCHASE',
      coefficient: 1.2,
      round: 'TENS',
    })
    const afterBulk = new Map((await storedEntries(ctx.db)).map((stored) => [stored.id, stored]))
    const fateOf = (index: number) => fates[index % fates.length] as (typeof fates)[number]
    for (const [index, id] of ids.entries()) {
      const seed = seeds[index] as (typeof seeds)[number]
      const purchase = Number(afterBulk.get(id)?.purchase)
      const put = (body: object) => call('PUT', `/${id}`, { ...seed, purchase, ...body })
      const fate = fateOf(index)
      if (fate === 'purchase edited') assert.equal((await put({ purchase: purchase + 7 })).statusCode, 200)
      if (fate === 'retail edited') assert.equal((await put({ price: Number(seed.price) + 3 })).statusCode, 200)
      if (fate === 'purchase edited and set back') {
        assert.equal((await put({ purchase: purchase + 9 })).statusCode, 200)
        assert.equal((await put({})).statusCode, 200)
      }
      if (fate === 'deleted') assert.equal((await call('DELETE', `/${id}`)).statusCode, 200)
    }
    const response = await revert(batch)
    assert.equal(response.statusCode, 200, response.body)
    const result = response.json()
    const expectedConflicts = ids.flatMap((id, index) => {
      const fate = fateOf(index)
      if (fate === 'purchase edited') return [{ entryId: id, reason: 'CHANGED' }]
      return fate === 'deleted' ? [{ entryId: id, reason: 'DELETED' }] : []
    })
    assert.deepEqual(result.conflicts, expectedConflicts)
    assert.deepEqual([result.restoredCount, result.conflictCount], [ids.length - expectedConflicts.length, 8])
    const stored = new Map((await storedEntries(ctx.db)).map((entry) => [entry.id, entry]))
    for (const [index, id] of ids.entries()) {
      const seed = seeds[index] as (typeof seeds)[number]
      const fate = fateOf(index)
      const now = stored.get(id)
      if (fate === 'deleted') {
        assert.equal(now, undefined, `entry ${index} stays deleted`)
        continue
      }
      const purchase = Number(afterBulk.get(id)?.purchase)
      const expected =
        fate === 'purchase edited'
          ? [Number(seed.price), purchase + 7]
          : [Number(seed.price) + (fate === 'retail edited' ? 3 : 0), Number(seed.purchase)]
      assert.deepEqual([Number(now?.price), Number(now?.purchase)], expected, `entry ${index}: ${fate}`)
    }
    const history = (await call('GET', `/${ids[0]}/history`)).json().content
    assert.deepEqual(history[0].changes, [
      {
        field: 'purchase',
        oldValue: Number(afterBulk.get(ids[0] as number)?.purchase),
        newValue: Number(seeds[0]?.purchase),
      },
    ])
    // Reverting the revert applies the bulk change again to the entries it restored.
    const again = await revert(result.batch)
    assert.equal(again.statusCode, 200, again.body)
    assert.equal(again.json().restoredCount, result.restoredCount)
    assert.equal((await storedEntry(ctx.db, ids[0] as number))?.purchase, afterBulk.get(ids[0] as number)?.purchase)
  })

  test('revert of a bulk change that changed nothing is an empty revert: 200, nothing restored, nothing in conflict', async () => {
    await seedEntries(ctx.db, [{ ...entry, price: 1000 }])
    const before = await storedEntries(ctx.db)
    const batch = await bulk(raise, '?manufacturer=Nobody')
    const response = await revert(batch)
    assert.equal(response.statusCode, 200, response.body)
    const result = response.json()
    assert.deepEqual([result.restoredCount, result.conflictCount, result.conflicts], [0, 0, []])
    assert.deepEqual(await storedEntries(ctx.db), before)
    assert.equal((await call('GET', '/changes')).json().content[1].revertedBy, result.batch)
  })

  test('revert of a delete re-creates the entry under its id; revert of a create deletes it', async () => {
    const { id } = (await call('POST', '', entry)).json()
    const createBatch = (await call('GET', '/changes')).json().content[0].id
    await call('DELETE', `/${id}`)
    const deleteBatch = (await call('GET', '/changes')).json().content[0].id
    const restored = await revert(deleteBatch)
    assert.equal(restored.statusCode, 200)
    assert.deepEqual((await call('GET', `/${id}`)).json(), { id, ...entry })
    const removed = await revert(createBatch)
    assert.equal(removed.statusCode, 200)
    assert.equal((await call('GET', `/${id}`)).statusCode, 404)
  })

  test('revert of an update restores every field; reverting the revert applies the update again', async () => {
    const [id] = await seedEntries(ctx.db, [entry])
    await call('PUT', `/${id}`, { ...entry, brand: 'Carrera Kids', price: 9990 })
    const update = (await call('GET', '/changes')).json().content[0].id
    const first = (await revert(update)).json()
    assert.deepEqual((await call('GET', `/${id}`)).json(), { id, ...entry })
    assert.equal((await revert(first.batch)).statusCode, 200)
    assert.deepEqual((await call('GET', `/${id}`)).json(), { id, ...entry, brand: 'Carrera Kids', price: 9990 })
  })

  test('revert of a delete whose key was taken since by a new entry is a DUPLICATE conflict', async () => {
    const [id] = await seedEntries(ctx.db, [entry])
    await call('DELETE', `/${id}`)
    const deleted = (await call('GET', '/changes')).json().content[0].id
    assert.equal((await call('POST', '', { ...entry, model: 'carrera 8862' })).statusCode, 200)
    const response = await revert(deleted)
    assert.equal(response.statusCode, 409)
    assert.deepEqual(response.json().conflicts, [{ entryId: id, reason: 'DUPLICATE' }])
  })

  test('revert of an unknown change is a 404; of a malformed id a 400 naming batch', async () => {
    assert.equal((await revert(424242)).statusCode, 404)
    const malformed = await revert('x1')
    assert.equal(malformed.statusCode, 400)
    assert.deepEqual(
      malformed.json().errors.map((error: { field: string }) => error.field),
      ['batch'],
    )
  })
})
