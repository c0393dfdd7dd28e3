import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import type { Page } from 'playwright-core'
import { type EntrySeed, pricesPath, rayBanEntries, seedEntries } from '../fixtures/glass-prices.js'
import { buildTestApp } from '../harness.js'
import { browserSuite, ConsoleErrors, seriousViolations, until } from './browser.js'

/*
 * Exact selection on the price manager's desk, in a real browser against the real service on each database: a
 * brand typed is a substring (Ray-Ban Junior too), a brand picked from the list is exact ("= Ray-Ban"), and the
 * bulk change of the picked brand, through its dry run and its confirmation (which restates the selection in
 * words with its count), changes Ray-Ban's prices and leaves Ray-Ban Junior's as they were; the counter search
 * picks the same way.
 */

const entries: EntrySeed[] = [
  ...rayBanEntries,
  { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 8862', price: 4000, purchase: 1900 },
]

browserSuite('price desk: a brand picked from the list is exact in a real browser', (ctx, browser) => {
  let app: FastifyInstance
  let base: string
  let page: Page
  const consoleErrors = new ConsoleErrors()

  /** Retail prices by model, through the API. */
  const pricesOf = async (brand: string) => {
    const query = new URLSearchParams({ brand, exact: 'brand', size: '50' })
    const response = await fetch(`${base}${pricesPath}/list?${query}`)
    assert.equal(response.status, 200)
    const listing = (await response.json()) as { content: { model: string; price: number }[] }
    return Object.fromEntries(listing.content.map((entry) => [entry.model, entry.price]))
  }
  const text = async (selector: string) => ((await page.textContent(selector)) ?? '').replace(/\s+/g, ' ').trim()
  /**
   * Back to the selection step, once it has opened: its heading takes the focus a frame after it shows, and a field
   * typed into before that loses the focus and closes its list (as it would for a user typing that fast).
   */
  const back = async () => {
    await page.click('button:text-is("Назад")')
    await page.waitForSelector('.step h3:focus')
  }

  before(async () => {
    await seedEntries(ctx.db, entries)
    app = await buildTestApp(ctx.db)
    await app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    consoleErrors.watch(page)
  })
  after(async () => {
    await page?.close()
    await app?.close()
  })

  test('a typed brand is a substring; the brand picked from the list is exact, marked, and can go back', async () => {
    await page.goto(`${base}/#/prices/bulk`)
    await page.waitForSelector('#filter-brand')
    await page.fill('#filter-brand', 'Ray-Ban')
    await page.click('button:text-is("Далее")')
    await page.waitForSelector('text=Фильтры выбирают позиций: 5.')

    await back()
    await page.fill('#filter-brand', 'ray')
    const option = page
      .locator('#filter-brand-list [role="option"]')
      .filter({ has: page.locator('span:text-is("Ray-Ban")') })
    await option.click()
    assert.equal(await page.inputValue('#filter-brand'), 'Ray-Ban')
    assert.equal(await text('#filter-brand-exact .exact-value'), '= Ray-Ban')
    // "Search as a part" turns it back into a substring; picking it again makes it exact again.
    await page.click('#filter-brand-exact button')
    assert.equal(await page.locator('#filter-brand-exact').count(), 0)
    await page.click('button:text-is("Далее")')
    await page.waitForSelector('text=Фильтры выбирают позиций: 5.')
    await back()
    await page.fill('#filter-brand', 'Ray-B')
    await option.click()
    await page.click('button:text-is("Далее")')
    await page.waitForSelector('text=Фильтры выбирают позиций: 3.')
  })

  test('the bulk change of the picked brand: dry run, confirmation in words, Ray-Ban Junior untouched', async () => {
    const juniorBefore = await pricesOf('Ray-Ban Junior')
    assert.deepEqual(juniorBefore, { 'RJ 9052': 1500, 'RJ 1555': 2500 })
    await page.waitForSelector('#coefficient')
    await page.fill('#coefficient', '1,1')
    await page.click('button:text-is("Пробный расчёт")')
    await page.waitForSelector('#count-selected')
    assert.equal(await text('#count-selected'), '3')
    assert.equal(await text('#count-changed'), '3')
    await page.click('button:text-is("К подтверждению")')
    await page.waitForSelector('#selection-summary')
    assert.equal(await text('#selection-summary'), 'Выбрано: Бренд точно «Ray-Ban»; позиций: 3.')
    assert.deepEqual(await seriousViolations(page), [])
    await page.click('.step button.danger')
    await page.waitForSelector('#applied')

    await until('the new prices through the API', async () => (await pricesOf('Ray-Ban'))['RB 3025'] === 1100)
    assert.deepEqual(await pricesOf('Ray-Ban'), { 'RB 3025': 1100, 'RB 2140': 2200, 'RB 4171': 3300 })
    assert.deepEqual(await pricesOf('Ray-Ban Junior'), juniorBefore)
  })

  test('the counter search: a brand picked from the list is exact, a typed one a substring', async () => {
    const caption = async () => ((await page.locator('caption').textContent()) ?? '').replace(/\s+/g, ' ')
    await page.goto(`${base}/`)
    await page.click('#tab-glasses')
    await page.waitForSelector('#tab-glasses[aria-selected="true"]')
    await page.locator('input[name="byPriceList"][value="true"]').check()
    await page.fill('#glasses-brand', 'Ray-Ban')
    await until('the substring total 5', async () => /\b5\b/.test(await caption()))
    await page.fill('#glasses-brand', 'ray')
    await page
      .locator('#glasses-brand-list [role="option"]')
      .filter({ has: page.locator('span:text-is("Ray-Ban")') })
      .click()
    assert.equal(await text('#glasses-brand-exact .exact-value'), '= Ray-Ban')
    await until('the exact total 3', async () => /\b3\b/.test(await caption()))
    await page.click('#glasses-brand-exact button')
    await until('the substring total 5 again', async () => /\b5\b/.test(await caption()))
  })

  test('the screens logged no console error', () => {
    assert.deepEqual(consoleErrors.errors, [])
  })
})
