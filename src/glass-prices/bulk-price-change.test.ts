import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import {
  ageEntries,
  changeCount,
  clearGlassPrices,
  type EntrySeed,
  pricesPath,
  seedEntries,
  storedEntries,
  storedEntry,
  todayIn,
} from '../../test/fixtures/glass-prices.js'
import { eachDatabase, type TestContext, useTestApp } from '../../test/harness.js'
import type { RawClient } from '../db/database.js'

/*
 * The bulk price change of SPEC §5, through the API, checking the stored prices and history after each call.
 * The concurrency tests make two calls wait on one lock held by a third transaction, then release it: on the
 * server they really run at once; on the embedded database they queue by construction.
 */

const seed = (model: string, price: number | string, purchase: number | string): EntrySeed => ({
  manufacturer: 'Safilo',
  brand: 'Carrera',
  model,
  price,
  purchase,
})

type Body = Record<string, unknown>

/** Runs `calls` while a third transaction holds `lockSql`; releases it once every call waits (server only). */
async function racing(
  ctx: TestContext,
  lockSql: string,
  calls: (() => Promise<LightMyRequestResponse>)[],
): Promise<LightMyRequestResponse[]> {
  if (ctx.target === 'pglite') return Promise.all(calls.map((call) => call()))
  let started: Promise<LightMyRequestResponse[]> | undefined
  await ctx.db.rawTransaction(async (client: RawClient) => {
    await client.query(lockSql)
    started = Promise.all(calls.map((call) => call()))
    const deadline = Date.now() + 10_000
    for (;;) {
      // Activity statistics are a snapshot per transaction: drop it to see the calls arrive.
      await client.query('SELECT pg_stat_clear_snapshot()')
      // Waiters on one row queue behind each other, so count whoever waits on us directly or through another.
      const [row] = await client.query<{ waiting: string | number }>(
        `WITH RECURSIVE blocked(pid) AS (
           SELECT pid FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))
           UNION
           SELECT a.pid FROM pg_stat_activity a JOIN blocked b ON b.pid = ANY(pg_blocking_pids(a.pid))
         )
         SELECT count(*) AS waiting FROM blocked`,
      )
      if (Number(row?.waiting) >= calls.length) break
      if (Date.now() > deadline) throw new Error('the calls never waited on the lock')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  })
  return started!
}

eachDatabase('glass price list: bulk price change', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: () => clearGlassPrices(ctx.db),
  })

  const bulk = (body: Body, query = '') =>
    app().inject({ method: 'POST', url: `${pricesPath}/list${query}`, payload: body })
  const prices = async () => (await storedEntries(ctx.db)).map((entry) => [entry.price, entry.purchase])
  const fieldsOf = (response: LightMyRequestResponse) =>
    ((response.json().errors ?? []) as { field: string }[]).map((error) => error.field)

  describe('the rule and its worked examples', () => {
    const examples: {
      name: string
      entry: [number | string, number | string]
      body: Body
      expected: [string, string] | 'reject'
    }[] = [
      {
        name: '3000 × 1.15 with HUNDREDS is 3500 (a float gives 3400)',
        entry: [3000, 1000],
        body: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.15, round: 'HUNDREDS' },
        expected: ['3500.00', '1000.00'],
      },
      {
        name: 'PURCHASE 1290 × 2.5 − 10 with TENS is 3220',
        entry: [2000, 1290],
        body: {
          priceTypeBase: 'PURCHASE',
          priceTypeChange: 'RETAIL',
          coefficient: 2.5,
          difference: -10,
          round: 'TENS',
        },
        expected: ['3220.00', '1290.00'],
      },
      {
        name: '1300 × 1.15 with TENS is 1500',
        entry: [1300, 500],
        body: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: '1.15', round: 'TENS' },
        expected: ['1500.00', '500.00'],
      },
      {
        name: '110 × 1.15 with TO_INT is 127',
        entry: [110, 50],
        body: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.15, round: 'TO_INT' },
        expected: ['127.00', '50.00'],
      },
      {
        name: '110 × 1.15 with WHOLE is 127, as TO_INT',
        entry: [110, 50],
        body: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.15, round: 'WHOLE' },
        expected: ['127.00', '50.00'],
      },
      {
        name: '1290 × 1.15 with WHOLE is 1484 (1483.5 rounds half up)',
        entry: [1290, 50],
        body: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.15, round: 'WHOLE' },
        expected: ['1484.00', '50.00'],
      },
      {
        name: '1245 with TENS rounds up to 1250 (half-even would give 1240)',
        entry: [1245, 600],
        body: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', round: 'TENS' },
        expected: ['1250.00', '600.00'],
      },
      {
        name: '1234 re-rounded with TENS is 1230',
        entry: [1234, 600],
        body: {
          priceTypeBase: 'RETAIL',
          priceTypeChange: 'RETAIL',
          coefficient: null,
          difference: null,
          round: 'TENS',
        },
        expected: ['1230.00', '600.00'],
      },
      {
        name: 'kopecks round too: 99.50 with WHOLE is 100',
        entry: ['99.50', 10],
        body: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', round: 'WHOLE' },
        expected: ['100.00', '10.00'],
      },
      {
        name: '300 − 500 with WHOLE is rejected',
        entry: [300, 100],
        body: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', difference: -500, round: 'WHOLE' },
        expected: 'reject',
      },
      {
        name: '40 with HUNDREDS rounds to 0 and is rejected',
        entry: [40, 20],
        body: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', round: 'HUNDREDS' },
        expected: 'reject',
      },
      {
        name: 'a result above 99 999 999.99 is rejected',
        entry: [99_000_000, 10],
        body: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 2, round: 'WHOLE' },
        expected: 'reject',
      },
    ]
    for (const example of examples) {
      test(`bulk change: ${example.name}`, async () => {
        const [id] = await seedEntries(ctx.db, [seed('M1', ...example.entry)])
        const response = await bulk(example.body)
        if (example.expected === 'reject') {
          assert.equal(response.statusCode, 422, response.body)
          const stored = await storedEntry(ctx.db, id!)
          assert.equal(Number(stored?.price), Number(example.entry[0]), 'the price is unchanged')
          assert.equal(stored?.version, 1)
          assert.equal(await changeCount(ctx.db), 0)
          return
        }
        assert.equal(response.statusCode, 200, response.body)
        assert.equal(response.body, '')
        assert.deepEqual(await prices(), [example.expected])
      })
    }

    test('bulk change with each null combination of coefficient and difference', async () => {
      const cases: [unknown, unknown, string][] = [
        [1.1, 5, '1105.00'],
        [1.1, null, '1100.00'],
        [null, 5, '1005.00'],
        [null, null, '1000.00'],
        [undefined, undefined, '1000.00'],
        [undefined, -0.5, '1000.00'],
      ]
      for (const [coefficient, difference, expected] of cases) {
        await clearGlassPrices(ctx.db)
        await seedEntries(ctx.db, [seed('N', 2000, 1000)])
        const body: Body = { priceTypeBase: 'PURCHASE', priceTypeChange: 'RETAIL', round: 'WHOLE' }
        if (coefficient !== undefined) body.coefficient = coefficient
        if (difference !== undefined) body.difference = difference
        const response = await bulk(body)
        assert.equal(response.statusCode, 200, JSON.stringify(body))
        assert.deepEqual(await prices(), [[expected, '1000.00']], JSON.stringify(body))
      }
    })

    test('bulk change writes only the changed column: the other price stays untouched', async () => {
      await seedEntries(ctx.db, [seed('A', '1999.99', '777.77'), seed('B', 3000, '1234.56')])
      assert.equal(
        (await bulk({ priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 2, round: 'TENS' })).statusCode,
        200,
      )
      assert.deepEqual(await prices(), [
        ['4000.00', '777.77'],
        ['6000.00', '1234.56'],
      ])
      assert.equal(
        (await bulk({ priceTypeBase: 'RETAIL', priceTypeChange: 'PURCHASE', coefficient: 0.4, round: 'HUNDREDS' }))
          .statusCode,
        200,
      )
      assert.deepEqual(await prices(), [
        ['4000.00', '1600.00'],
        ['6000.00', '2400.00'],
      ])
    })
  })

  describe('selection', () => {
    test('the body band on a PURCHASE base is inclusive at both edges', async () => {
      await seedEntries(ctx.db, [
        seed('a', 5000, '999.99'),
        seed('b', 5000, 1000),
        seed('c', 5000, 1500),
        seed('d', 5000, 2000),
        seed('e', 5000, '2000.01'),
      ])
      const response = await bulk({
        priceFrom: 1000,
        priceTo: '2000',
        priceTypeBase: 'PURCHASE',
        priceTypeChange: 'RETAIL',
        coefficient: 2,
        round: 'WHOLE',
      })
      assert.equal(response.headers['x-changed-count'], '3')
      assert.deepEqual(
        (await prices()).map(([price]) => price),
        ['5000.00', '2000.00', '3000.00', '4000.00', '5000.00'],
      )
    })

    test('the body band on a RETAIL base is inclusive at both edges', async () => {
      await seedEntries(ctx.db, [
        seed('a', '999.99', 10),
        seed('b', 1000, 10),
        seed('c', 2000, 10),
        seed('d', '2000.01', 10),
      ])
      const response = await bulk({
        priceFrom: '1000.00',
        priceTo: 2000,
        priceTypeBase: 'RETAIL',
        priceTypeChange: 'PURCHASE',
        coefficient: 0.5,
        round: 'WHOLE',
      })
      assert.equal(response.headers['x-changed-count'], '2')
      assert.deepEqual(
        (await prices()).map(([, purchase]) => purchase),
        ['10.00', '500.00', '1000.00', '10.00'],
      )
    })

    test('the query filters and the body band both apply: only their intersection changes', async () => {
      await seedEntries(ctx.db, [
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'one', price: 1000, purchase: 400 },
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'two', price: 1000, purchase: 600 },
        { manufacturer: 'Safilo', brand: 'Polaroid', model: 'three', price: 1000, purchase: 400 },
        { manufacturer: 'Luxottica', brand: 'Carrera', model: 'four', price: 3000, purchase: 400 },
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'five', price: 3000, purchase: 400 },
      ])
      const response = await bulk(
        { priceTo: 500, priceTypeBase: 'PURCHASE', priceTypeChange: 'RETAIL', difference: 1, round: 'WHOLE' },
        '?manufacturer=SAFI&brand=carr&priceTo=2000&purchaseFrom=300',
      )
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['x-changed-count'], '1')
      assert.deepEqual(
        (await prices()).map(([price]) => price),
        ['401.00', '1000.00', '1000.00', '3000.00', '3000.00'],
      )
    })

    test('a selection that matches nothing is a recorded no-op with X-Changed-Count 0', async () => {
      await seedEntries(ctx.db, [seed('a', 1000, 400)])
      const response = await bulk(
        { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 2, round: 'WHOLE' },
        '?model=nothing',
      )
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['x-changed-count'], '0')
      assert.ok(Number(response.headers['x-price-change-batch']) > 0)
      assert.deepEqual(await prices(), [['1000.00', '400.00']])
    })
  })

  describe('writing', () => {
    test('bulk change answers an empty 200 with X-Changed-Count and X-Price-Change-Batch, and records the batch', async () => {
      const [a, b] = await seedEntries(ctx.db, [seed('a', 1000, 400), seed('b', 2000, 800)])
      const response = await bulk(
        { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.1, round: 'TO_INT' },
        '?manufacturer=safilo',
      )
      assert.equal(response.statusCode, 200)
      assert.equal(response.body, '')
      assert.equal(response.headers['x-changed-count'], '2')
      const batch = Number(response.headers['x-price-change-batch'])
      const change = await ctx.db.primary
        .selectFrom('glass_price_change')
        .selectAll()
        .where('id', '=', batch)
        .executeTakeFirstOrThrow()
      assert.equal(change.action, 'BULK_CHANGE')
      assert.equal(change.created_by, 'anonymous')
      assert.equal(Number(change.changed_count), 2)
      assert.deepEqual(change.parameters, {
        filter: { manufacturer: 'safilo' },
        priceTypeBase: 'RETAIL',
        priceTypeChange: 'RETAIL',
        coefficient: '1.1',
        round: 'WHOLE',
      })
      const rows = await ctx.db.primary
        .selectFrom('glass_price_change_row')
        .select(['entry_id', 'field', 'old_value', 'new_value'])
        .where('change_id', '=', batch)
        .orderBy('entry_id')
        .execute()
      assert.deepEqual(
        rows.map((row) => ({ ...row, entry_id: Number(row.entry_id) })),
        [
          { entry_id: a, field: 'price', old_value: '1000.00', new_value: '1100.00' },
          { entry_id: b, field: 'price', old_value: '2000.00', new_value: '2200.00' },
        ],
      )
    })

    test('entries whose value does not change keep their lastUpdatedOn, user and version', async () => {
      const [kept, changed] = await seedEntries(ctx.db, [seed('kept', 1230, 10), seed('changed', 1234, 10)])
      await ageEntries(ctx.db)
      const response = await bulk({ priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', round: 'TENS' })
      assert.equal(response.headers['x-changed-count'], '1')
      const list = (await app().inject({ method: 'GET', url: `${pricesPath}/list` })).json().content
      assert.deepEqual(
        list.map((item: Record<string, unknown>) => [item.id, item.price, item.lastUpdatedOn, item.user]),
        [
          [kept, 1230, '2020-01-15', 'seed'],
          [changed, 1230, todayIn('Europe/Moscow'), 'anonymous'],
        ],
      )
      assert.equal((await storedEntry(ctx.db, kept!))?.version, 1)
      assert.equal((await storedEntry(ctx.db, changed!))?.version, 2)
    })

    test('a change that would make any entry ≤ 0 is a 422 naming the entries, and writes nothing at all', async () => {
      const [ok, bad] = await seedEntries(ctx.db, [seed('fine', 1000, 10), seed('too cheap', 40, 10)])
      const generation = await sql<{ g: string | number }>`
        SELECT data_generation AS g FROM catalog_state WHERE kind = 'glasses'`.execute(ctx.db.primary)
      const response = await bulk({ priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', round: 'HUNDREDS' })
      assert.equal(response.statusCode, 422)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
      const problem = response.json()
      assert.equal(problem.rejectedCount, 1)
      assert.deepEqual(problem.entries, [
        { id: bad, manufacturer: 'Safilo', brand: 'Carrera', model: 'too cheap', base: 40, newValue: 0 },
      ])
      assert.match(problem.detail, new RegExp(`${bad} Safilo / Carrera / too cheap`))
      assert.deepEqual(await prices(), [
        ['1000.00', '10.00'],
        ['40.00', '10.00'],
      ])
      assert.equal((await storedEntry(ctx.db, ok!))?.version, 1)
      assert.equal(await changeCount(ctx.db), 0, 'no batch was recorded')
      const after = await sql<{ g: string | number }>`
        SELECT data_generation AS g FROM catalog_state WHERE kind = 'glasses'`.execute(ctx.db.primary)
      assert.equal(Number(after.rows[0]?.g), Number(generation.rows[0]?.g), 'the matview is not even marked stale')
    })

    test('dryRun=true answers the counts and the first rows old → new and writes nothing', async () => {
      const [, b, c] = await seedEntries(ctx.db, [seed('a', 1000, 10), seed('b', 1449, 10), seed('c', 10, 10)])
      const response = await bulk(
        { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', difference: -40, round: 'HUNDREDS' },
        '?dryRun=true',
      )
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['x-price-change-batch'], undefined)
      const rejected = {
        id: c,
        manufacturer: 'Safilo',
        brand: 'Carrera',
        model: 'c',
        base: 10,
        oldValue: 10,
        newValue: 0,
      }
      assert.deepEqual(response.json(), {
        wouldApply: false,
        reasons: [
          {
            code: 'bulk-change-rejected',
            message:
              '1 selected entry would get a price of 0 or less, or above 99999999.99 (see rejected): the call would ' +
              'be refused (422) and change nothing',
          },
        ],
        selectedCount: 3,
        changedCount: 2,
        unchangedCount: 1,
        rejectedCount: 1,
        changes: [
          { id: b, manufacturer: 'Safilo', brand: 'Carrera', model: 'b', base: 1449, oldValue: 1449, newValue: 1400 },
          rejected,
        ],
        rejected: [rejected],
        totals: {
          retail: { old: '2459.00', new: '2400.00' },
          purchase: { old: '30.00', new: '30.00' },
          averageMarkup: { old: '8096.67', new: '7900.00' },
        },
      })
      assert.deepEqual(
        (await prices()).map(([price]) => price),
        ['1000.00', '1449.00', '10.00'],
      )
      assert.equal(await changeCount(ctx.db), 0)
    })
    test('dryRun=true says wouldApply true for a call that writes, false for nothing selected or nothing to change', async () => {
      const ids = await seedEntries(
        ctx.db,
        Array.from({ length: 130 }, (_, i) => seed(`m${String(i).padStart(3, '0')}`, 1000 + i, 10)),
      )
      const rule = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.1, round: 'TENS' }
      const applies = (await bulk(rule, '?dryRun=true')).json()
      assert.equal(applies.wouldApply, true)
      assert.deepEqual(applies.reasons, [])
      assert.equal(applies.changes.length, 100)
      assert.deepEqual(
        applies.changes.map((row: { id: number }) => row.id),
        ids.slice(0, 100),
        'the sample is the first rows in id order',
      )
      const none = (await bulk(rule, '?dryRun=true&model=nothing-like-this')).json()
      assert.deepEqual(
        [none.wouldApply, none.reasons.map((r: { code: string }) => r.code)],
        [false, ['nothing-selected']],
      )
      const same = (await bulk({ ...rule, coefficient: 1, round: 'WHOLE' }, '?dryRun=true')).json()
      assert.deepEqual(
        [same.wouldApply, same.reasons.map((r: { code: string }) => r.code)],
        [false, ['nothing-changes']],
      )
      const tiny = (await bulk({ ...rule, coefficient: 0.001, round: 'HUNDREDS' }, '?dryRun=true')).json()
      assert.deepEqual(
        [tiny.wouldApply, tiny.reasons.map((r: { code: string }) => r.code)],
        [false, ['bulk-change-rejected']],
      )
      assert.equal((await bulk({ ...rule, coefficient: 0.001, round: 'HUNDREDS' })).statusCode, 422, 'as announced')
    })
  })

  describe('validation', () => {
    const valid = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.1, round: 'WHOLE' }

    test('round missing, null or unknown is a 400 listing WHOLE, TENS and HUNDREDS', async () => {
      for (const round of [undefined, null, 'HALF', 'tens']) {
        const body: Body = { ...valid, round }
        if (round === undefined) delete body.round
        const response = await bulk(body)
        assert.equal(response.statusCode, 400, String(round))
        assert.deepEqual(fieldsOf(response), ['round'])
        assert.match(response.json().errors[0].message, /WHOLE, TENS, HUNDREDS/)
      }
    })

    test('bad coefficient, difference, price types or band are a 400 naming every field, and nothing is written', async () => {
      await seedEntries(ctx.db, [seed('a', 1000, 400)])
      const cases: [Body, string, string[]][] = [
        [{ ...valid, coefficient: 0 }, '', ['coefficient']],
        [{ ...valid, coefficient: -1.5, difference: 0.001 }, '', ['coefficient', 'difference']],
        [{ ...valid, coefficient: '1.2.3' }, '', ['coefficient']],
        [{ ...valid, coefficient: 1.0000001 }, '', ['coefficient']],
        [{ ...valid, priceTypeBase: 'COST' }, '', ['priceTypeBase']],
        [{ ...valid, priceTypeChange: undefined }, '', ['priceTypeChange']],
        [{ ...valid, priceFrom: 2000, priceTo: 1000 }, '', ['priceFrom']],
        [{ ...valid, priceFrom: -1 }, '', ['priceFrom']],
        [valid, '?priceFrom=3000&priceTo=2000', ['priceFrom']],
        [valid, '?purchaseTo=abc', ['purchaseTo']],
        [valid, '?dryRun=maybe', ['dryRun']],
      ]
      for (const [body, query, fields] of cases) {
        const response = await bulk(body, query)
        assert.equal(response.statusCode, 400, `${JSON.stringify(body)} ${query}`)
        assert.deepEqual(fieldsOf(response).sort(), [...fields].sort(), `${JSON.stringify(body)} ${query}`)
      }
      assert.deepEqual(await prices(), [['1000.00', '400.00']])
      assert.equal(await changeCount(ctx.db), 0)
    })
  })

  describe('concurrency', () => {
    const priceListLock =
      "SELECT pg_advisory_xact_lock(hashtext('optics.price-list'), hashtext(current_schema() || '.glasses_price'))"

    test('two concurrent bulk changes serialise and both apply, each computed from the other’s result', async () => {
      const ids = await seedEntries(ctx.db, [seed('a', 1000, 10), seed('b', 2000, 10), seed('c', 3000, 10)])
      const change = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', round: 'WHOLE' }
      const responses = await racing(ctx, priceListLock, [
        () => bulk({ ...change, difference: 100 }),
        () => bulk({ ...change, coefficient: 2 }),
      ])
      assert.deepEqual(
        responses.map((response) => response.statusCode),
        [200, 200],
      )
      const [plus, times] = responses.map((response) => Number(response.headers['x-price-change-batch']))
      const finals = (await prices()).map(([price]) => Number(price))
      const plusFirst = [1000, 2000, 3000].map((base) => (base + 100) * 2)
      const timesFirst = [1000, 2000, 3000].map((base) => base * 2 + 100)
      const order = plus! < times! ? plusFirst : timesFirst
      assert.deepEqual(finals, order, 'the later change applied to the earlier one’s result')
      const rows = await ctx.db.primary
        .selectFrom('glass_price_change_row')
        .select(['change_id', 'entry_id', 'old_value', 'new_value'])
        .orderBy('change_id')
        .orderBy('entry_id')
        .execute()
      assert.equal(rows.length, 6)
      for (const id of ids) {
        const [first, second] = rows.filter((row) => Number(row.entry_id) === id)
        assert.equal(second?.old_value, first?.new_value, 'the second batch starts where the first ended')
      }
    })

    test('a bulk change racing an update of the same entry loses neither: the history chains', async () => {
      const [id] = await seedEntries(ctx.db, [seed('raced', 1000, 400)])
      const rowLock = `SELECT id FROM glasses_price WHERE id = ${id} FOR UPDATE`
      const responses = await racing(ctx, rowLock, [
        () => bulk({ priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', difference: 100, round: 'WHOLE' }),
        () =>
          app().inject({
            method: 'PUT',
            url: `${pricesPath}/${id}`,
            payload: { manufacturer: 'Safilo', brand: 'Carrera', model: 'raced', price: 5000, purchase: 400 },
          }),
      ])
      assert.deepEqual(
        responses.map((response) => response.statusCode),
        [200, 200],
      )
      const rows = await ctx.db.primary
        .selectFrom('glass_price_change_row')
        .select(['change_id', 'old_value', 'new_value'])
        .where('field', '=', 'price')
        .orderBy('change_id')
        .execute()
      assert.equal(rows.length, 2, 'both writes are in the history')
      assert.equal(rows[0]?.old_value, '1000.00')
      assert.equal(rows[1]?.old_value, rows[0]?.new_value, 'the second write saw the first')
      const final = await storedEntry(ctx.db, id!)
      assert.equal(final?.price, rows[1]?.new_value)
      assert.ok(['5100.00', '5000.00'].includes(final!.price), final!.price)
      assert.equal(final?.version, 3)
    })
  })
})
