import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import {
  changeCount,
  clearGlassPrices,
  plantKeys,
  pricesPath,
  storedEntries,
  storedEntry,
} from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import { glasses } from '../catalog/kinds/kinds.js'
import { normaliseLookAlikeKeys } from '../db/migrations/0007-look-alike-keys.js'
import { canonicalText } from '../domain/key-text.js'
import { importCsv } from '../transfer/csv-import.js'
import { describeLookAlikeKeyReport, readLookAlikeKeyReport } from './look-alike-keys.js'

/*
 * One spelling per key (issue 20, point 6): keys that print the same are one key at every door that writes them
 * (create, PUT, CSV import over HTTP and by the CLI's function), filters typed so find them, text that is not
 * text is refused naming its field, and the migration reports and merges what was stored before.
 */

const entry = { manufacturer: 'Safilo', brand: 'Carrera', price: 11990, purchase: 4800 }
/** Five spellings of one printed model: NFC, NFD, with a zero-width space, a no-break space, a narrow one. */
const lookAlikeModels = ['Café 01', 'Cafe\u0301 01', 'Caf\u200Bé 01', 'Café\u00A001', 'Café\u202F01']

eachDatabase('glass price list: look-alike keys', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: async () => {
      await clearGlassPrices(ctx.db)
      await sql`DELETE FROM glass_price_key_report`.execute(ctx.db.primary)
    },
  })

  const create = (body: unknown) => app().inject({ method: 'POST', url: pricesPath, payload: body as object })
  const createRaw = (payload: string | Buffer) =>
    app().inject({ method: 'POST', url: pricesPath, headers: { 'content-type': 'application/json' }, payload })
  const fields = (response: { json(): { errors?: { field: string }[] } }) =>
    (response.json().errors ?? []).map((error) => error.field)
  const models = async () => (await storedEntries(ctx.db)).map((row) => row.model)

  describe('writing keys', () => {
    test('five spellings that print alike are one key: the first is created in NFC, the rest are 409', async () => {
      const first = await create({ ...entry, model: lookAlikeModels[1] })
      assert.equal(first.statusCode, 200, first.body)
      assert.equal(first.json().model, 'Café 01')
      for (const model of lookAlikeModels) {
        const again = await create({ ...entry, model })
        assert.equal(again.statusCode, 409, `${JSON.stringify(model)}: ${again.body}`)
        assert.equal(again.json().code, 'duplicate-key')
        assert.equal(again.json().existingId, first.json().id)
      }
      assert.deepEqual(await models(), ['Café 01'])
    })

    test('manufacturer and brand are keys too: a no-break space and a zero-width joiner are not a new entry', async () => {
      const first = await create({ ...entry, manufacturer: 'De Rigo', brand: 'Police', model: 'SPL 1' })
      assert.equal(first.statusCode, 200)
      const again = await create({ ...entry, manufacturer: 'De\u00A0Rigo', brand: 'Pol\u200Dice', model: 'SPL 1' })
      assert.equal(again.statusCode, 409)
    })

    test('a PUT to a look-alike of another entry is a 409, and a PUT with its own key spelled otherwise changes nothing', async () => {
      const first = await create({ ...entry, model: 'Café 01' })
      const second = await create({ ...entry, model: 'Café 02' })
      const clash = await app().inject({
        method: 'PUT',
        url: `${pricesPath}/${second.json().id}`,
        payload: { ...entry, model: 'Cafe\u0301\u00A001' },
      })
      assert.equal(clash.statusCode, 409)
      assert.equal(clash.json().existingId, first.json().id)
      const same = await app().inject({
        method: 'PUT',
        url: `${pricesPath}/${first.json().id}`,
        payload: { ...entry, model: '\uFEFFCafe\u0301 01' },
      })
      assert.equal(same.statusCode, 200)
      assert.equal(same.headers.etag, first.headers.etag)
      assert.deepEqual(await models(), ['Café 01', 'Café 02'])
    })

    test('a model of nothing but a zero-width space is blank: 400 naming the model', async () => {
      const response = await create({ ...entry, model: '\u200B' })
      assert.equal(response.statusCode, 400)
      assert.deepEqual(fields(response), ['model'])
      assert.match(response.json().errors[0].message, /must not be blank/)
      assert.deepEqual(await models(), [])
    })

    test('a right-to-left override or an isolate in a key is a 400 naming the field', async () => {
      const override = await create({ ...entry, model: 'RB\u202E4512' })
      assert.equal(override.statusCode, 400)
      assert.deepEqual(fields(override), ['model'])
      assert.match(override.json().errors[0].message, /bidirectional control/)
      const isolate = await create({ ...entry, brand: '\u2067Carrera\u2069', model: 'X' })
      assert.deepEqual(fields(isolate), ['brand'])
      assert.deepEqual(await models(), [])
    })

    test('a lone surrogate sent as a JSON escape is a 400 naming the field, not U+FFFD stored', async () => {
      const response = await createRaw(
        '{"manufacturer":"Safilo","brand":"Carrera","model":"CA \\ud800 1","price":1,"purchase":1}',
      )
      assert.equal(response.statusCode, 400, response.body)
      assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8')
      assert.deepEqual(fields(response), ['model'])
      assert.match(response.json().errors[0].message, /unpaired surrogate/)
      assert.deepEqual(await models(), [])
    })

    test('invalid UTF-8 in a JSON body is a 400 naming the field, not U+FFFD stored', async () => {
      const body = Buffer.concat([
        Buffer.from('{"manufacturer":"Safilo","brand":"Carrera","model":"CA '),
        Buffer.from([0xff, 0xc3]),
        Buffer.from('","price":1,"purchase":1}'),
      ])
      const response = await createRaw(body)
      assert.equal(response.statusCode, 400, response.body)
      assert.equal(response.json().code, 'malformed-body')
      assert.deepEqual(fields(response), ['model'])
      assert.match(response.json().detail, /not valid UTF-8/)
      assert.deepEqual(await models(), [])
    })

    test('keys in other scripts, already in their one form, are stored as sent', async () => {
      const response = await create({ ...entry, manufacturer: 'Łódź Optyk', model: 'Ёлка 1' })
      assert.equal(response.statusCode, 200)
      assert.deepEqual(
        (await storedEntries(ctx.db)).map((row) => [row.manufacturer, row.model]),
        [['Łódź Optyk', 'Ёлка 1']],
      )
    })
  })

  describe('searching keys', () => {
    test('listing filters typed with a no-break space, in NFD or with a zero-width space find the entry', async () => {
      const created = await create({ ...entry, model: 'Café 01' })
      for (const model of lookAlikeModels) {
        const response = await app().inject({
          method: 'GET',
          url: `${pricesPath}/list?model=${encodeURIComponent(model)}`,
        })
        assert.equal(response.statusCode, 200)
        assert.deepEqual(
          response.json().content.map((item: { id: number }) => item.id),
          [created.json().id],
          JSON.stringify(model),
        )
      }
    })

    test('a price-list search typed with look-alike text finds the entry', async () => {
      const created = await create({ ...entry, model: 'Café 01' })
      for (const model of lookAlikeModels) {
        const response = await app().inject({
          method: 'POST',
          url: '/api/v2/good/nomenclature/search/glasses',
          payload: { byPriceList: true, model },
        })
        assert.equal(response.statusCode, 200, response.body)
        assert.deepEqual(
          response.json().content.map((item: { model: string }) => item.model),
          [created.json().model],
          JSON.stringify(model),
        )
      }
    })
  })

  describe('broken percent-encoding', () => {
    for (const broken of ['%FF', '%E0%A4%A', '%', '%zz']) {
      test(`${broken} in a query string is a 400 malformed-request, as in a path`, async () => {
        const inQuery = await app().inject({ method: 'GET', url: `${pricesPath}/list?model=${broken}` })
        assert.equal(inQuery.statusCode, 400, inQuery.body)
        assert.equal(inQuery.headers['content-type'], 'application/problem+json; charset=utf-8')
        assert.equal(inQuery.json().code, 'malformed-request')
        assert.equal(inQuery.json().instance, `${pricesPath}/list`)
        const inPath = await app().inject({ method: 'GET', url: `${pricesPath}/${broken}` })
        assert.equal(inPath.statusCode, 400)
        assert.equal(inPath.json().code, inQuery.json().code)
      })
    }

    test('broken encoding in the query of a write refuses it before anything is written', async () => {
      const response = await app().inject({
        method: 'POST',
        url: `${pricesPath}/list?model=%E0%A4%A`,
        payload: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 2, round: 'WHOLE' },
      })
      assert.equal(response.statusCode, 400)
      assert.equal(await changeCount(ctx.db), 0)
    })

    test('valid encodings still decode: %C3%A9 and + are é and a space', async () => {
      const created = await create({ ...entry, model: 'Café 01' })
      const response = await app().inject({ method: 'GET', url: `${pricesPath}/list?model=Caf%C3%A9+01` })
      assert.equal(response.statusCode, 200)
      assert.equal(response.json().content[0]?.id, created.json().id)
    })
  })

  describe('CSV import', () => {
    const header = 'manufacturer,brand,model,price,purchase'
    const upload = (body: string) =>
      app().inject({
        method: 'POST',
        url: `${pricesPath}/import`,
        headers: { 'content-type': 'text/csv' },
        payload: body,
      })

    test('an upload stores keys in their one form and finds look-alikes within the file and in the table', async () => {
      await create({ ...entry, model: 'Café 01' })
      const withinFile = await upload(`${header}\nSafilo,Carrera,Polo\u200B 2,1,1\nSafilo,Carrera,Polo 2,1,1\n`)
      assert.equal(withinFile.statusCode, 422, withinFile.body)
      assert.deepEqual(
        withinFile.json().problems.map((p: { line: number; message: string }) => [p.line, p.message]),
        [[3, 'duplicates the keys and bounds of line 2']],
      )
      const inTable = await upload(`${header}\nSafilo,Carrera,Cafe\u0301\u00A001,1,1\n`)
      assert.equal(inTable.statusCode, 422, inTable.body)
      assert.deepEqual(
        inTable.json().problems.map((p: { line: number }) => p.line),
        [2],
      )
      assert.match(inTable.json().problems[0].message, /already in the price list/)
      const accepted = await upload(`${header}\nSafilo,Carrera,Polo\u00A0\u200B2,1,1\n`)
      assert.equal(accepted.statusCode, 200, accepted.body)
      assert.deepEqual(await models(), ['Café 01', 'Polo 2'])
    })

    test('an upload with a bidi override in a key is a 422 naming the line and column', async () => {
      const response = await upload(`${header}\nSafilo,Carrera,\u202EX1,1,1\n`)
      assert.equal(response.statusCode, 422)
      assert.deepEqual(
        response.json().problems.map((p: { line: number; column: string }) => [p.line, p.column]),
        [[2, 'model']],
      )
    })

    test("the CLI's import (importCsv) stores keys in their one form too", async () => {
      const result = await importCsv(ctx.db, glasses, 'prices', [`${header}\nDe\u00A0Rigo,Police,Cafe\u0301 7,1,1\n`], {
        refresh: 'none',
      })
      assert.equal(result.problemCount, 0, JSON.stringify(result.problems))
      assert.deepEqual(
        (await storedEntries(ctx.db)).map((row) => [row.manufacturer, row.model]),
        [['De Rigo', 'Café 7']],
      )
    })
  })

  describe('the migration of stored keys', () => {
    const plant = (rows: readonly (readonly [string, string, string])[]) => plantKeys(ctx.db, rows)

    test('merges what is safe, reports look-alikes and invalid keys, and records the rewrite in the history', async () => {
      const [nfc, nfd, nbsp, override, invisible, ascii] = await plant([
        ['Safilo', 'Carrera', 'Café 01'],
        ['Safilo', 'Carrera', 'Cafe\u0301 01'],
        ['De\u00A0Rigo', 'Police', 'Caf\u200Be\u0301 9'],
        ['Safilo', 'Carrera', 'RB\u202E4512'],
        ['Safilo', 'Carrera', '\u200B'],
        ['Safilo', 'Carrera', 'Plain'],
      ])
      const generation = async () =>
        Number(
          (
            await sql<{ g: string | number }>`SELECT count(*) AS g FROM catalog_change WHERE kind = 'glasses'`.execute(
              ctx.db.primary,
            )
          ).rows[0]?.g,
        )
      const changesBefore = await generation()

      await normaliseLookAlikeKeys(ctx.db.primary)

      const merged = await storedEntry(ctx.db, nbsp!)
      assert.deepEqual([merged?.manufacturer, merged?.brand, merged?.model], ['De Rigo', 'Police', 'Café 9'])
      assert.equal(merged?.version, 2)
      assert.equal(merged?.updated_by, 'system')
      // The look-alikes and the invalid keys are left as they were.
      assert.equal((await storedEntry(ctx.db, nfd!))?.model, 'Cafe\u0301 01')
      assert.equal((await storedEntry(ctx.db, nfc!))?.model, 'Café 01')
      assert.equal((await storedEntry(ctx.db, override!))?.model, 'RB\u202E4512')
      assert.equal((await storedEntry(ctx.db, ascii!))?.version, 1)

      const report = await readLookAlikeKeyReport(ctx.db.primary)
      assert.equal(report.normalised, 1)
      assert.deepEqual(
        report.lookAlikes.map((e) => [e.entryId, e.lookAlikes]),
        [
          [nfc, [nfd]],
          [nfd, [nfc]],
        ],
      )
      assert.deepEqual(
        report.invalid.map((e) => [e.entryId, e.reason]),
        [
          [override, 'model holds a bidirectional control character'],
          [invisible, 'model is blank once invisible characters are removed'],
        ],
      )

      const lines = describeLookAlikeKeyReport(report)
      assert.equal(lines.length, 5)
      assert.match(lines[0] ?? '', /^1 glass price entry had look-alike keys brought to one form/)
      assert.equal(
        lines[1],
        `look-alike key left as it is: entry ${nfc} ("Safilo" / "Carrera" / "Café 01"): prints as the key of entries ${nfd}`,
      )

      // The rewrite is a change of the history (old → new per field), and the change log saw the entry.
      const history = await app().inject({ method: 'GET', url: `${pricesPath}/${nbsp}/history` })
      assert.equal(history.statusCode, 200)
      const [item] = history.json().content
      assert.equal(item.action, 'UPDATE')
      assert.equal(item.user, 'system')
      assert.deepEqual(
        item.changes.map((c: { field: string; oldValue: string; newValue: string }) => [
          c.field,
          c.oldValue,
          c.newValue,
        ]),
        [
          ['manufacturer', 'De\u00A0Rigo', 'De Rigo'],
          ['model', 'Caf\u200Be\u0301 9', 'Café 9'],
        ],
      )
      assert.ok((await generation()) > changesBefore)

      // The merged entry is now found by its printed key, and a look-alike of it is a duplicate.
      const listed = await app().inject({ method: 'GET', url: `${pricesPath}/list?manufacturer=De%20Rigo` })
      assert.deepEqual(
        listed.json().content.map((i: { id: number }) => i.id),
        [nbsp],
      )
      const again = await create({ ...entry, manufacturer: 'De Rigo', brand: 'Police', model: 'Café 9' })
      assert.equal(again.statusCode, 409)
      // A look-alike left as it was: writing it with its printed key answers 409 naming the other.
      const rename = await app().inject({
        method: 'PUT',
        url: `${pricesPath}/${nfd}`,
        payload: { ...entry, model: 'Cafe\u0301 01' },
      })
      assert.equal(rename.statusCode, 409)
      assert.equal(rename.json().existingId, nfc)
    })

    test("reverting the migration's change keeps the keys in their one form", async () => {
      const [id] = await plant([['De\u00A0Rigo', 'Police', 'Caf\u200Be\u0301 9']])
      await normaliseLookAlikeKeys(ctx.db.primary)
      const history = await app().inject({ method: 'GET', url: `${pricesPath}/${id}/history` })
      const batch = history.json().content[0].batch
      const reverted = await app().inject({ method: 'POST', url: `${pricesPath}/changes/${batch}/revert` })
      assert.equal(reverted.statusCode, 200, reverted.body)
      const row = await storedEntry(ctx.db, id!)
      assert.deepEqual([row?.manufacturer, row?.model], ['De Rigo', 'Café 9'])
    })

    test('optics_key_text in SQL gives the one form the service computes, trimmed', async () => {
      const samples = [
        'Café 01',
        'Cafe\u0301 01',
        ' \u200BCaf\u200Ce\u0301\u00A0\u202F01\u2007\uFEFF ',
        '\u00ADSoft\u2060Join\u2061\u180E',
        '\u200E\u200F\u061CЁлка\u3000',
        '\tOld\u2028Line\u00A0',
        'Plain ASCII',
        '한국어 \u1100\u1161',
      ]
      const { rows } = await sql<{ value: string; canonical: string }>`
        SELECT value, optics_key_text(value) AS canonical FROM unnest(${samples}::text[]) AS value`.execute(
        ctx.db.primary,
      )
      assert.deepEqual(
        rows.map((row) => row.canonical),
        samples.map((sample) => canonicalText(sample).trim()),
      )
    })

    test('a second run finds nothing left to merge, and a clean table writes no change', async () => {
      await plant([['Safilo', 'Carrera', 'Café\u00A01']])
      await normaliseLookAlikeKeys(ctx.db.primary)
      assert.equal((await readLookAlikeKeyReport(ctx.db.primary)).normalised, 1)
      const reported = async () =>
        Number(
          (await sql<{ n: string | number }>`SELECT count(*) AS n FROM glass_price_key_report`.execute(ctx.db.primary))
            .rows[0]?.n,
        )
      const [changes, rows] = [await changeCount(ctx.db), await reported()]
      await normaliseLookAlikeKeys(ctx.db.primary)
      assert.equal(await reported(), rows)
      assert.equal(await changeCount(ctx.db), changes)
    })
  })
})
