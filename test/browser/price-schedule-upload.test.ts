import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clearGlassPrices, pricesPath, seedEntries, storedEntries } from '../fixtures/glass-prices.js'
import { browserSuite, ConsoleErrors, localTimeAhead, seriousViolations, serveDesk, until } from './browser.js'

/*
 * An upload scheduled from the desk, in a real browser on each database: a checked CSV file given a time a few
 * seconds ahead is scheduled (not applied), seen pending in the change log's scheduled table in words (its file and
 * mode), then applied (the prices changed as the API lists them); a pending one is cancelled with its button.
 */

const BRAND = 'ScheduleUpload'

browserSuite('price desk: an upload scheduled for later in a real browser', (ctx, browser) => {
  const consoleErrors = new ConsoleErrors()
  const desk = serveDesk(ctx, browser, consoleErrors, async () => {
    await clearGlassPrices(ctx.db)
    await seedEntries(ctx.db, [
      { manufacturer: 'Desk', brand: BRAND, model: 'U 1', price: 1150, purchase: 500 },
      { manufacturer: 'Desk', brand: BRAND, model: 'U 2', price: 2000, purchase: 1000 },
    ])
  })
  const text = async (selector: string) => ((await desk.page.textContent(selector)) ?? '').trim()
  const prices = async () => (await storedEntries(ctx.db)).map((entry) => [entry.model, entry.price])
  /** The prices of the brand as the API lists them. */
  const listed = async () => {
    const response = await fetch(`${desk.base}${pricesPath}/list?brand=${BRAND}&page=0&size=10`)
    const body = (await response.json()) as { content: { model: string; price: number }[] }
    return body.content.map((entry) => [entry.model, entry.price]).sort()
  }
  const csv = (first: string, second: string) =>
    `manufacturer;brand;model;price;purchase\nDesk;${BRAND};U 1;${first};500,00\nDesk;${BRAND};U 2;${second};1000,00\n`

  /** The upload screen with the file chosen in the update mode and checked, to take effect that many seconds ahead. */
  const checkedUpload = async (content: string, effectiveInSeconds: number) => {
    const { base, page } = desk
    await page.goto(`${base}/#/prices/transfer`)
    await page.reload()
    await page.waitForSelector('#upload-file')
    await page.setInputFiles('#upload-file', {
      name: 'prices.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(content),
    })
    await page.check('input[name="mode"][value="upsert"]')
    await page.click('button:text-is("Проверить файл")')
    await page.waitForSelector('#upload-checked')
    await page.fill('#upload-effectiveAt', await localTimeAhead(page, effectiveInSeconds))
  }

  test('a file scheduled a few seconds ahead is pending in the change log in words, then applied', async () => {
    const { page } = desk
    const before = await prices()
    await checkedUpload(csv('1290,00', '2290,00'), 6)
    await page.click('button:text-matches("^Запланировать загрузку на ")')
    await page.waitForSelector('#upload-scheduled')
    assert.match(
      await text('#upload-scheduled'),
      /^Загрузка запланирована \(№ \d+\) на .+: до тех пор она ожидает в журнале изменений\. Журнал изменений$/,
    )
    assert.deepEqual(await prices(), before)
    assert.deepEqual(await seriousViolations(page), [])

    await page.click('#upload-scheduled a:text-is("Журнал изменений")')
    const row = page.locator('tr[id^="scheduled-"]').first()
    await row.waitFor()
    assert.equal(await row.getAttribute('data-state'), 'pending')
    const words = (await row.textContent()) ?? ''
    assert.match(words, /Загрузка файла «prices\.csv», режим «обновить»/)
    assert.doesNotMatch(words, /fileName=|mode=/)
    assert.match(words, /Ожидает/)
    assert.equal(await row.locator('button[data-action="cancel-scheduled"]').count(), 1)
    assert.deepEqual(await seriousViolations(page), [])

    await until('the scheduled upload applied', async () => (await row.getAttribute('data-state')) === 'applied')
    assert.deepEqual(await listed(), [
      ['U 1', 1290],
      ['U 2', 2290],
    ])
    const applied = ((await row.textContent()) ?? '').match(/Применено: изменение (\d+)/)
    assert.ok(applied, (await row.textContent()) ?? '')
    await page.locator(`#change-${applied[1]}`).waitFor()
    assert.match((await page.textContent(`#change-${applied[1]}`)) ?? '', /по расписанию \(№ \d+\) на /)
    assert.deepEqual(consoleErrors.errors, [])
  })

  test('a pending upload is cancelled with its button and never applies', async () => {
    const { base, page } = desk
    const before = await prices()
    await checkedUpload(csv('1,00', '2,00'), 3600)
    await page.click('button:text-matches("^Запланировать загрузку на ")')
    await page.waitForSelector('#upload-scheduled')
    const id = /№ (\d+)/.exec(await text('#upload-scheduled'))?.[1]
    assert.ok(id)
    await page.goto(`${base}/#/prices/changes`)
    await page.reload()
    const row = page.locator(`#scheduled-${id}`)
    await row.waitFor()
    assert.match((await row.textContent()) ?? '', /Загрузка файла «prices\.csv», режим «обновить»/)
    await row.locator('button[data-action="cancel-scheduled"]').click()
    await until('the upload cancelled', async () => (await row.getAttribute('data-state')) === 'cancelled')
    assert.match((await row.textContent()) ?? '', /Отменено/)
    assert.equal(await row.locator('button').count(), 0)
    assert.deepEqual(await prices(), before)
    assert.deepEqual(consoleErrors.errors, [])
  })
})
