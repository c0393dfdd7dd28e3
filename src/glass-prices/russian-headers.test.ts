import assert from 'node:assert/strict'
import { test } from 'node:test'
import ExcelJS from 'exceljs'
import {
  clearGlassPrices,
  pricesPath,
  seedEntries,
  storedEntries,
  uploadPriceFile,
} from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'

/*
 * Russian throughout the price list's files (issue 31, point 5): an export heads its columns in Russian when asked,
 * the upload reads such a file back, and its problems name the file's own columns (`Цена`, not `price`).
 */

const russianHeader = 'Производитель,Бренд,Модель,Цена,Закупка'
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

eachDatabase('glass price list: Russian headers', (ctx) => {
  const app = useTestApp(ctx, { beforeEach: () => clearGlassPrices(ctx.db) })
  const download = (query: string) => app().inject({ method: 'GET', url: `${pricesPath}/export${query}` })
  const upload = (body: string | Buffer, query = '', contentType = 'text/csv') =>
    uploadPriceFile(app(), body, query, contentType)
  const problems = (response: { json(): { problems: { line: number; column: string | null }[] } }) =>
    response.json().problems.map((p) => [p.line, p.column])

  test('headers=ru heads the CSV in Russian, and the file uploads back unchanged', async () => {
    await seedEntries(ctx.db, [
      { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB 5228', price: 12990, purchase: 5200 },
    ])
    const russian = await download('?headers=ru&excel=true')
    assert.equal(russian.statusCode, 200, russian.body)
    const [head, row] = russian.body.replace(/^\uFEFF/, '').split(/\r?\n/)
    // The entry's version and change time follow the data, headed in Russian too.
    assert.equal(head, `${russianHeader.replaceAll(',', ';')};Версия;Изменено`)
    assert.match(row!, /^Luxottica;Ray-Ban;RB 5228;12990,00;5200,00;1;\d{4}-\d\d-\d\dT[\d:.]+Z$/)
    assert.equal(
      (await download('')).body.split(/\r?\n/)[0],
      'manufacturer,brand,model,price,purchase,version,changedAt',
    )

    const before = await storedEntries(ctx.db)
    const back = await upload(russian.rawPayload, '?mode=upsert')
    assert.equal(back.statusCode, 200, back.body)
    assert.equal(back.json().unchanged, 1)
    assert.deepEqual(await storedEntries(ctx.db), before)
  })

  test('headers=ru heads the workbook in Russian', async () => {
    const response = await download('?format=xlsx&headers=ru')
    assert.equal(response.headers['content-type'], XLSX)
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.load(response.rawPayload as never)
    const values = workbook.worksheets[0]?.getRow(1).values as unknown[]
    assert.deepEqual(values.slice(1), [...russianHeader.split(','), 'Версия', 'Изменено'])
  })

  test('an unknown header language is a 400 naming headers', async () => {
    const response = await download('?headers=de')
    assert.equal(response.statusCode, 400)
    assert.equal(response.headers['content-type'], 'application/problem+json; charset=utf-8')
    assert.deepEqual(
      response.json().errors.map((e: { field: string }) => e.field),
      ['headers'],
    )
  })

  test("an upload's problems name the file's own columns, as its header writes them", async () => {
    const russian = await upload(`производитель,Бренд,Модель,Цена,Закупка\nLuxottica,Ray-Ban,RB 1,абв,-1\n`)
    assert.equal(russian.statusCode, 422, russian.body)
    assert.deepEqual(problems(russian), [
      [2, 'Цена'],
      [2, 'Закупка'],
    ])
    // A missing column is named in the language of the rest of the header.
    const missing = await upload('Производитель,Бренд,Модель,Цена\nLuxottica,Ray-Ban,RB 1,1\n')
    assert.deepEqual(problems(missing), [[1, 'Закупка']])
    const english = await upload('manufacturer,brand,model,price\nLuxottica,Ray-Ban,RB 1,x\n')
    assert.deepEqual(problems(english), [[1, 'purchase']])
    const mixed = await upload('manufacturer,brand,model,Цена,purchase\nLuxottica,Ray-Ban,RB 1,x,1\n')
    assert.deepEqual(problems(mixed), [[2, 'Цена']])
    assert.deepEqual(await storedEntries(ctx.db), [])
  })
})
