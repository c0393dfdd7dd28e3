import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import {
  changeCount,
  clearGlassPrices,
  pricesPath,
  seedEntries,
  storedEntry,
  waitFor,
} from '../../test/fixtures/glass-prices.js'
import { buildPgliteTemplate, buildTestApp, eachDatabase, useTestApp } from '../../test/harness.js'
import { type Database, openDatabase } from '../db/database.js'

/*
 * The price manager's vocabulary of the bulk change: a percentage markup or discount, price endings to the
 * nearest or upwards, the dry run's totals and average markup, and changes scheduled for an effective date-time
 * (pending, cancellable, applied once by one instance when due, also after a restart).
 */

const retail = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL' }
const entry = (model: string, price: number | string, purchase: number | string = 100) => ({
  manufacturer: 'Vocab',
  brand: 'Words',
  model,
  price,
  purchase,
})

eachDatabase('bulk change vocabulary', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: async () => {
      await clearGlassPrices(ctx.db)
      await sql`DELETE FROM scheduled_price_change`.execute(ctx.db.primary)
    },
  })
  const change = (body: Record<string, unknown>, query = 'brand=Words') =>
    app().inject({ method: 'POST', url: `${pricesPath}/list?${query}`, payload: body })
  const priceOf = async (id: number) => (await storedEntry(ctx.db, id))?.price

  test('price endings …90, …99, …00 round upwards and to the nearest', async () => {
    const cases = [
      ['ENDS_90', 'UP', '1290.00'],
      ['ENDS_99', 'UP', '1299.00'],
      ['ENDS_00', 'UP', '1300.00'],
      ['ENDS_90', 'NEAREST', '1190.00'],
      ['ENDS_99', null, '1199.00'],
      ['ENDS_00', 'NEAREST', '1200.00'],
      ['TENS', 'UP', '1240.00'],
    ] as const
    for (const [round, direction, expected] of cases) {
      await clearGlassPrices(ctx.db)
      const [id] = await seedEntries(ctx.db, [entry('E 1', 1234)])
      const response = await change({ ...retail, round, direction })
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(await priceOf(id!), expected, `${round} ${direction}`)
    }
    // A tie between two endings goes up; an ending already held stays.
    await clearGlassPrices(ctx.db)
    const [tie, held] = await seedEntries(ctx.db, [entry('T 1', 1240), entry('T 2', 1290)])
    assert.equal((await change({ ...retail, round: 'ENDS_90' })).statusCode, 200)
    assert.equal(await priceOf(tie!), '1290.00')
    assert.equal(await priceOf(held!), '1290.00')
  })

  test('a percentage is exactly 1 + percent/100: +10 % with ending …90, −15 % to whole roubles', async () => {
    const [a, b] = await seedEntries(ctx.db, [entry('P 1', 1150), entry('P 2', '1999.99')])
    const markup = await change({ ...retail, percent: 10, round: 'ENDS_90', direction: 'UP' })
    assert.equal(markup.statusCode, 200, markup.body)
    assert.equal(await priceOf(a!), '1290.00') // 1265 → …90 upwards
    assert.equal(await priceOf(b!), '2290.00') // 2199.989 → 2290
    const discount = await change({ ...retail, percent: '-15', round: 'WHOLE' })
    assert.equal(discount.statusCode, 200, discount.body)
    assert.equal(await priceOf(a!), '1097.00') // 1096.5 → 1097 (halves up)
    assert.equal(await priceOf(b!), '1947.00') // 1946.5 → 1947

    // The change log records the terms; the undo restores the recorded prices.
    const log = (await app().inject({ method: 'GET', url: `${pricesPath}/changes` })).json()
    const [last, first] = log.content
    assert.equal(last.parameters.percent, '-15')
    assert.equal(last.parameters.round, 'WHOLE')
    assert.equal(first.parameters.percent, '10')
    assert.equal(first.parameters.round, 'ENDS_90')
    assert.equal(first.parameters.direction, 'UP')
    assert.equal(first.parameters.coefficient, undefined)
    const undo = await app().inject({ method: 'POST', url: `${pricesPath}/changes/${last.id}/revert` })
    assert.equal(undo.statusCode, 200, undo.body)
    assert.equal(await priceOf(a!), '1290.00')
  })

  test('bad terms are a 400 naming the field, and change nothing', async () => {
    const [id] = await seedEntries(ctx.db, [entry('B 1', 1000)])
    const before = await changeCount(ctx.db)
    const bad: [Record<string, unknown>, string][] = [
      [{ ...retail, coefficient: 1.1, percent: 10, round: 'WHOLE' }, 'percent'],
      [{ ...retail, percent: -100, round: 'WHOLE' }, 'percent'],
      [{ ...retail, percent: '12.34567', round: 'WHOLE' }, 'percent'],
      [{ ...retail, round: 'ENDS_95' }, 'round'],
      [{ ...retail, round: 'TENS', direction: 'DOWNWARDS' }, 'direction'],
      [{ ...retail, round: 'TENS', effectiveAt: 'tomorrow' }, 'effectiveAt'],
      [{ ...retail, round: 'TENS', effectiveAt: '2030-01-01T09:00:00' }, 'effectiveAt'],
    ]
    for (const [body, field] of bad) {
      const response = await change(body)
      assert.equal(response.statusCode, 400, `${JSON.stringify(body)}: ${response.body}`)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
      assert.deepEqual(
        response.json().errors.map((error: { field: string }) => error.field),
        [field],
      )
    }
    assert.equal(await priceOf(id!), '1000.00')
    assert.equal(await changeCount(ctx.db), before)
  })

  test('the dry run states the totals before and after and the average markup, exactly', async () => {
    await seedEntries(ctx.db, [entry('D 1', '1000.10', '500.05'), entry('D 2', 2000, 1000), entry('D 3', 5, 0)])
    const preview = await change({ ...retail, percent: 10, round: 'WHOLE' }, 'brand=Words&dryRun=true')
    assert.equal(preview.statusCode, 200, preview.body)
    assert.deepEqual(preview.json().totals, {
      retail: { old: '3005.10', new: '3306.00' }, // 1100 + 2200 + 6 (5.5 halves up)
      purchase: { old: '1500.05', new: '1500.05' },
      averageMarkup: { old: '100.33', new: '120.39' },
    })
    // Changing the purchase price moves its total and the markup the other way.
    const purchase = await change(
      { priceTypeBase: 'PURCHASE', priceTypeChange: 'PURCHASE', coefficient: 2, round: 'WHOLE' },
      'brand=Words&dryRun=true&model=D%202',
    )
    assert.deepEqual(purchase.json().totals, {
      retail: { old: '2000.00', new: '2000.00' },
      purchase: { old: '1000.00', new: '2000.00' },
      averageMarkup: { old: '100.00', new: '0.00' },
    })
    const none = await change({ ...retail, round: 'WHOLE' }, 'brand=Nothing&dryRun=true')
    assert.deepEqual(none.json().totals.averageMarkup, { old: null, new: null })
    assert.equal(none.json().totals.retail.old, '0')
  })

  test('a future effectiveAt schedules the change: pending, listed, cancellable; 409 once cancelled', async () => {
    const [id] = await seedEntries(ctx.db, [entry('S 1', 1000)])
    const effectiveAt = new Date(Date.now() + 3_600_000).toISOString().replace('Z', '+00:00')
    const scheduled = await change({ ...retail, percent: 10, round: 'WHOLE', effectiveAt })
    assert.equal(scheduled.statusCode, 202, scheduled.body)
    const body = scheduled.json()
    assert.equal(scheduled.headers.location, `${pricesPath}/scheduled/${body.id}`)
    assert.equal(body.state, 'pending')
    assert.equal(body.effectiveAt, new Date(effectiveAt).toISOString())
    assert.deepEqual(body.parameters.filter, { brand: 'Words' })
    assert.equal(body.parameters.percent, '10')
    await app().scheduledChanges.poke()
    assert.equal(await priceOf(id!), '1000.00')
    const listed = (await app().inject({ method: 'GET', url: `${pricesPath}/scheduled` })).json()
    assert.deepEqual(
      listed.content.map((item: { id: number; state: string }) => [item.id, item.state]),
      [[body.id, 'pending']],
    )

    const cancelled = await app().inject({ method: 'DELETE', url: `${pricesPath}/scheduled/${body.id}` })
    assert.equal(cancelled.statusCode, 200, cancelled.body)
    assert.equal(cancelled.json().state, 'cancelled')
    assert.equal(cancelled.json().cancelledBy, 'anonymous')
    // Even when due, a cancelled change never runs.
    await sql`UPDATE scheduled_price_change SET effective_at = now() - interval '1 minute'`.execute(ctx.db.primary)
    await app().scheduledChanges.poke()
    assert.equal(await priceOf(id!), '1000.00')
    const again = await app().inject({ method: 'DELETE', url: `${pricesPath}/scheduled/${body.id}` })
    assert.equal(again.statusCode, 409, again.body)
    assert.equal(again.json().code, 'scheduled-change-finished')
    const missing = await app().inject({ method: 'DELETE', url: `${pricesPath}/scheduled/999999` })
    assert.equal(missing.statusCode, 404)
  })

  test('a scheduled change applies when due, to the selection of that time, with history, undo and a 409 cancel', async () => {
    const [first] = await seedEntries(ctx.db, [entry('A 1', 1000)])
    const effectiveAt = new Date(Date.now() + 1_500).toISOString()
    const scheduled = await change({ ...retail, percent: 10, round: 'ENDS_90', direction: 'UP', effectiveAt })
    assert.equal(scheduled.statusCode, 202, scheduled.body)
    const id = scheduled.json().id
    // An entry created before the change falls due is selected too.
    const [second] = await seedEntries(ctx.db, [entry('A 2', 2000)])
    let applied: Record<string, any> = {}
    await waitFor(async () => {
      applied = (await app().inject({ method: 'GET', url: `${pricesPath}/scheduled/${id}` })).json()
      return applied.state !== 'pending'
    })
    assert.equal(applied.state, 'applied', JSON.stringify(applied))
    assert.ok(new Date(applied.finishedAt).getTime() >= new Date(effectiveAt).getTime())
    assert.equal(await priceOf(first!), '1190.00')
    assert.equal(await priceOf(second!), '2290.00')
    const log = (await app().inject({ method: 'GET', url: `${pricesPath}/changes` })).json()
    assert.equal(log.content[0].id, applied.batch)
    assert.equal(log.content[0].parameters.scheduled, id)
    assert.equal(log.content[0].changedCount, 2)
    const cancel = await app().inject({ method: 'DELETE', url: `${pricesPath}/scheduled/${id}` })
    assert.equal(cancel.statusCode, 409, cancel.body)
    const undo = await app().inject({ method: 'POST', url: `${pricesPath}/changes/${applied.batch}/revert` })
    assert.equal(undo.statusCode, 200, undo.body)
    assert.equal(await priceOf(first!), '1000.00')
  })

  test('a scheduled change that would give a price ≤ 0 when due fails with its problem and writes nothing', async () => {
    const [id] = await seedEntries(ctx.db, [entry('F 1', 40)])
    const effectiveAt = new Date(Date.now() + 3_600_000).toISOString()
    const scheduled = await change({ ...retail, round: 'HUNDREDS', effectiveAt })
    assert.equal(scheduled.statusCode, 202, scheduled.body)
    await sql`UPDATE scheduled_price_change SET effective_at = now()`.execute(ctx.db.primary)
    const before = await changeCount(ctx.db)
    await app().scheduledChanges.poke()
    const failed = (await app().inject({ method: 'GET', url: `${pricesPath}/scheduled/${scheduled.json().id}` })).json()
    assert.equal(failed.state, 'failed')
    assert.equal(failed.problem.status, 422)
    assert.equal(failed.problem.code, 'bulk-change-rejected')
    assert.equal(await priceOf(id!), '40.00')
    assert.equal(await changeCount(ctx.db), before)
  })

  // An embedded database belongs to one process: two instances need the server.
  if (ctx.target === 'postgres') {
    test('two instances on one database apply a due change exactly once', async () => {
      const [id] = await seedEntries(ctx.db, [entry('I 1', 1000)])
      const scheduled = await change({
        ...retail,
        coefficient: 2,
        round: 'WHOLE',
        effectiveAt: new Date(Date.now() + 3_600_000).toISOString(),
      })
      const other = await buildTestApp(await ctx.openAnother())
      try {
        await sql`UPDATE scheduled_price_change SET effective_at = now()`.execute(ctx.db.primary)
        const before = await changeCount(ctx.db)
        // Both pollers race, and each is poked again: one claims, the other skips the locked row.
        await Promise.all([
          app().scheduledChanges.poke(),
          other.scheduledChanges.poke(),
          app().scheduledChanges.poke(),
          other.scheduledChanges.poke(),
        ])
        await waitFor(async () => {
          const { rows } = await sql<{ state: string }>`
            SELECT state FROM scheduled_price_change WHERE id = ${scheduled.json().id}`.execute(ctx.db.primary)
          return rows[0]?.state === 'applied'
        })
        assert.equal(await priceOf(id!), '2000.00')
        assert.equal(await changeCount(ctx.db), before + 1)
      } finally {
        await other.close()
      }
    })
  }

  test('a change that fell due while the service was down runs at the next start', async () => {
    // The suite's own instance is stopped; each life of the service opens the database anew: another connection
    // set to the server's schema, or the embedded data directory closed and opened again.
    await app().close()
    const dataDir = ctx.target === 'pglite' ? join(mkdtempSync(join(tmpdir(), 'optics-scheduled-')), 'data') : undefined
    const open = () => (dataDir === undefined ? ctx.openAnother() : openDatabase({ dataDir }))
    const stop = async (service: FastifyInstance, db: Database) => {
      await service.close()
      if (dataDir !== undefined) await db.close()
    }
    const price = async (db: Database) =>
      (await sql<{ price: string }>`SELECT price FROM glasses_price WHERE model = 'R 1'`.execute(db.primary)).rows[0]
        ?.price
    try {
      if (dataDir !== undefined) await buildPgliteTemplate(dataDir)
      let db = await open()
      await seedEntries(db, [entry('R 1', 1000)])
      let service = await buildTestApp(db)
      const scheduled = await service.inject({
        method: 'POST',
        url: `${pricesPath}/list?brand=Words`,
        payload: { ...retail, percent: 50, round: 'WHOLE', effectiveAt: new Date(Date.now() + 300).toISOString() },
      })
      assert.equal(scheduled.statusCode, 202, scheduled.body)
      await stop(service, db)
      await new Promise((resolve) => setTimeout(resolve, 500))
      db = await open()
      assert.equal(await price(db), '1000.00')
      service = await buildTestApp(db)
      try {
        await waitFor(async () => (await price(db)) === '1500.00')
        const state = await service.inject({ method: 'GET', url: `${pricesPath}/scheduled/${scheduled.json().id}` })
        assert.equal(state.json().state, 'applied')
      } finally {
        await stop(service, db)
      }
    } finally {
      if (dataDir !== undefined) rmSync(join(dataDir, '..'), { recursive: true, force: true })
    }
  })
})
