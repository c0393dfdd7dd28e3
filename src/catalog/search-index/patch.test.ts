import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { byBrand, type Row, rowsOf, tableOf as tableOfRows } from '../../../test/fixtures/index-tables.js'
import type { IdentifiedTable } from './merge.js'
import { RowPatch } from './patch.js'
import type { Column } from './table.js'

/*
 * A table compared with every row read again (patch.ts) must be the table read anew: the same rows in the same
 * natural order, the same values; with the columns that did not change kept as they were, and the old table
 * untouched. Where a row moved, came or went, it is refused.
 */

const tableOf = (rows: readonly Row[]) => tableOfRows(rows, byBrand)
const contents = rowsOf

/** The table patched by `rows` read again in the order given (fields: id, brand, price). */
function patch(table: IdentifiedTable, rows: readonly Row[]) {
  const patcher = new RowPatch(
    table,
    1,
    new Map([
      ['brand', 1],
      ['price', 2],
    ]),
    ['brand'],
  )
  for (const row of rows) patcher.push([String(row.id), row.brand, row.price])
  const forms = new Map(patcher.newNonAsciiValues().map((value) => [value, { norm: value, lower: value }]))
  return patcher.finish(forms)
}

const brands = fc.constantFrom('Ray-Ban', 'ray-ban', 'Oakley', 'Ёж', 'Zeiss', null)
const prices = fc.constantFrom('100', '100.5', '99.99', '1000', null)

test('every row read again with new prices patches the table in place, equal to the table read anew', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.record({ id: fc.integer({ min: 1, max: 400 }), brand: brands, price: prices }), {
        selector: (row) => row.id,
        minLength: 1,
        maxLength: 120,
      }),
      fc.array(fc.option(fc.constantFrom('1', '99.90', '100', '12345.67'), { nil: null }), { maxLength: 120 }),
      fc.nat(),
      (start, newPrices, seed) => {
        const old = tableOf(start)
        const before = contents(old)
        const now = start.map((row, index) =>
          index < newPrices.length ? { ...row, price: newPrices[index] ?? null } : row,
        )
        // The database sends the rows in an order of its own.
        const sent = [...now].sort((a, b) => ((a.id * 7919 + seed) % 401) - ((b.id * 7919 + seed) % 401))
        const patched = patch(old, sent)
        assert.ok(patched, 'patched in place')
        assert.deepEqual(contents(patched), contents(tableOf(now)))
        assert.equal(patched.rowByTie, old.rowByTie, 'the tiebreak order is kept')
        assert.equal(patched.columns.get('brand'), old.columns.get('brand'), 'the brands are kept, postings and all')
        assert.deepEqual(contents(old), before, 'the old table is unchanged')
        // The rows whose price changed are the ones said to be read again; the others stay where they were.
        const after = contents(patched)
        for (let row = 0; row < old.rows; row++) {
          const changed = before[row]?.[2] !== after[row]?.[2]
          assert.equal(patched.oldToNew[row], changed ? -1 : row)
          assert.equal(patched.addedRows.includes(row), changed)
        }
      },
    ),
    { numRuns: 200 },
  )
})

test('a table is not patched where a row moved, came, went or came twice', () => {
  const start: Row[] = [
    { id: 1, brand: 'Oakley', price: '100' },
    { id: 2, brand: 'Ray-Ban', price: '200' },
    { id: 3, brand: 'Zeiss', price: '300' },
  ]
  const old = tableOf(start)
  assert.ok(patch(old, start), 'the same rows patch')
  const moved = start.map((row) => (row.id === 1 ? { ...row, brand: 'Zzz' } : row))
  assert.equal(patch(old, moved), undefined, 'a brand changed: the row moves')
  assert.equal(patch(old, start.slice(1)), undefined, 'a row went')
  assert.equal(
    patch(
      old,
      start.map((row) => (row.id === 3 ? { ...row, id: 4 } : row)),
    ),
    undefined,
    'a row came',
  )
  assert.equal(patch(old, [...start.slice(0, 2), start[0] as Row]), undefined, 'a row came twice')
})

test('prices changed again and again keep the dictionary near the values the rows hold', () => {
  const rows = 3_000
  let now: Row[] = Array.from({ length: rows }, (_, index) => ({
    id: index + 1,
    brand: `b${index % 7}`,
    price: `${index}`,
  }))
  let table = tableOf(now)
  for (let round = 1; round <= 10; round++) {
    now = now.map((row) => ({ ...row, price: `${row.id * 100 + round}.5` }))
    const patched = patch(table, now)
    assert.ok(patched)
    table = patched
    const price = table.columns.get('price') as Column
    assert.ok(price.distinct <= 2 * rows + 1025, `round ${round}: ${price.distinct} values for ${rows} rows`)
  }
  assert.deepEqual(contents(table), contents(tableOf(now)))
})
