import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { test } from 'node:test'
import ExcelJS from 'exceljs'
import Papa from 'papaparse'
import type { Download, Page } from 'playwright-core'
import type { KindForms } from '../../src/catalog/search/kind-form-routes.js'
import { seedCatalogue } from '../../src/demo/demo-catalogue.js'
import { browserSuite, ConsoleErrors, seriousViolations, serveDesk, until } from './browser.js'

/*
 * The counter's view on screen as a file and on paper, in a real browser against the service on each database:
 * the CSV and XLSX hold every row of the search (its filters and sort, past the page on screen), the columns
 * shown in their order, headed in the page's language; the printed page has the table, the search in words and
 * the date, and none of the screen's controls.
 */

type KindForm = KindForms['kinds'][number]
type Row = Record<string, string | number | null>

const SCALE = 300

browserSuite('the counter search downloaded and printed', (ctx, browser) => {
  const consoleErrors = new ConsoleErrors()
  const desk = serveDesk(ctx, browser, consoleErrors, () => seedCatalogue(ctx.db, { scale: SCALE }))
  let lenses: KindForm

  /** Every row the API answers for a search, in its order (one page holds them all at this scale). */
  const apiRows = async (kind: string, body: Record<string, unknown>, sort: string) => {
    const response = await fetch(`${desk.base}/api/v2/good/nomenclature/search/${kind}?size=2000&sort=${sort}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    assert.equal(response.status, 200)
    const page = (await response.json()) as { totalElements: number; content: Row[] }
    assert.equal(page.content.length, page.totalElements, 'one call reads every row at this scale')
    return page.content
  }

  const waitForCaption = (page: Page, total: number) =>
    until(`the total ${total}`, async () =>
      new RegExp(`\\b${total}\\b`).test(((await page.locator('caption').textContent()) ?? '').replace(/\s/g, '')),
    )

  const download = async (page: Page, button: string): Promise<{ name: string; bytes: Buffer }> => {
    const [file] = await Promise.all([page.waitForEvent('download'), page.click(`button:text-is("${button}")`)])
    const saved = file as Download
    return { name: saved.suggestedFilename(), bytes: await readFile((await saved.path()) as string) }
  }

  let manufacturer: string
  let rows: Row[]
  let shown: KindForm['columns']

  test('the view: lenses of one manufacturer picked from the list, dearest first, brand column hidden', async () => {
    const { page, base } = desk
    lenses = ((await (await fetch(`${base}/api/v2/good/nomenclature/kinds`)).json()) as KindForms).kinds.find(
      (form) => form.kind === 'lenses',
    )!
    manufacturer = String((await apiRows('lenses', { byPriceList: false }, 'retailPrice,desc'))[0]!.manufacturer)
    rows = await apiRows('lenses', { byPriceList: false, manufacturer, exact: ['manufacturer'] }, 'retailPrice,desc')
    assert.ok(rows.length > 20, 'more rows than the page on screen')
    await page.goto(
      `${base}/#/?kind=lenses&manufacturer=${encodeURIComponent(manufacturer)}&exact=manufacturer&sort=retailPrice,desc`,
    )
    await waitForCaption(page, rows.length)
    assert.equal(await page.locator('.demo').count(), 0, 'no demo note without the demo mode')
    await page.click('.column-chooser summary')
    await page.uncheck('input[name="column"][value="brand"]')
    shown = lenses.columns.filter((column) => column.name !== 'brand')
    await until('the brand column hidden', async () => (await page.locator('thead th').count()) === shown.length)
  })

  test('CSV in Russian: every row of the search, the columns on screen headed in Russian, `;` and decimal comma', async () => {
    const { page } = desk
    const { name, bytes } = await download(page, 'Скачать CSV')
    assert.match(name, /^lenses-\d{4}-\d{2}-\d{2}\.csv$/)
    const text = bytes.toString('utf8')
    assert.equal(text.charAt(0), '\uFEFF', 'a BOM, so Excel reads the file as UTF-8')
    const parsed = Papa.parse<string[]>(text.slice(1).trimEnd(), { delimiter: ';' })
    const [header, ...data] = parsed.data
    assert.deepEqual(
      header,
      shown.map((column) => column.label.ru),
    )
    assert.equal(data.length, rows.length)
    data.forEach((line, index) => {
      const row = rows[index]!
      shown.forEach((column, at) => {
        const value = row[column.name]
        const expected = value === null ? '' : column.type === 'text' ? String(value) : String(value).replace('.', ',')
        assert.equal(line[at], expected, `row ${index + 1}, ${column.name}`)
      })
    })
    assert.match((await page.textContent('.export-status')) ?? '', new RegExp(`${name}.*${rows.length}`))
  })

  test('XLSX in English: the same rows, headed in English, numbers as numbers', async () => {
    const { page } = desk
    await page.selectOption('.language select', 'en')
    await page.waitForSelector('button:text-is("Download Excel (XLSX)")')
    const { name, bytes } = await download(page, 'Download Excel (XLSX)')
    assert.match(name, /^lenses-\d{4}-\d{2}-\d{2}\.xlsx$/)
    const workbook = new ExcelJS.Workbook()
    await workbook.xlsx.load(bytes as unknown as ArrayBuffer)
    const sheet = workbook.worksheets[0]!
    assert.equal(sheet.name, lenses.title.en)
    const cells = (line: number) => (sheet.getRow(line).values as unknown[]).slice(1)
    assert.deepEqual(
      cells(1),
      shown.map((column) => column.label.en),
    )
    assert.equal(sheet.actualRowCount, rows.length + 1)
    rows.forEach((row, index) => {
      const line = sheet.getRow(index + 2)
      shown.forEach((column, at) => {
        const cell = line.getCell(at + 1).value
        const value = row[column.name]
        if (value === null) assert.equal(cell, null, `row ${index + 1}, ${column.name}`)
        else if (column.type === 'text') assert.equal(cell, String(value), `row ${index + 1}, ${column.name}`)
        else assert.equal(cell, Number(value), `row ${index + 1}, ${column.name}`)
      })
    })
    await page.selectOption('.language select', 'ru')
    await page.waitForSelector('button:text-is("Печать")')
  })

  test('print: the table, the search in words and the date; no header, tabs, filters, tools or pager', async () => {
    const { page } = desk
    // The browser's print dialog counted instead of opened (a string, so the test's compiler adds nothing).
    await page.evaluate('window.printed = 0; window.print = () => { window.printed++ }')
    await page.click('button:text-is("Печать")')
    assert.equal(await page.evaluate('window.printed'), 1)

    assert.equal(await page.locator('.print-heading').isVisible(), false, 'on screen, no print heading')
    await page.emulateMedia({ media: 'print' })
    try {
      for (const hidden of ['.top', '[role="tablist"]', 'form.filters', '.results-tools', '.pager']) {
        assert.equal(await page.locator(hidden).first().isVisible(), false, `${hidden} is not printed`)
      }
      assert.equal(await page.locator('table.results').isVisible(), true)
      const heading = (await page.textContent('.print-heading')) ?? ''
      const label = (name: string) => lenses.columns.find((column) => column.name === name)!.label.ru
      assert.match(heading, new RegExp(lenses.title.ru))
      assert.match(heading, /Искать среди: товаров с ценой/)
      assert.ok(heading.includes(`${label('manufacturer')} точно «${manufacturer}»`), heading)
      assert.ok(heading.includes(`Порядок: «${label('retailPrice')}», по убыванию`), heading)
      assert.match(heading, new RegExp(`Строки 1–\\d+ из ${rows.length}`))
      assert.match(heading, new RegExp(`Напечатано \\d{2}\\.\\d{2}\\.${new Date().getFullYear()}`))
    } finally {
      await page.emulateMedia({ media: 'screen' })
    }
  })

  test('axe-core finds no serious or critical violation with the downloads on screen', async () => {
    assert.deepEqual(await seriousViolations(desk.page), [])
  })

  test('the screen logged no console error', () => {
    assert.deepEqual(consoleErrors.errors, [])
  })
})
