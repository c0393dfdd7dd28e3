import assert from 'node:assert/strict'
import { test } from 'node:test'
import { pricesPath, seedEntries } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import { ROUNDING_OPTIONS } from '../../web/src/desk/bulk-formula.js'
import { roundingMessages } from '../../web/src/desk/formula.js'
import { en } from '../../web/src/i18n/en.js'
import { ru } from '../../web/src/i18n/ru.js'
import { ROUNDING_DIRECTIONS, ROUNDING_RULES, ROUNDINGS } from '../domain/roundings.js'

/*
 * Every rounding the description (domain/roundings.ts) names is known to each of its readers: the bulk change
 * accepts it and computes, in numeric, the value its step and ending say, in both directions; the OpenAPI document
 * names it; the desk offers it and says it in words in both languages.
 */

/** Prices in kopecks: ties, values on a step, just past one, with kopecks, below the first ending. */
const PRICES = [123_400, 125_000, 124_550, 129_000, 129_001, 99_999, 4_000, 5_000]

/** What a rounding makes of a price in kopecks, in kopecks: exact integer arithmetic (k × step + ending). */
function expected(kopecks: number, step: number, ending: number, up: boolean): number {
  const [s, e] = [step * 100, ending * 100]
  const k = up ? Math.ceil((kopecks - e) / s) : Math.floor((2 * (kopecks - e) + s) / (2 * s))
  return k * s + e
}

const money = (kopecks: number) => (kopecks / 100).toFixed(2)

test('the desk offers every described rounding and says it in words in both languages', () => {
  assert.deepEqual(
    ROUNDING_OPTIONS.map(([rounding]) => rounding),
    [...ROUNDINGS],
  )
  for (const rounding of ROUNDINGS) {
    for (const key of Object.values(roundingMessages[rounding])) {
      assert.ok(en[key] && ru[key], `${rounding}: ${key} is translated`)
    }
  }
})

eachDatabase('bulk change: every described rounding', (ctx) => {
  const app = useTestApp(ctx, {
    setup: () =>
      seedEntries(
        ctx.db,
        PRICES.map((kopecks, index) => ({
          manufacturer: 'Rounding',
          brand: 'Steps',
          model: `R ${index}`,
          price: money(kopecks),
          purchase: 1,
        })),
      ),
  })

  test('the dry run computes each rounding as its step and ending say, to the nearest and upwards', async () => {
    for (const rule of ROUNDING_RULES) {
      const ending = 'ending' in rule ? rule.ending : 0
      for (const direction of ROUNDING_DIRECTIONS) {
        const response = await app().inject({
          method: 'POST',
          url: `${pricesPath}/list?brand=Steps&dryRun=true`,
          payload: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', round: rule.name, direction },
        })
        assert.equal(response.statusCode, 200, response.body)
        type Row = { base: number; newValue: number }
        const preview = response.json() as { changes: Row[]; rejected: Row[]; selectedCount: number }
        assert.equal(preview.selectedCount, PRICES.length)
        // Changed and rejected rows (a value of 0) both carry their new value; an unchanged one keeps its own.
        const rows = [...preview.changes, ...preview.rejected]
        const newValues = new Map(rows.map((row) => [money(Math.round(row.base * 100)), row.newValue]))
        for (const kopecks of PRICES) {
          const want = expected(kopecks, rule.step, ending, direction === 'UP')
          const got = newValues.get(money(kopecks)) ?? kopecks / 100
          assert.equal(money(Math.round(got * 100)), money(want), `${rule.name} ${direction} ${money(kopecks)}`)
        }
      }
    }
  })

  test('the OpenAPI document names every rounding', async () => {
    const document = (await app().inject({ method: 'GET', url: '/v3/api-docs' })).body
    for (const rounding of ROUNDINGS) assert.match(document, new RegExp(`\\b${rounding}\\b`), rounding)
  })
})
