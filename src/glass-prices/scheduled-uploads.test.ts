import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import {
  changeCount,
  clearGlassPrices,
  pricesPath,
  seedEntries,
  storedEntries,
  uploadPriceFile,
  waitFor,
} from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'

/*
 * Uploads scheduled for an effective date-time: checked when asked (a file with problems is refused at once),
 * stored, listed beside the scheduled bulk changes, cancellable, and applied once when due with the mode and
 * conflict choices given then; a conflict that appeared meanwhile fails the upload and writes nothing.
 */

const inSeconds = (seconds: number) => new Date(Date.now() + seconds * 1000).toISOString()

eachDatabase('scheduled uploads', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: async () => {
      await clearGlassPrices(ctx.db)
      await sql`DELETE FROM scheduled_price_change`.execute(ctx.db.primary)
    },
  })
  const schedule = (file: string, query: string) => uploadPriceFile(app(), file, query)
  const scheduled = async (id: number) =>
    (await app().inject({ method: 'GET', url: `${pricesPath}/scheduled/${id}` })).json()
  const settled = async (id: number) => {
    let item: Record<string, any> = {}
    await waitFor(async () => {
      item = await scheduled(id)
      return item.state !== 'pending'
    })
    return item
  }
  const prices = async () => (await storedEntries(ctx.db)).map((e) => [e.model, e.price, e.purchase])
  const seedCarrera = () =>
    seedEntries(ctx.db, [
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 1', price: '10000.00', purchase: '5000.00' },
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 2', price: '20000.00', purchase: '9000.00' },
    ])
  const file = 'manufacturer;brand;model;price;purchase\nSafilo;Carrera;CA 1;11990,00;5000,00\n'

  test('an upload with a future effectiveAt is pending, listed, then applied once with `scheduled` in its change', async () => {
    await seedCarrera()
    const effectiveAt = inSeconds(1.5)
    const answer = await schedule(file, `?mode=upsert&fileName=carrera.csv&effectiveAt=${effectiveAt}`)
    assert.equal(answer.statusCode, 202, answer.body)
    const item = answer.json()
    assert.equal(answer.headers.location, `${pricesPath}/scheduled/${item.id}`)
    assert.equal(item.operation, 'upload')
    assert.equal(item.state, 'pending')
    assert.equal(item.effectiveAt, effectiveAt)
    assert.deepEqual(
      { ...item.parameters },
      { fileName: 'carrera.csv', size: Buffer.byteLength(file), format: 'csv', mode: 'upsert', conflicts: 'refuse' },
    )
    assert.equal((await prices())[0]![1], '10000.00', 'nothing written before it is due')
    const listed = (await app().inject({ method: 'GET', url: `${pricesPath}/scheduled` })).json()
    assert.deepEqual(
      listed.content.map((i: { id: number; operation: string }) => [i.id, i.operation]),
      [[item.id, 'upload']],
    )

    const applied = await settled(item.id)
    assert.equal(applied.state, 'applied', JSON.stringify(applied))
    assert.deepEqual(await prices(), [
      ['CA 1', '11990.00', '5000.00'],
      ['CA 2', '20000.00', '9000.00'],
    ])
    const log = (await app().inject({ method: 'GET', url: `${pricesPath}/changes` })).json()
    assert.equal(log.content[0].id, applied.batch)
    assert.equal(log.content[0].action, 'IMPORT')
    assert.equal(log.content[0].parameters.scheduled, item.id)
    assert.equal(log.content[0].parameters.mode, 'upsert')
    // Once applied, more looks write nothing again.
    const changes = await changeCount(ctx.db)
    await app().scheduledChanges.poke()
    assert.equal(await changeCount(ctx.db), changes)
    const undo = await app().inject({ method: 'POST', url: `${pricesPath}/changes/${applied.batch}/revert` })
    assert.equal(undo.statusCode, 200, undo.body)
    assert.equal((await prices())[0]![1], '10000.00')
  })

  test('a scheduled upload cancelled before it is due never runs', async () => {
    await seedCarrera()
    const answer = await schedule(file, `?mode=upsert&effectiveAt=${inSeconds(3600)}`)
    assert.equal(answer.statusCode, 202, answer.body)
    const id = answer.json().id
    const cancelled = await app().inject({ method: 'DELETE', url: `${pricesPath}/scheduled/${id}` })
    assert.equal(cancelled.statusCode, 200, cancelled.body)
    assert.equal(cancelled.json().state, 'cancelled')
    await sql`UPDATE scheduled_price_change SET effective_at = now() - interval '1 minute'`.execute(ctx.db.primary)
    const changes = await changeCount(ctx.db)
    await app().scheduledChanges.poke()
    assert.equal((await scheduled(id)).state, 'cancelled')
    assert.equal(await changeCount(ctx.db), changes)
    assert.equal((await prices())[0]![1], '10000.00')
  })

  test('a file with problems or a bad effectiveAt is refused at once, nothing scheduled', async () => {
    await seedCarrera()
    const bad = 'manufacturer;brand;model;price;purchase\nSafilo;Carrera;CA 1;много;5000\n'
    const refused = await schedule(bad, `?mode=upsert&effectiveAt=${inSeconds(3600)}`)
    assert.equal(refused.statusCode, 422, refused.body)
    assert.equal(refused.json().code, 'import-rejected')
    assert.equal(refused.json().problems[0].line, 2)
    const badTime = await schedule(file, '?mode=upsert&effectiveAt=tomorrow')
    assert.equal(badTime.statusCode, 400, badTime.body)
    assert.equal(badTime.json().errors[0].field, 'effectiveAt')
    const listed = (await app().inject({ method: 'GET', url: `${pricesPath}/scheduled` })).json()
    assert.equal(listed.totalElements, 0)
  })

  test('a conflict that appeared after scheduling fails the upload with its problem, nothing written', async () => {
    const ids = await seedCarrera()
    const exported = (await app().inject({ method: 'GET', url: `${pricesPath}/export` })).body
    const edited = exported.replace('10000.00', '10990.00').replace('20000.00', '21990.00')
    const answer = await schedule(edited, `?mode=upsert&effectiveAt=${inSeconds(3600)}`)
    assert.equal(answer.statusCode, 202, answer.body)
    const id = answer.json().id
    // A colleague changes CA 2 before the upload is due.
    const edit = await app().inject({
      method: 'PUT',
      url: `${pricesPath}/${ids[1]}`,
      payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 2', price: '24990', purchase: '9000' },
    })
    assert.equal(edit.statusCode, 200, edit.body)
    const before = await prices()
    const changes = await changeCount(ctx.db)
    await sql`UPDATE scheduled_price_change SET effective_at = now()`.execute(ctx.db.primary)
    await app().scheduledChanges.poke()
    const failed = await scheduled(id)
    assert.equal(failed.state, 'failed', JSON.stringify(failed))
    assert.equal(failed.problem.code, 'upload-conflicts')
    assert.equal(failed.problem.conflictCount, 1)
    assert.equal(failed.batch, null)
    assert.deepEqual(await prices(), before)
    assert.equal(await changeCount(ctx.db), changes)
  })
})
