import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import {
  clearGlassPrices,
  plantKeys,
  pricesPath,
  storedEntries,
  storedEntry,
} from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import * as confusableKeys from '../db/migrations/0011-confusable-keys.js'
import { canonicalText } from '../domain/key-text.js'
import { readLookAlikeKeyReport } from './look-alike-keys.js'

/*
 * One key per thing a person sees (issue 31, point 3): a key that differs from another only by Latin/Cyrillic
 * look-alike letters or fullwidth forms is the same key at every door (create, PUT, upload), filters find both
 * spellings, and the migration 0011 reports the stored entries that already collide instead of merging them.
 */

const entry = { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB 5228', price: 12990, purchase: 5200 }
/** "Ray-Ban" with a Cyrillic а, "RB 5228" with fullwidth digits. */
const cyrillicA = 'R\u0430y-Ban'
const fullwidth = 'RB \uff15\uff12\uff12\uff18'

eachDatabase('glass price list: confusable keys', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: async () => {
      await clearGlassPrices(ctx.db)
      await sql`DELETE FROM glass_price_key_report`.execute(ctx.db.primary)
    },
  })
  const create = (body: object) => app().inject({ method: 'POST', url: pricesPath, payload: body })
  const ids = (response: { json(): { content: { id: number }[] } }) => response.json().content.map((i) => i.id)

  test('a brand with a Cyrillic letter or a model in fullwidth digits is the existing entry: 409 with its id', async () => {
    const first = await create(entry)
    assert.equal(first.statusCode, 200, first.body)
    for (const body of [
      { ...entry, brand: cyrillicA },
      { ...entry, model: fullwidth },
    ]) {
      const again = await create(body)
      assert.equal(again.statusCode, 409, again.body)
      assert.equal(again.json().code, 'duplicate-key')
      assert.equal(again.json().existingId, first.json().id)
    }
    assert.equal((await storedEntries(ctx.db)).length, 1)
  })

  test('a look-alike key is stored in its one form; a Cyrillic word stays Cyrillic', async () => {
    const created = await create({ ...entry, brand: cyrillicA, model: fullwidth })
    assert.equal(created.statusCode, 200, created.body)
    assert.deepEqual([created.json().brand, created.json().model], ['Ray-Ban', 'RB 5228'])
    // "Москва" with a Latin o is written in Cyrillic; "ТОР" in Cyrillic is not "TOP" in Latin.
    const cyrillic = await create({ ...entry, manufacturer: 'М\u006fсква', brand: 'ТОР', model: '1' })
    assert.equal(cyrillic.statusCode, 200, cyrillic.body)
    assert.deepEqual([cyrillic.json().manufacturer, cyrillic.json().brand], ['Москва', 'ТОР'])
    const latin = await create({ ...entry, manufacturer: 'Москва', brand: 'TOP', model: '1' })
    assert.equal(latin.statusCode, 200, latin.body)
  })

  test('a PUT to a look-alike of another entry is a 409 naming it, and changes nothing', async () => {
    const first = await create(entry)
    const second = await create({ ...entry, model: 'RB 5229' })
    const clash = await app().inject({
      method: 'PUT',
      url: `${pricesPath}/${second.json().id}`,
      payload: { ...entry, brand: cyrillicA, model: fullwidth },
    })
    assert.equal(clash.statusCode, 409, clash.body)
    assert.equal(clash.json().existingId, first.json().id)
    assert.equal((await storedEntry(ctx.db, second.json().id))?.model, 'RB 5229')
  })

  test('an upload with a look-alike of a stored key names its line; within the file too', async () => {
    await create(entry)
    const upload = (body: string) =>
      app().inject({
        method: 'POST',
        url: `${pricesPath}/import`,
        headers: { 'content-type': 'text/csv' },
        payload: `manufacturer,brand,model,price,purchase\n${body}`,
      })
    const inTable = await upload(`Luxottica,${cyrillicA},RB 5228,1,1\n`)
    assert.equal(inTable.statusCode, 422, inTable.body)
    assert.deepEqual(
      inTable.json().problems.map((p: { line: number }) => p.line),
      [2],
    )
    assert.match(inTable.json().problems[0].message, /already in the price list/)
    const withinFile = await upload(`Luxottica,Ray-Ban,RB 9000,1,1\nLuxottica,${cyrillicA},RB ９０００,1,1\n`)
    assert.equal(withinFile.statusCode, 422, withinFile.body)
    assert.deepEqual(
      withinFile.json().problems.map((p: { line: number }) => p.line),
      [3],
    )
    assert.equal((await storedEntries(ctx.db)).length, 1)
  })

  test('listing filters in either spelling find the entry', async () => {
    const created = await create(entry)
    for (const query of [
      `brand=${encodeURIComponent(cyrillicA)}`,
      `model=${encodeURIComponent('\uff15\uff12\uff12')}`,
    ]) {
      const response = await app().inject({ method: 'GET', url: `${pricesPath}/list?${query}` })
      assert.equal(response.statusCode, 200)
      assert.deepEqual(ids(response), [created.json().id], query)
    }
  })

  describe('the migration of stored keys', () => {
    /** The migration 0011 as it runs on a database that 0010 left: its functions back to 0007's, then `up`. */
    const rerunMigration = async () => {
      await sql`DROP FUNCTION optics_key_text(text)`.execute(ctx.db.primary)
      await sql`DROP FUNCTION optics_key_word(text)`.execute(ctx.db.primary)
      await sql`ALTER FUNCTION optics_key_text_nfc(text) RENAME TO optics_key_text`.execute(ctx.db.primary)
      await confusableKeys.up(ctx.db.primary)
    }
    const plant = (rows: readonly (readonly [string, string, string])[]) => plantKeys(ctx.db, rows)

    test('reports stored look-alikes and leaves them as they are; rewrites the others in the history', async () => {
      const [latin, mixed, wide, alone] = await plant([
        ['Luxottica', 'Ray-Ban', 'RB 5228'],
        ['Luxottica', cyrillicA, 'RB 5228'],
        ['Luxottica', 'Ray-Ban', fullwidth],
        ['Luxottica', cyrillicA, 'RB 7000'],
      ])
      await rerunMigration()

      const report = await readLookAlikeKeyReport(ctx.db.primary)
      assert.deepEqual(
        report.lookAlikes.map((e) => [e.entryId, e.lookAlikes]),
        [
          [mixed, [latin, wide]],
          [wide, [latin, mixed]],
        ],
      )
      assert.equal(report.normalised, 1)
      assert.equal((await storedEntry(ctx.db, mixed!))?.brand, cyrillicA)
      assert.equal((await storedEntry(ctx.db, wide!))?.model, fullwidth)
      const rewritten = await storedEntry(ctx.db, alone!)
      assert.deepEqual([rewritten?.brand, rewritten?.version], ['Ray-Ban', 2])
      const history = await app().inject({ method: 'GET', url: `${pricesPath}/${alone}/history` })
      assert.deepEqual(
        history
          .json()
          .content[0].changes.map((c: { field: string; oldValue: string; newValue: string }) => [
            c.field,
            c.oldValue,
            c.newValue,
          ]),
        [['brand', cyrillicA, 'Ray-Ban']],
      )
      const changes = await app().inject({ method: 'GET', url: `${pricesPath}/changes?size=1` })
      assert.deepEqual(changes.json().content[0].parameters, { migration: '0011-confusable-keys' })
    })

    test('optics_key_text in SQL gives the one form the service computes', async () => {
      const samples = [
        cyrillicA,
        fullwidth,
        'М\u006fсква \u0420\u0430y-B\u0430n',
        'ТОР TOP ТOP',
        '\uff32\uff22\u3000',
        ' \u00a8x',
        'ﬁne Ray-Ban™',
        'Café Ёлка\u00a0Сafé',
        'Łódź Оptyk',
        'RB-\u0441\u0430-Xa 2',
      ]
      const { rows } = await sql<{ canonical: string }>`
        SELECT optics_key_text(value) AS canonical FROM unnest(${samples}::text[]) WITH ORDINALITY AS s (value, n)
        ORDER BY n`.execute(ctx.db.primary)
      assert.deepEqual(
        rows.map((row) => row.canonical),
        samples.map((sample) => canonicalText(sample).trim()),
      )
    })
  })
})
