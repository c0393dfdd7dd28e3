import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { containsCondition, matchRows } from './matching.js'
import { type Column, ColumnBuilder, type Table } from './table.js'

/*
 * Substring matching over a large dictionary goes through the n-gram index (two- and three-letter grams, the two
 * rarest intersected); over a small one it tests every value. Both must accept exactly the values that contain the
 * needle, and matching rows must be exactly the rows whose values pass every condition.
 */

const letters = 'abcr-0 '
const word = fc.string({ unit: fc.constantFrom(...letters), minLength: 1, maxLength: 9 })

function columnOf(name: string, values: readonly string[]) {
  const builder = new ColumnBuilder(name, 'text')
  for (const value of values) builder.push(value)
  return builder.build()
}

test('a substring condition accepts exactly the values containing the needle, with or without n-grams', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(word, { minLength: 2100, maxLength: 2600 }),
      fc.array(fc.string({ unit: fc.constantFrom(...letters), minLength: 1, maxLength: 5 }), { maxLength: 12 }),
      (values, needles) => {
        const large = columnOf('model', values)
        const small = columnOf('model', values.slice(0, 300))
        for (const column of [large, small]) {
          const { norms } = column
          for (const needle of needles.map((text) => text.trim().toLowerCase()).filter(Boolean)) {
            const condition = containsCondition(column, needle)
            const expected: number[] = []
            for (let code = 1; code < column.distinct; code++) {
              if ((norms[code] as string).includes(needle)) expected.push(code)
            }
            assert.deepEqual([...(condition.codes ?? [])], expected, `needle '${needle}'`)
            for (let code = 0; code < column.distinct; code++) {
              assert.equal(condition.accepted[code], expected.includes(code) ? 1 : 0)
            }
          }
        }
      },
    ),
    { numRuns: 15 },
  )
})

test('matching rows are the rows whose values pass every condition, ascending', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom('ab', 'bc', 'ca', 'r0', 'a-a'), fc.constantFrom('x1', 'y2', 'z3', 'xy')), {
        minLength: 1,
        maxLength: 400,
      }),
      fc.array(fc.tuple(fc.constantFrom(0, 1), fc.constantFrom('a', 'b', 'c', 'x', 'y', '1', 'e')), {
        minLength: 1,
        maxLength: 3,
      }),
      (rows, filters) => {
        const columns = [0, 1].map((field) =>
          columnOf(
            `f${field}`,
            rows.map((row) => row[field] as string),
          ),
        )
        const order = Uint32Array.from(rows, (_, index) => index)
        const table: Table = {
          rows: rows.length,
          columns: new Map(columns.map((column) => [column.name, column])),
          tie: order,
          rowByTie: order,
        }
        const conditions = filters.map(([field, needle]) => containsCondition(columns[field] as Column, needle))
        const expected = rows.flatMap((row, index) =>
          filters.every(([field, needle]) => (row[field] as string).includes(needle)) ? [index] : [],
        )
        assert.deepEqual([...matchRows(table, conditions)], expected)
      },
    ),
    { numRuns: 200 },
  )
})

test('counting a column builds its offsets alone; its rows, built when a filter needs them, agree with the counts', () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom('Ray-Ban', 'Oakley', 'Luxottica', null), { maxLength: 300 }), (values) => {
      const builder = new ColumnBuilder('brand', 'text')
      for (const value of values) builder.push(value)
      const column = builder.build()
      for (let code = 0; code < column.distinct; code++) {
        assert.equal(column.count(code), values.filter((value) => (value ?? '') === column.values[code]).length)
      }
      assert.equal(column.builtPostings?.rows, undefined, 'no rows built to count')
      const { offsets, rows } = column.postings
      assert.equal(offsets, column.offsets, 'the offsets counted are the postings’ own')
      for (let code = 0; code < column.distinct; code++) {
        const carried = [...rows.subarray(offsets[code] as number, offsets[code + 1] as number)]
        assert.deepEqual(
          carried,
          values.flatMap((value, row) => ((value ?? '') === column.values[code] ? [row] : [])),
        )
      }
    }),
  )
})
