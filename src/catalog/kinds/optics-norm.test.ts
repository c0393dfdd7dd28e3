import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { sql } from 'kysely'
import { eachDatabase } from '../../../test/harness.js'
import { normaliseKeyText } from './kind-schema.js'

/*
 * `normaliseKeyText` is the JavaScript twin of the database's `optics_norm`: an imported file's duplicate keys, the
 * suggestions and the demo catalogue's unique keys are decided by the one, the unique indexes and filters by the
 * other. Drawn from the characters keys are made of: ASCII, the Latin-1 and Latin Extended-A letters (but U+0130,
 * İ, which JavaScript lowers to two characters), Cyrillic (with Ё and ё), and spaces around and inside.
 */

const ranges: (readonly [number, number])[] = [
  [0x20, 0x7e],
  [0xc0, 0x12f],
  [0x131, 0x17f],
  [0x400, 0x4ff],
]
const characters = ranges.flatMap(([from, to]) =>
  Array.from({ length: to - from + 1 }, (_unused, index) => String.fromCodePoint(from + index)),
)
const keyText = fc.oneof(
  fc.string({ unit: fc.constantFrom(...characters), maxLength: 24 }),
  fc.string({ unit: fc.constantFrom(' ', 'Ё', 'ё', 'A', 'z', 'Я', 'É'), maxLength: 8 }),
)

eachDatabase('optics_norm and normaliseKeyText', (ctx) => {
  test('normaliseKeyText gives what optics_norm gives, for any text of key characters', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(keyText, { minLength: 1, maxLength: 50 }), async (values) => {
        const { rows } = await sql<{ normalised: string }>`
          SELECT optics_norm(v) AS normalised FROM unnest(${values}::text[]) WITH ORDINALITY AS u (v, n) ORDER BY n`.execute(
          ctx.db.primary,
        )
        assert.deepEqual(
          rows.map((row) => row.normalised),
          values.map(normaliseKeyText),
        )
      }),
      { numRuns: 200 },
    )
  })

  test('both fold case and ё and trim the ends, and keep what is inside', async () => {
    const values = ['  Ёлка Ray-Ban  ', 'ÀÉÎ ŒŸ', 'СЕРЁЖА']
    const { rows } = await sql<{ normalised: string }>`
      SELECT optics_norm(v) AS normalised FROM unnest(${values}::text[]) WITH ORDINALITY AS u (v, n) ORDER BY n`.execute(
      ctx.db.primary,
    )
    const expected = ['елка ray-ban', 'àéî œÿ', 'сережа']
    assert.deepEqual(
      rows.map((row) => row.normalised),
      expected,
    )
    assert.deepEqual(values.map(normaliseKeyText), expected)
  })
})
