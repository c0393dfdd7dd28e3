import assert from 'node:assert/strict'
import { test } from 'node:test'
import { clearGlassPrices, pricesPath, seedEntries, storedEntries } from '../fixtures/glass-prices.js'
import { browserSuite, ConsoleErrors, localTimeAhead, seriousViolations, serveDesk, until } from './browser.js'

/*
 * The price manager's terms on the desk, in a real browser on each database: a 10 % markup with the ending …90
 * upwards in the dry run (its rows and totals as the API computes them), and a change scheduled a few seconds ahead,
 * seen pending in the change log and then applied (the prices changed, the change log naming the change it wrote);
 * a pending one cancelled with its button.
 */

const BRAND = 'Schedule'
const money = (value: string) =>
  new Intl.NumberFormat('ru', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(
    value as Intl.StringNumericLiteral,
  )

browserSuite('price desk: the price-setting terms and scheduled changes in a real browser', (ctx, browser) => {
  const consoleErrors = new ConsoleErrors()
  const desk = serveDesk(ctx, browser, consoleErrors, async () => {
    await clearGlassPrices(ctx.db)
    await seedEntries(ctx.db, [
      { manufacturer: 'Desk', brand: BRAND, model: 'S 1', price: 1150, purchase: 500 },
      { manufacturer: 'Desk', brand: BRAND, model: 'S 2', price: 2000, purchase: 1000 },
    ])
  })
  const text = async (selector: string) => ((await desk.page.textContent(selector)) ?? '').trim()
  const prices = async () => (await storedEntries(ctx.db)).map((entry) => entry.price)

  /** The wizard up to its dry run: the brand selected, +10 %, ending …90 upwards, optionally a time to take effect. */
  const dryRun = async (effectiveInSeconds?: number) => {
    const { base, page } = desk
    await page.goto(`${base}/#/prices/bulk`)
    await page.reload()
    await page.fill('#filter-brand', BRAND)
    await page.click('button:text-is("Далее")')
    await page.waitForSelector('#percent')
    await page.fill('#percent', '10')
    await page.getByLabel('Округление').selectOption('ENDS_90')
    await page.getByLabel('Направление').selectOption('UP')
    if (effectiveInSeconds !== undefined) {
      await page.fill('#effectiveAt', await localTimeAhead(page, effectiveInSeconds))
    }
    await page.click('button:text-is("Пробный расчёт")')
    await page.waitForSelector('#total-retail')
  }

  test('a 10 % markup with the ending …90 upwards: the words, the rows and the totals of the dry run', async () => {
    const { base, page } = desk
    await dryRun()
    assert.equal(
      await text('.formula'),
      'Новая розничная цена = розничная цена + 10 %, с округлением до цены, оканчивающейся на …90 (в большую сторону).',
    )
    const api = await fetch(`${base}${pricesPath}/list?brand=${BRAND}&dryRun=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        priceTypeBase: 'RETAIL',
        priceTypeChange: 'RETAIL',
        percent: '10',
        round: 'ENDS_90',
        direction: 'UP',
      }),
    })
    const preview = (await api.json()) as { totals: Record<string, { old: string; new: string }> }
    // 1150 × 1.1 = 1265 → 1290, 2000 × 1.1 = 2200 → 2290.
    assert.deepEqual(preview.totals, {
      retail: { old: '3150.00', new: '3580.00' },
      purchase: { old: '1500.00', new: '1500.00' },
      averageMarkup: { old: '110.00', new: '138.67' },
    })
    assert.equal(await text('#total-retail'), `${money('3150.00')} → ${money('3580.00')}`)
    assert.equal(await text('#total-purchase'), `${money('1500.00')} → ${money('1500.00')}`)
    assert.equal(await text('#average-markup'), `${money('110.00')} % → ${money('138.67')} %`)
    const newValues = await page.locator('table.sample td.new').allTextContents()
    assert.deepEqual(
      newValues.map((value) => value.trim()),
      ['1 290', '2 290'].map((value) => value.replace(' ', '\u00a0')),
    )
    assert.deepEqual(await seriousViolations(page), [])
    assert.deepEqual(await prices(), ['1150.00', '2000.00'])
  })

  test('a change scheduled a few seconds ahead is pending in the change log, then applied', async () => {
    const { page } = desk
    await dryRun(6)
    assert.match(await text('.formula'), /Вступает в силу .+\.$/)
    await page.click('button:text-is("К подтверждению")')
    await page.click('button:text-matches("^Запланировать изменение на ")')
    await page.waitForSelector('#scheduled')
    assert.deepEqual(await prices(), ['1150.00', '2000.00'])

    await page.click('a:text-is("Журнал изменений")')
    const row = page.locator('tr[id^="scheduled-"]').first()
    await row.waitFor()
    assert.equal(await row.getAttribute('data-state'), 'pending')
    assert.match((await row.textContent()) ?? '', /Ожидает/)
    assert.equal(await row.locator('button[data-action="cancel-scheduled"]').count(), 1)
    assert.deepEqual(await seriousViolations(page), [])

    await until('the scheduled change applied', async () => (await row.getAttribute('data-state')) === 'applied')
    assert.deepEqual(await prices(), ['1290.00', '2290.00'])
    const applied = ((await row.textContent()) ?? '').match(/Применено: изменение (\d+)/)
    assert.ok(applied, (await row.textContent()) ?? '')
    await page.locator(`#change-${applied[1]}`).waitFor()
    assert.match((await page.textContent(`#change-${applied[1]}`)) ?? '', /по расписанию \(№ \d+\) на /)
    assert.deepEqual(consoleErrors.errors, [])
  })

  test('a pending change is cancelled with its button and never applies', async () => {
    const { base, page } = desk
    const before = await prices()
    const scheduled = await fetch(`${base}${pricesPath}/list?brand=${BRAND}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        priceTypeBase: 'RETAIL',
        priceTypeChange: 'RETAIL',
        percent: '-50',
        round: 'WHOLE',
        effectiveAt: new Date(Date.now() + 3_600_000).toISOString(),
      }),
    })
    assert.equal(scheduled.status, 202)
    const { id } = (await scheduled.json()) as { id: number }
    await page.goto(`${base}/#/prices/changes`)
    await page.reload()
    const row = page.locator(`#scheduled-${id}`)
    await row.waitFor()
    await row.locator('button[data-action="cancel-scheduled"]').click()
    await until('the change cancelled', async () => (await row.getAttribute('data-state')) === 'cancelled')
    assert.match((await row.textContent()) ?? '', /Отменено/)
    assert.equal(await row.locator('button').count(), 0)
    assert.deepEqual(await prices(), before)
    assert.deepEqual(consoleErrors.errors, [])
  })
})
