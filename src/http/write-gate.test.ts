import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import {
  clearGlassPrices,
  numberedEntries,
  pricesPath,
  seedEntries,
  storedEntries,
  storedEntry,
} from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import { Semaphore } from './write-gate.js'

/*
 * Writes waiting on row locks never take the pool hostage: while a long change holds the rows (a transaction of
 * the test, as a bulk change would), PUTs on those rows queue and reads are answered. The hold outlasts the pool's
 * wait for a connection (3 s), so before, reads queued behind the stuck PUTs were refused with 503.
 */

const HOLD_MS = 4000

eachDatabase('writes waiting on row locks', (ctx) => {
  let ids: number[]
  const app = useTestApp(ctx, {
    setup: async () => {
      await clearGlassPrices(ctx.db)
      ids = await seedEntries(ctx.db, numberedEntries('Locked', 10))
    },
  })

  test('during a long change on the rows, every read is answered and every PUT applies after it', async () => {
    let locked = () => {}
    const taken = new Promise<void>((resolve) => (locked = resolve))
    let releasedAt = 0
    const change = ctx.db.rawTransaction(async (client) => {
      await client.query('UPDATE glasses_price SET price = price + 1')
      locked()
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS))
      releasedAt = performance.now()
    })
    await taken
    const timed = async (request: Promise<{ statusCode: number; body: string }>) => {
      const response = await request
      return { status: response.statusCode, body: response.body, at: performance.now() }
    }
    const puts = ids.map((id, index) =>
      timed(
        app().inject({
          method: 'PUT',
          url: `${pricesPath}/${id}`,
          payload: {
            manufacturer: 'Seed',
            brand: 'Locked',
            model: `Locked ${String(index + 1).padStart(2, '0')}`,
            price: 700 + index,
            purchase: 1,
          },
        }),
      ),
    )
    // Let the PUTs take whatever connections they can before the reads come.
    await new Promise((resolve) => setTimeout(resolve, 200))
    const reads = Array.from({ length: 10 }, (_, index) =>
      timed(
        index % 2 === 0
          ? app().inject({ method: 'GET', url: `${pricesPath}/list?size=5&page=${index}` })
          : app().inject({
              method: 'POST',
              url: `/api/v2/good/nomenclature/search/glasses?page=${index}`,
              payload: { byPriceList: true },
            }),
      ),
    )
    const readAnswers = await Promise.all(reads)
    const putAnswers = await Promise.all(puts)
    await change
    for (const answer of readAnswers) assert.equal(answer.status, 200, answer.body)
    if (ctx.target === 'postgres') {
      // Reads need no locked row: they are answered while the change still holds its rows.
      for (const answer of readAnswers) assert.ok(answer.at < releasedAt, 'a read waited for the writes')
    }
    for (const answer of putAnswers) assert.equal(answer.status, 200, answer.body)
    for (const [index, id] of ids.entries()) {
      assert.equal((await storedEntry(ctx.db, id))?.price, `${700 + index}.00`, 'the PUT applied after the change')
    }
  })
})

eachDatabase('PUTs during a bulk change', (ctx) => {
  const app = useTestApp(ctx, {
    setup: async () => {
      await clearGlassPrices(ctx.db)
      await sql`
        INSERT INTO glasses_price (manufacturer, brand, model, price, purchase, updated_by)
        SELECT 'Seed', 'Held', 'Held ' || lpad(g::text, 5, '0'), 100, 50, 'seed' FROM generate_series(1, 5000) g`.execute(
        ctx.db.primary,
      )
    },
  })

  test('a PUT on a row a running bulk change holds waits its turn and applies, or answers 412; never 503', async () => {
    const rows = (await storedEntries(ctx.db)).slice(0, 20)
    const bulk = app().inject({
      method: 'POST',
      url: `${pricesPath}/list?brand=Held`,
      payload: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 2, round: 'WHOLE' },
    })
    const puts = rows.map((row, index) =>
      app().inject({
        method: 'PUT',
        url: `${pricesPath}/${row.id}`,
        // Half of them expect the version before the bulk change.
        headers: index % 2 === 0 ? { 'if-match': '"1"' } : {},
        payload: { manufacturer: row.manufacturer, brand: row.brand, model: row.model, price: 700, purchase: 1 },
      }),
    )
    const bulkAnswer = await bulk
    assert.equal(bulkAnswer.statusCode, 200, bulkAnswer.body)
    const answers = await Promise.all(puts)
    for (const [index, answer] of answers.entries()) {
      const row = rows[index]
      const stored = await storedEntry(ctx.db, Number(row?.id))
      if (index % 2 === 0 && answer.statusCode === 412) {
        // It came after the bulk change, which made the version it expected stale: what happened, said.
        assert.equal(answer.json().code, 'stale-etag')
        assert.equal(stored?.price, '200.00')
        continue
      }
      assert.equal(answer.statusCode, 200, answer.body)
      // Applied after the bulk change (700), or before it and then doubled (1400): never lost.
      assert.ok(['700.00', '1400.00'].includes(String(stored?.price)), `entry ${row?.id}: ${stored?.price}`)
    }
  })
})

test('a semaphore lends its slots in turn, and a wait ends when its signal aborts', async () => {
  const slots = new Semaphore(1)
  const first = await slots.acquire()
  const order: string[] = []
  const second = slots.acquire().then((release) => {
    order.push('second')
    return release
  })
  const controller = new AbortController()
  const third = slots.acquire(controller.signal)
  controller.abort(new Error('timed out'))
  await assert.rejects(third, /timed out/)
  assert.equal(slots.waiting, 1)
  first()
  ;(await second)()
  assert.deepEqual(order, ['second'])
  const again = await slots.acquire()
  again()
})
