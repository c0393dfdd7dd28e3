import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import type { Page } from 'playwright-core'
import { ageEntries, clearGlassPrices, pricesPath, seedEntries, storedEntries } from '../fixtures/glass-prices.js'
import { buildTestApp } from '../harness.js'
import { browserSuite, ConsoleErrors, seriousViolations, until } from './browser.js'

/*
 * The desk against a colleague's work: a week-old export, edited in a spreadsheet, is chosen for upload after a
 * colleague changed two of its entries. The desk picks the update mode for an export, its check lists the rows
 * that change old → new and highlights the conflicts with who changed them, and applies the file only once the
 * manager chooses to overwrite the two, saying how many.
 */

browserSuite('price desk: an old export uploaded after a colleague’s edit', (ctx, browser) => {
  let app: FastifyInstance
  let base: string
  let page: Page
  let files: string
  const consoleErrors = new ConsoleErrors()

  before(async () => {
    await clearGlassPrices(ctx.db)
    app = await buildTestApp(ctx.db)
    await app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    files = mkdtempSync(join(tmpdir(), 'upload-conflicts-'))
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    consoleErrors.watch(page, { provokedStatuses: [409] })
  })
  after(async () => {
    await page?.close()
    await app?.close()
    if (files) rmSync(files, { recursive: true, force: true })
  })

  const prices = async () => (await storedEntries(ctx.db)).map((e) => [e.model, e.price])
  const text = async (selector: string) => ((await page.textContent(selector)) ?? '').trim()

  test('the conflicts are shown with who changed them, and applied only when overwriting is chosen', async () => {
    const ids = await seedEntries(
      ctx.db,
      ['CA 1', 'CA 2', 'CA 3'].map((model, index) => ({
        manufacturer: 'Safilo',
        brand: 'Carrera',
        model,
        price: `${(index + 1) * 10000}.00`,
        purchase: '5000.00',
      })),
    )
    await ageEntries(ctx.db, new Date(Date.now() - 7 * 86_400_000).toISOString())
    // Last week's export for Excel, every retail price raised by 500 in the spreadsheet.
    const exported = await (await fetch(`${base}${pricesPath}/export?excel=true`)).text()
    const file = join(files, 'glass-prices-week-old-excel.csv')
    writeFileSync(
      file,
      exported.replace(/;(\d+)0000,00;/g, (_all, high: string) => `;${high}0500,00;`),
    )
    // Meanwhile a colleague changed CA 2 and CA 3.
    for (const [index, price] of [
      [1, '24990'],
      [2, '34990'],
    ] as const) {
      const response = await fetch(`${base}${pricesPath}/${ids[index]}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          manufacturer: 'Safilo',
          brand: 'Carrera',
          model: `CA ${index + 1}`,
          price,
          purchase: '5000',
        }),
      })
      assert.equal(response.status, 200)
    }
    const before = await prices()

    await page.goto(`${base}/#/prices/transfer`)
    await page.waitForSelector('#upload-file')
    await page.check('input[name="mode"][value="append"]')
    await page.setInputFiles('#upload-file', file)
    await until('the update mode chosen for an export', () =>
      page.locator('input[name="mode"][value="upsert"]').isChecked(),
    )
    await page.click('button:text-is("Проверить файл")')
    await page.waitForSelector('#upload-conflicts')
    assert.match(await text('#upload-checked'), /обновится 1, без изменений 0\. Изменённые после выгрузки: 2\./)
    const conflicts = await page.locator('#check-conflicts tbody tr.conflict').allTextContents()
    assert.equal(conflicts.length, 2)
    assert.match(conflicts[0] ?? '', /^3Safilo · Carrera · CA 224\s990,00 → 20\s500,00.*anonymous, .*1 → 2$/)
    assert.match(await text('#check-conflicts caption'), /Изменены после выгрузки: 2/)
    assert.match(
      (await page.locator('#check-changed tbody tr').allTextContents()).join('|'),
      /^2Safilo · Carrera · CA 110\s000,00 → 10\s500,005\s000,00$/,
    )
    const apply = page.locator('button:text-is("Загрузить")')
    assert.equal(await apply.isDisabled(), true, 'no upload before a choice')
    assert.deepEqual(await prices(), before, 'the check writes nothing')
    assert.deepEqual(await seriousViolations(page), [])

    await page.check('#overwrite-conflicts')
    assert.equal(await text('label:has(#overwrite-conflicts)'), 'Перезаписать 2 позиции, изменённые после выгрузки')
    await apply.click()
    await page.waitForSelector('#upload-applied')
    assert.match(await text('#upload-applied'), /обновлено 3/)
    assert.deepEqual(await prices(), [
      ['CA 1', '10500.00'],
      ['CA 2', '20500.00'],
      ['CA 3', '30500.00'],
    ])
  })

  test('the check’s lists are paged: the next page shows the next rows, old → new', async () => {
    await clearGlassPrices(ctx.db)
    await seedEntries(
      ctx.db,
      Array.from({ length: 25 }, (_, index) => ({
        manufacturer: 'Seed',
        brand: 'Paged',
        model: `P ${String(index + 1).padStart(2, '0')}`,
        price: '100.00',
        purchase: '50.00',
      })),
    )
    const exported = await (await fetch(`${base}${pricesPath}/export`)).text()
    const file = join(files, 'paged.csv')
    writeFileSync(file, exported.replaceAll(',100.00,50.00,', ',120.00,50.00,'))
    await page.goto(`${base}/#/prices/transfer`)
    await page.reload()
    await page.waitForSelector('#upload-file')
    await page.setInputFiles('#upload-file', file)
    await page.click('button:text-is("Проверить файл")')
    await page.waitForSelector('#check-changed')
    assert.match(await text('#check-changed caption'), /Изменятся: 25/)
    assert.equal(await page.locator('#check-changed tbody tr').count(), 20)
    await page.click('nav[aria-label="Страницы проверки"] button:text-is("Следующая страница")')
    await until(
      'the second page of the check',
      async () => (await page.locator('#check-changed tbody tr').count()) === 5,
    )
    const rows = await page.locator('#check-changed tbody tr').allTextContents()
    assert.match(rows[0] ?? '', /^22Seed · Paged · P 21100,00 → 120,0050,00$/)
    assert.equal((await prices()).filter(([, price]) => price === '100.00').length, 25, 'the check writes nothing')
  })

  test('the page logged no console error', () => {
    assert.deepEqual(consoleErrors.errors, [])
  })
})
