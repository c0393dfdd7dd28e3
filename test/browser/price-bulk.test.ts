import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { unzipSync } from 'fflate'
import { SignJWT } from 'jose'
import { sql } from 'kysely'
import type { Page } from 'playwright-core'
import { seedCatalogue } from '../../src/demo/demo-catalogue.js'
import { changeCount, pricesPath, slowPriceUpdates, storedEntries } from '../fixtures/glass-prices.js'
import { buildTestApp, freePort } from '../harness.js'
import { browserSuite, ConsoleErrors, screenshotPath, seriousViolations } from './browser.js'

/*
 * The price manager's desk in a real browser (Debian's Chromium through playwright-core) against the real service
 * on each database, holding the demo catalogue: the bulk change wizard (its dry run compared with the API's, a
 * refused one explained, field errors at their fields, the change applied once as the formula says, and undone),
 * the upload (problems by line and column with nothing written, a good file applied, replace confirmed by the
 * number it deletes) and the download (the same file as the export API's). No console error, no serious
 * accessibility violation (axe-core). The screenshot of the wizard in docs/web-app.md comes from here.
 */

const SCALE = 400

/** A count as the desk writes it in Russian: thousands grouped by a no-break space. */
const grouped = (count: number) => new Intl.NumberFormat('ru').format(count)

interface Preview {
  selectedCount: number
  changedCount: number
  unchangedCount: number
  rejectedCount: number
  changes: { id: number; oldValue: number; newValue: number }[]
  wouldApply: boolean
  reasons: { code: string }[]
}

