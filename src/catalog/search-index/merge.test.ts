import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { compareNullsLast, type Row, rowsOf, tableOf as tableOfRows } from '../../../test/fixtures/index-tables.js'
import { compareDecimal, parseDecimal } from '../../domain/decimal.js'
import { type IdentifiedTable, mergeRows } from './merge.js'
import { compareCodePoints } from './text.js'

/*
 * A table brought forward by its changed rows must be the table read anew: the same rows in the same natural
 * order, the same values, the same tiebreak order; and what it shares with the old table (dictionaries) must not
 * change the old one.
 */

/** The natural order: brand, then price, NULLs last, then id; as PostgreSQL's ORDER BY would give it. */
const decimal = (text: string) => {
  const parsed = parseDecimal(text)
  assert.ok(parsed, text)
  return parsed
}
const natural = (a: Row, b: Row) =>
  compareNullsLast(a.brand, b.brand, compareCodePoints) ||
  compareNullsLast(a.price, b.price, (x, y) => compareDecimal(decimal(x), decimal(y))) ||
  a.id - b.id

const tableOf = (rows: readonly Row[]) => tableOfRows(rows, natural)

/** What a user sees of a table: each row's values in order, and the rows in tiebreak order. */
const contents = (table: IdentifiedTable) => ({
  rows: rowsOf(table),
  byTie: Array.from(table.rowByTie, (row) => table.ids[0]?.[row]),
})

const brandValues = ['Ray-Ban', 'ray-ban', 'Oakley', 'Ёж', 'Ж', 'a', 'b', '\u{1F600}', 'Zeiss']
const brands = fc.constantFrom(...brandValues, null)
// The normal forms of the non-ASCII values, as the database would give them.
const forms = new Map(brandValues.map((value) => [value, { norm: value.toLowerCase(), lower: value.toLowerCase() }]))
const prices = fc.constantFrom('100', '100.5', '99.99', '1000', '2', null)

test('a table merged with its changes equals the table read anew', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.record({ id: fc.integer({ min: 1, max: 400 }), brand: brands, price: prices }), {
        selector: (row) => row.id,
        maxLength: 120,
      }),
      fc.array(fc.integer({ min: 1, max: 400 }), { maxLength: 40 }),
      fc.array(
        fc.record({ brand: fc.oneof(brands, fc.string({ maxLength: 4 })), price: prices, priceOnly: fc.boolean() }),
        { maxLength: 40 },
      ),
      (start, touched, values) => {
        const old = tableOf(start)
        const before = contents(old)
        // The touched ids: each either gone, or present with new values.
        const changed = [...new Set(touched)]
        const now = new Map(start.map((row) => [row.id, row]))
        const added: Row[] = []
        changed.forEach((id, index) => {
          const value = values[index]
          if (value) {
            // A price edit keeps the row's place (the commonest write); otherwise the row may move anywhere.
            const brand = value.priceOnly && now.has(id) ? (now.get(id) as Row).brand : value.brand
            const row = { id, brand, price: value.price }
            now.set(id, row)
            added.push(row)
          } else now.delete(id)
        })
        const removed = new Uint8Array(old.rows)
        const oldIds = old.ids[0] as Uint32Array
        for (let row = 0; row < old.rows; row++) if (changed.includes(oldIds[row] as number)) removed[row] = 1
        const merged = mergeRows(
          old,
          {
            removed,
            rows: added.length,
            values: new Map([
              ['brand', added.map((row) => row.brand)],
              ['price', added.map((row) => row.price)],
            ]),
            ids: [Uint32Array.from(added, (row) => row.id)],
          },
          ['brand', 'price'],
          forms,
        )
        assert.deepEqual(contents(merged), contents(tableOf([...now.values()])))
        assert.deepEqual(contents(old), before, 'the old table is unchanged')
        // Every kept row is found where oldToNew says.
        for (let row = 0; row < old.rows; row++) {
          const moved = merged.oldToNew[row] as number
          if (removed[row]) assert.equal(moved, -1)
          else assert.equal(merged.ids[0]?.[moved], oldIds[row])
        }
      },
    ),
    { numRuns: 300 },
  )
})

test('a price edit that keeps its row in place copies only the column it changed', () => {
  const old = tableOf([
    { id: 1, brand: 'Oakley', price: '100' },
    { id: 2, brand: 'Ray-Ban', price: '200' },
    { id: 3, brand: 'Zeiss', price: '300' },
  ])
  const merged = mergeRows(
    old,
    {
      removed: Uint8Array.from([0, 1, 0]),
      rows: 1,
      values: new Map([
        ['brand', ['Ray-Ban']],
        ['price', ['250']],
      ]),
      ids: [Uint32Array.from([2])],
    },
    ['brand', 'price'],
    forms,
  )
  assert.deepEqual(contents(merged).rows, [
    [1, 'Oakley', 100],
    [2, 'Ray-Ban', 250],
    [3, 'Zeiss', 300],
  ])
  assert.equal(merged.ids, old.ids, 'the ids are kept')
  assert.equal(merged.rowByTie, old.rowByTie, 'the tiebreak order is kept')
  assert.equal(merged.columns.get('brand'), old.columns.get('brand'), 'an unchanged column is kept, postings and all')
  assert.notEqual(merged.columns.get('price'), old.columns.get('price'))
  assert.deepEqual(contents(old).rows[1], [2, 'Ray-Ban', 200], 'the old table is unchanged')
})