browserSuite('price desk: bulk change, upload and download in a real browser', (ctx, browser) => {
  let app: FastifyInstance
  let base: string
  let page: Page
  let files: string
  let manufacturer: string
  const consoleErrors = new ConsoleErrors()

  /** The API's own dry run of a bulk change, to compare the page with. */
  const apiDryRun = async (query: string, body: Record<string, unknown>): Promise<Preview> => {
    const response = await fetch(`${base}${pricesPath}/list?${query}&dryRun=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    assert.equal(response.status, 200)
    return (await response.json()) as Preview
  }

  /** Every entry as the database holds it, prices as exact decimal text, by id (what a change may alter). */
  const entries = async () =>
    (await storedEntries(ctx.db)).map(({ id, manufacturer, brand, model, price, purchase }) => ({
      id: Number(id),
      manufacturer,
      brand,
      model,
      price,
      purchase,
    }))
  const changes = () => changeCount(ctx.db)

  const text = async (selector: string) => ((await page.textContent(selector)) ?? '').trim()

  /** Opens the wizard afresh and fills step 1; `band` is the body's band on the base price. */
  const selection = async (filters: Record<string, string>, band: { from?: string; to?: string } = {}) => {
    await page.goto(`${base}/#/prices/bulk`)
    await page.reload()
    await page.waitForSelector('#filter-manufacturer')
    for (const [name, value] of Object.entries(filters)) await page.fill(`#filter-${name}`, value)
    if (band.from !== undefined) await page.fill('#band-priceFrom', band.from)
    if (band.to !== undefined) await page.fill('#band-priceTo', band.to)
    await page.click('button:text-is("Далее")')
  }

  /** Fills step 2 (the labels as the manager reads them) and runs the dry run. */
  const formula = async (values: { base: string; change: string; coefficient: string; difference: string }) => {
    await page.waitForSelector('#coefficient')
    await page.locator(`input[name="priceTypeBase"][value="${values.base}"]`).check()
    await page.locator(`input[name="priceTypeChange"][value="${values.change}"]`).check()
    await page.fill('#coefficient', values.coefficient)
    await page.fill('#difference', values.difference)
    await page.getByLabel('Округление').selectOption('TENS')
  }

  before(async () => {
    await seedCatalogue(ctx.db, { scale: SCALE })
    app = await buildTestApp(ctx.db)
    await app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    files = mkdtempSync(join(tmpdir(), 'price-bulk-'))
    // The manufacturer with the most entries, so the selections below are not trivial.
    const { rows } = await sql<{ manufacturer: string }>`
      SELECT manufacturer FROM glasses_price GROUP BY manufacturer ORDER BY count(*) DESC, manufacturer LIMIT 1`.execute(
      ctx.db.primary,
    )
    manufacturer = rows[0]!.manufacturer
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })
    // Chromium logs every 4xx answer as a failed resource; the refusals these tests provoke (400 field errors,
    // 409 confirm-deletes, 422 file problems) are answers the page shows, not errors of the page.
    consoleErrors.watch(page, { provokedStatuses: [400, 409, 422] })
  })
  after(async () => {
    await page?.close()
    await app?.close()
    if (files) rmSync(files, { recursive: true, force: true })
  })

  test('the dry run shows the counts and first changes the API computes, and the formula in words', async () => {
    await selection({ manufacturer: manufacturer.toLowerCase() }, { from: '3 000' })
    const listed = (await (
      await fetch(`${base}${pricesPath}/list?manufacturer=${encodeURIComponent(manufacturer.toLowerCase())}&size=1`)
    ).json()) as { totalElements: number }
    await page.waitForSelector(`text=Фильтры выбирают позиций: ${grouped(listed.totalElements)}.`)
    await formula({ base: 'PURCHASE', change: 'RETAIL', coefficient: '2,5', difference: '-10' })
    assert.equal(
      await text('.formula'),
      'Новая розничная цена = закупочная цена × 2.5 − 10 ₽, с округлением до десятков рублей (половина — вверх).',
    )
    await page.click('button:text-is("Пробный расчёт")')
    await page.waitForSelector('#count-selected')
    const expected = await apiDryRun(`manufacturer=${encodeURIComponent(manufacturer.toLowerCase())}`, {
      priceFrom: '3000',
      priceTypeBase: 'PURCHASE',
      priceTypeChange: 'RETAIL',
      coefficient: '2.5',
      difference: '-10',
      round: 'TENS',
    })
    assert.ok(expected.selectedCount > 0 && expected.changedCount > 0)
    assert.deepEqual(
      {
        selected: await text('#count-selected'),
        changed: await text('#count-changed'),
        unchanged: await text('#count-unchanged'),
        rejected: await text('#count-rejected'),
      },
      {
        selected: String(expected.selectedCount),
        changed: String(expected.changedCount),
        unchanged: String(expected.unchangedCount),
        rejected: String(expected.rejectedCount),
      },
    )
    // The sample: the API's first changes, by id, old → new.
    const sample = page.locator('table.sample tbody tr')
    assert.equal(await sample.count(), expected.changes.length)
    const first = expected.changes[0]!
    const cells = (await sample.first().locator('td').allTextContents()).map((cell) =>
      cell.replace(/\s/g, '').replace(',', '.'),
    )
    assert.deepEqual([cells[0], cells[5], cells[6]], [String(first.id), String(first.oldValue), String(first.newValue)])
    assert.equal(await page.locator('button:text-is("К подтверждению")').isEnabled(), true)
  })

  // Taken once, from the embedded database's run.
  if (ctx.target === 'pglite') {
    test('a screenshot of the bulk change dry run for docs/web-app.md', async () => {
      await selection({ manufacturer })
      await formula({ base: 'RETAIL', change: 'RETAIL', coefficient: '1,15', difference: '' })
      await page.getByLabel('Округление').selectOption('HUNDREDS')
      await page.click('button:text-is("Пробный расчёт")')
      await page.waitForSelector('#count-selected')
      await page.screenshot({ path: screenshotPath('price-bulk.png') })
    })
  }

  test('a dry run that would be refused says why in words, and the change cannot be confirmed', async () => {
    await selection({ manufacturer })
    await formula({ base: 'RETAIL', change: 'RETAIL', coefficient: '', difference: '-1000000' })
    await page.click('button:text-is("Пробный расчёт")')
    const alert = await page.waitForSelector('.refused[role="alert"]')
    const expected = await apiDryRun(`manufacturer=${encodeURIComponent(manufacturer)}`, {
      priceTypeBase: 'RETAIL',
      priceTypeChange: 'RETAIL',
      difference: '-1000000',
      round: 'TENS',
    })
    assert.equal(expected.wouldApply, false)
    assert.deepEqual(
      expected.reasons.map((reason) => reason.code),
      ['bulk-change-rejected'],
    )
    assert.match(
      (await alert.textContent())!,
      new RegExp(`не будет применено.*позиций \\(${expected.rejectedCount}\\).*0 или меньше`),
    )
    assert.equal(await text('#count-rejected'), String(expected.rejectedCount))
    assert.ok((await page.locator('table.sample.rejected tbody tr').count()) > 0)
    assert.equal(await page.locator('button:text-is("К подтверждению")').isDisabled(), true)
    assert.deepEqual(await seriousViolations(page), [])
  })

  test("the service's validation problems are shown at their fields, on their step", async () => {
    // A filter band from > to: refused by the listing itself when step 1 is left.
    await selection({ purchaseFrom: '500', purchaseTo: '100' })
    await page.waitForSelector('#filter-purchaseFrom-error')
    assert.match(await text('#filter-purchaseFrom-error'), /purchaseTo/)
    assert.equal(await page.getAttribute('#filter-purchaseFrom', 'aria-invalid'), 'true')

    // A coefficient of 0 stays on step 2, at its field; the base band from > to goes back to step 1.
    await selection({ manufacturer }, { from: '900', to: '100' })
    await formula({ base: 'RETAIL', change: 'RETAIL', coefficient: '0', difference: '' })
    await page.click('button:text-is("Пробный расчёт")')
    await page.waitForSelector('#band-priceFrom-error')
    assert.match(await text('#band-priceFrom-error'), /priceTo/)
    await page.fill('#band-priceFrom', '')
    await page.click('button:text-is("Далее")')
    await page.click('button:text-is("Пробный расчёт")')
    await page.waitForSelector('#coefficient-error')
    assert.match(await text('#coefficient-error'), /больше 0/)
    assert.equal(await page.getAttribute('#coefficient', 'aria-invalid'), 'true')
    // What the page can tell by itself is said before anything is sent.
    await page.fill('#coefficient', '1,1x')
    await page.click('button:text-is("Пробный расчёт")')
    assert.equal(await text('#coefficient-error'), 'Введите число')
  })

  test('the wizard is driven with the keyboard alone, up to the confirmation', async () => {
    /** Presses Tab until the focused element matches `selector`; fails if it is never reached. */
    const tabTo = async (selector: string) => {
      for (let presses = 0; presses < 80; presses++) {
        await page.keyboard.press('Tab')
        if ((await page.locator(selector).and(page.locator(':focus')).count()) > 0) return
      }
      assert.fail(`${selector} is not reachable with Tab`)
    }
    const focusedText = async () => ((await page.locator(':focus').textContent()) ?? '').trim()
    await page.goto(`${base}/#/prices/bulk`)
    await page.reload()
    await page.waitForSelector('#filter-manufacturer')
    await tabTo('#filter-manufacturer')
    await page.keyboard.type(manufacturer)
    await page.keyboard.press('Enter')
    // Each step's heading takes the focus, so the keyboard (and a screen reader) starts at the new step.
    await page.waitForSelector('#coefficient')
    assert.match(await focusedText(), /^Шаг 2 из 4: Формула$/)
    await tabTo('input[name="priceTypeBase"]')
    await page.keyboard.press('ArrowDown')
    assert.equal(await page.isChecked('input[name="priceTypeBase"][value="PURCHASE"]'), true)
    await tabTo('#coefficient')
    await page.keyboard.type('2,2')
    await page.keyboard.press('Enter')
    await page.waitForSelector('#count-selected')
    assert.match(await focusedText(), /^Шаг 3 из 4/)
    await tabTo('button:text-is("К подтверждению")')
    await page.keyboard.press('Enter')
    await page.waitForSelector('button.danger')
    assert.match(await focusedText(), /^Шаг 4 из 4/)
    await tabTo('button.danger')
    assert.match(await focusedText(), /^Применить к позициям: [\d\u00a0]+$/)
  })

  test('confirmed twice, the change is applied once as the formula says; Undo restores every price', async () => {
    const before = await entries()
    const changesBefore = await changes()
    await selection({ manufacturer }, { from: '3000', to: '9000' })
    await formula({ base: 'PURCHASE', change: 'RETAIL', coefficient: '2,5', difference: '-10' })
    await page.click('button:text-is("Пробный расчёт")')
    await page.waitForSelector('#count-changed')
    const changed = Number(await text('#count-changed'))
    assert.ok(changed > 0)
    await page.click('button:text-is("К подтверждению")')
    const apply = page.locator('button.danger')
    assert.equal(await apply.textContent(), `Применить к позициям: ${grouped(changed)}`)
    await apply.dblclick()
    await page.waitForSelector('#applied')
    const [, count, batch] = /Изменено позиций: ([\d\u00a0]+)\. Номер изменения: (\d+)\./.exec(await text('#applied'))!
    assert.equal(count, grouped(changed))
    assert.equal(await changes(), changesBefore + 1, 'a double click applies once')

    // The database holds what the formula says: round_half_up((purchase × 2.5 − 10) / 10) × 10, exactly.
    const { rows } = await sql<{ id: number; expected: string }>`
      SELECT id, (round((purchase * 2.5 - 10) / 10) * 10)::numeric(12, 2)::text AS expected
      FROM glasses_price
      WHERE position(lower(${manufacturer}) IN lower(manufacturer)) > 0 AND purchase BETWEEN 3000 AND 9000`.execute(
      ctx.db.primary,
    )
    const after = new Map((await entries()).map((entry) => [entry.id, entry]))
    assert.ok(rows.length >= changed)
    for (const row of rows) assert.equal(after.get(Number(row.id))!.price, row.expected, `entry ${row.id}`)
    const untouched = before.filter((entry) => !rows.some((row) => Number(row.id) === entry.id))
    for (const entry of untouched) assert.deepEqual(after.get(entry.id), entry)

    await page.click(`button:text-is("Отменить изменение ${batch}")`)
    await page.waitForSelector('.undone')
    assert.match(
      await text('.undone'),
      new RegExp(`^Восстановлено позиций: ${grouped(changed)} \\(изменение \\d+ отменило изменение ${batch}\\)`),
    )
    assert.deepEqual(await entries(), before)
  })

  test('Undo says which entries it left alone, and why', async () => {
    await selection({ manufacturer }, { from: '10000' })
    await formula({ base: 'RETAIL', change: 'RETAIL', coefficient: '1,05', difference: '' })
    await page.click('button:text-is("Пробный расчёт")')
    await page.waitForSelector('#count-changed')
    const changed = Number(await text('#count-changed'))
    assert.ok(changed > 1)
    const edited = Number((await page.locator('table.sample tbody tr td').first().textContent())!.trim())
    await page.click('button:text-is("К подтверждению")')
    await page.click('button.danger')
    await page.waitForSelector('#applied')
    // Meanwhile someone edits one of the changed entries.
    const entry = (await (await fetch(`${base}${pricesPath}/${edited}`)).json()) as Record<string, unknown>
    const put = await fetch(`${base}${pricesPath}/${edited}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...entry, price: 123.45 }),
    })
    assert.equal(put.status, 200)
    await page.locator('button:text-matches("^Отменить изменение")').click()
    await page.waitForSelector('.undone')
    assert.match(await text('.undone'), new RegExp(`Восстановлено позиций: ${grouped(changed - 1)} `))
    assert.match(await text('.undone'), /Оставлено как есть позиций: 1\./)
    assert.equal(await text('.undone .conflicts li'), `Позиция ${edited}: с тех пор изменена`)
    const [kept] = (await entries()).filter((row) => row.id === edited)
    assert.equal(kept!.price, '123.45')
  })

  test('a change of thousands of entries runs as a background job, and its outcome is shown the same way', async () => {
    let slow: { remove: () => Promise<void> } | undefined
    await sql`
      INSERT INTO glasses_price (manufacturer, brand, model, price, purchase, updated_by)
      SELECT 'Bulkmaker', 'Series', 'M' || lpad(n::text, 5, '0'), 1000 + n, 500 + n, 'test'
      FROM generate_series(1, 2500) AS n`.execute(ctx.db.primary)
    try {
      await selection({ manufacturer: 'bulkmaker' })
      await formula({ base: 'PURCHASE', change: 'RETAIL', coefficient: '3', difference: '' })
      await page.click('button:text-is("Пробный расчёт")')
      await page.waitForSelector('#count-changed')
      assert.equal(await text('#count-changed'), '2500')
      await page.click('button:text-is("К подтверждению")')
      // Its writing statement takes 2 s, so the job's progress can be seen.
      slow = await slowPriceUpdates(ctx.db, 2)
      await page.click('button.danger')
      await page.waitForSelector('#job-progress >> text=/Записываются цены: 0 из 2[s\u00a0\u202f]500/', {
        timeout: 60_000,
      })
      assert.equal(await page.getAttribute('#job-progress progress', 'max'), '2500')
      await page.waitForSelector('#applied', { timeout: 120_000 })
      await slow.remove()
      const [, count, batch] = /Изменено позиций: ([\d\u00a0]+)\. Номер изменения: (\d+)\./.exec(
        await text('#applied'),
      )!
      assert.equal(count, '2\u00a0500', 'the count grouped as Russian writes it')
      // The change was written by a job (its parameters name it), and as the formula says.
      const { rows } = await sql<{ job: string | null }>`
        SELECT parameters->>'job' AS job FROM glass_price_change WHERE id = ${Number(batch)}`.execute(ctx.db.primary)
      assert.match(String(rows[0]?.job), /^\d+$/)
      const { rows: wrong } = await sql<{ n: string | number }>`
        SELECT count(*) AS n FROM glasses_price
        WHERE manufacturer = 'Bulkmaker' AND price <> round(purchase * 3 / 10) * 10`.execute(ctx.db.primary)
      assert.equal(Number(wrong[0]!.n), 0)
      // Its Undo runs as a job too, and restores every entry.
      await page.click(`button:text-is("Отменить изменение ${batch}")`)
      await page.waitForSelector('.undone', { timeout: 120_000 })
      assert.match(await text('.undone'), /^Восстановлено позиций: 2\u00a0500 /)
      const { rows: reverted } = await sql<{ job: string | null }>`
        SELECT parameters->>'job' AS job FROM glass_price_change WHERE reverts = ${Number(batch)}`.execute(
        ctx.db.primary,
      )
      assert.match(String(reverted[0]?.job), /^\d+$/)
      const { rows: restored } = await sql<{ n: string | number }>`
        SELECT count(*) AS n FROM glasses_price WHERE manufacturer = 'Bulkmaker' AND price = 1000 + purchase - 500`.execute(
        ctx.db.primary,
      )
      assert.equal(Number(restored[0]!.n), 2500)
    } finally {
      await slow?.remove()
      await sql`DELETE FROM glasses_price WHERE manufacturer = 'Bulkmaker'`.execute(ctx.db.primary)
    }
  })

  test('an upload with a bad line lists the problem by line and column and writes nothing; a good file applies', async () => {
    const before = await entries()
    const known = before[0]!
    const bad = join(files, 'bad.csv')
    writeFileSync(
      bad,
      'manufacturer,brand,model,price,purchase\r\nSafilo,Carrera,CARRERA 77001,12990,5100\r\nSafilo,Carrera,CARRERA 77002,-5,5100\r\n',
    )
    await page.goto(`${base}/#/prices/transfer`)
    await page.reload()
    await page.setInputFiles('#upload-file', bad)
    await page.check('input[name="mode"][value="upsert"]')
    await page.click('button:text-is("Проверить файл")')
    await page.waitForSelector('table.problems tbody tr')
    const problem = await page.locator('table.problems tbody tr').first().locator('td').allTextContents()
    assert.deepEqual(problem.slice(0, 2), ['3', 'price'])
    assert.match(await text('.refused[role="alert"] p'), /Ошибок в файле: 1\. Ничего не записано/)
    assert.equal(await page.locator('button:text-is("Загрузить")').count(), 0)
    assert.deepEqual(await entries(), before)
    assert.deepEqual(await seriousViolations(page), [])

    const good = join(files, 'good.csv')
    writeFileSync(
      good,
      'manufacturer;brand;model;price;purchase\r\n' +
        `${known.manufacturer};${known.brand};${known.model};77 777,00;${known.purchase.replace('.', ',')}\r\n` +
        'Safilo;Carrera;CARRERA 77001;12 990,00;5 100,00\r\n',
    )
    await page.setInputFiles('#upload-file', good)
    await page.click('button:text-is("Проверить файл")')
    await page.waitForSelector('#upload-checked')
    assert.match(await text('#upload-checked'), /строк 2 \(CSV «;»\); добавится 1, обновится 1, без изменений 0/)
    assert.deepEqual(await entries(), before, 'the check writes nothing')
    await page.click('button:text-is("Загрузить")')
    await page.waitForSelector('#upload-applied')
    assert.match(await text('#upload-applied'), /записано 2 \(добавлено 1, обновлено 1\), удалено 0/)
    const after = await entries()
    assert.equal(after.find((entry) => entry.id === known.id)!.price, '77777.00')
    assert.ok(after.some((entry) => entry.model === 'CARRERA 77001' && entry.price === '12990.00'))
    assert.equal(after.length, before.length + 1)
  })

  test('a download is the file the export API gives, in each format', async () => {
    await page.goto(`${base}/#/prices/transfer`)
    await page.reload()
    await page.fill('#export-manufacturer', manufacturer.toLowerCase())
    await page.fill('#export-priceFrom', '5000')
    // The desk in Russian asks for Russian headers.
    const query = `manufacturer=${encodeURIComponent(manufacturer.toLowerCase())}&priceFrom=5000&headers=ru`
    for (const [format, extra] of [
      ['csv', ''],
      ['excel', '&excel=true'],
      ['xlsx', '&format=xlsx'],
    ] as const) {
      await page.selectOption('#export-format', format)
      const [download] = await Promise.all([page.waitForEvent('download'), page.click('button:text-is("Скачать")')])
      const saved = readFileSync((await download.path())!)
      const response = await fetch(`${base}${pricesPath}/export?${query}${extra}`)
      const expected = Buffer.from(await response.arrayBuffer())
      const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition')!)![1]!
      assert.equal(download.suggestedFilename(), name)
      if (format === 'xlsx') {
        // A workbook's zip carries its time of writing; its sheet is what must be the same.
        const sheet = (bytes: Buffer) => Buffer.from(unzipSync(bytes)['xl/worksheets/sheet1.xml']!).toString()
        assert.equal(sheet(saved), sheet(expected))
      } else {
        assert.equal(saved.toString(), expected.toString())
        assert.ok(saved.toString().split('\n').length > 2, 'the download holds entries')
        assert.match(
          saved.toString(),
          /^\uFEFF?Производитель[,;]Бренд[,;]Модель[,;]Цена[,;]Закупка[,;]Версия[,;]Изменено\r?\n/,
        )
      }
      await page.waitForSelector(`#downloaded >> text=${name}`)
    }
  })

  test('replace asks for a loud confirmation naming the number of entries it deletes, then replaces', async () => {
    const before = await entries()
    const own = before.filter((entry) => entry.manufacturer === manufacturer)
    // A filtered export (one manufacturer): the service warns it, and the page names what would be deleted.
    const file = join(files, 'one-manufacturer.csv')
    const response = await fetch(`${base}${pricesPath}/export?manufacturer=${encodeURIComponent(manufacturer)}`)
    writeFileSync(file, Buffer.from(await response.arrayBuffer()))
    await page.goto(`${base}/#/prices/transfer`)
    await page.reload()
    await page.setInputFiles('#upload-file', file)
    await page.check('input[name="mode"][value="replace"]')
    await page.click('button:text-is("Проверить файл")')
    const warning = await page.waitForSelector('#replace-warning')
    assert.match(
      (await warning.textContent())!,
      new RegExp(`замена удалит позиций прайс-листа: ${before.length} — и запишет строки файла: ${own.length}`),
    )
    assert.match((await warning.textContent())!, new RegExp(`confirmDeletes=${before.length}`))
    const apply = page.locator(`button:text-is("Заменить прайс-лист (удалить ${before.length})")`)
    assert.equal(await apply.isDisabled(), true, 'not before the manager confirms')
    assert.deepEqual(await seriousViolations(page), [])
    await page.getByLabel(new RegExp(`будут удалены позиции \\(${before.length}\\)`)).check()
    await apply.click()
    await page.waitForSelector('#upload-applied')
    assert.match(await text('#upload-applied'), new RegExp(`удалено ${before.length}\\.`))
    const after = await entries()
    assert.equal(after.length, own.length)
    assert.ok(after.every((entry) => entry.manufacturer === manufacturer))

    // And Undo brings the whole list back.
    await page.locator('button:text-matches("Отменить изменение")').click()
    await page.waitForSelector('.undone')
    assert.deepEqual(
      (await entries()).map((entry) => [entry.manufacturer, entry.brand, entry.model, entry.price, entry.purchase]),
      before.map((entry) => [entry.manufacturer, entry.brand, entry.model, entry.price, entry.purchase]),
    )
  })

  describe('signed in without prices:write', () => {
    const SECRET = 'a-shared-secret-of-the-read-only-test-32+'
    let reader: FastifyInstance
    let readerBase: string
    let provider: Server
    let token: string
    let readOnly: Page

    before(async () => {
      // The page signs in at an OpenID Connect provider: its discovery document is all it reads on the way here,
      // with a reader's token already in the tab (as a sign-in leaves it).
      const [appPort, providerPort] = [await freePort(), await freePort()]
      readerBase = `http://127.0.0.1:${appPort}`
      const issuer = `http://127.0.0.1:${providerPort}`
      provider = createServer((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' })
        response.end(
          JSON.stringify({
            issuer,
            authorization_endpoint: `${issuer}/auth`,
            token_endpoint: `${issuer}/token`,
            jwks_uri: `${issuer}/jwks`,
            response_types_supported: ['code'],
            subject_types_supported: ['public'],
            id_token_signing_alg_values_supported: ['RS256'],
          }),
        )
      })
      await new Promise<void>((resolve) => provider.listen(providerPort, '127.0.0.1', resolve))
      reader = await buildTestApp(ctx.db, {
        AUTH_MODE: 'jwt',
        AUTH_JWT_SECRET: SECRET,
        AUTH_ISSUER: issuer,
        WEB_OIDC_CLIENT_ID: 'optics-catalog-web',
      })
      await reader.listen({ port: appPort, host: '127.0.0.1' })
      token = await new SignJWT({ preferred_username: 'reader', roles: ['prices:read'] })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('reader')
        .setIssuer(issuer)
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(SECRET))
      readOnly = await browser.newPage({ viewport: { width: 1280, height: 900 }, acceptDownloads: true })
      consoleErrors.watch(readOnly)
      const tokens = JSON.stringify({ accessToken: token, expiresAt: Date.now() + 3_600_000, idClaims: {} })
      await readOnly.addInitScript({
        content: `sessionStorage.setItem('optics-catalog.tokens', ${JSON.stringify(tokens)})`,
      })
    })
    after(async () => {
      await readOnly?.close()
      await reader?.close()
      provider?.close()
    })

    test('the wizard says it is read-only and offers the dry run, not the change', async () => {
      await readOnly.goto(`${readerBase}/#/prices/bulk`)
      await readOnly.waitForSelector('.bulk-desk .note')
      assert.match((await readOnly.textContent('.bulk-desk .note'))!, /нет права менять цены/)
      await readOnly.fill('#filter-manufacturer', manufacturer)
      await readOnly.click('button:text-is("Далее")')
      await readOnly.waitForSelector('#coefficient')
      await readOnly.fill('#coefficient', '1,1')
      await readOnly.click('button:text-is("Пробный расчёт")')
      await readOnly.waitForSelector('#count-changed')
      assert.ok(Number(await readOnly.textContent('#count-changed')) > 0)
      assert.equal(await readOnly.locator('button:text-is("К подтверждению")').count(), 0)
    })

    test('the upload is checked only, and the download carries the token', async () => {
      await readOnly.goto(`${readerBase}/#/prices/transfer`)
      await readOnly.waitForSelector('.bulk-desk .note')
      const file = join(files, 'reader.csv')
      writeFileSync(file, 'manufacturer,brand,model,price,purchase\r\nSafilo,Carrera,CARRERA 88001,12990,5100\r\n')
      await readOnly.setInputFiles('#upload-file', file)
      await readOnly.click('button:text-is("Проверить файл")')
      await readOnly.waitForSelector('#upload-checked')
      assert.match((await readOnly.textContent('#upload-checked'))!, /добавится 1/)
      assert.equal(await readOnly.locator('button:text-is("Загрузить")').count(), 0)

      await readOnly.fill('#export-manufacturer', manufacturer)
      const [download] = await Promise.all([
        readOnly.waitForEvent('download'),
        readOnly.click('button:text-is("Скачать")'),
      ])
      const url = `${readerBase}${pricesPath}/export?manufacturer=${encodeURIComponent(manufacturer)}&headers=ru`
      assert.equal((await fetch(url)).status, 401, 'the export needs the token')
      const expected = await (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).text()
      assert.equal(readFileSync((await download.path())!, 'utf8'), expected)
    })
  })

  test('the screens logged no console error', () => {
    assert.deepEqual(consoleErrors.errors, [])
  })
})
