import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import { markupPercent } from '../../src/domain/decimal.js'
import { clearGlassPrices, pricesPath, seedEntries } from '../fixtures/glass-prices.js'
import { browserSuite, ConsoleErrors, seriousViolations, serveDesk, until } from './browser.js'

/*
 * The price manager's desk in a real browser on each database: every column of the grid sorts as the API sorts
 * it, the markup column shows (price − purchase) / purchase exactly to one decimal (blank where the purchase is 0),
 * an entry's history opens in view at 1366 × 768 and at 768 px wide wherever its row is (Escape closes it and the
 * focus returns to the row's button), and the change log is filtered by who, the days and the kinds of change, and
 * opens a change to the entries it touched, old → new.
 */

const BRANDS = ['Oakley', 'Carrera', 'Ray-Ban', 'Boss', 'Tom Ford']

interface Row {
  id: number
  manufacturer: string
  brand: string
  model: string
  price: number
  purchase: number
  lastUpdatedOn: string
  user: string
}

/** 40 entries: brands and models out of order, prices with kopecks, and every fifth purchase 0. */
const entries = Array.from({ length: 40 }, (_, index) => ({
  manufacturer: index % 2 === 0 ? 'Luxottica' : 'Safilo',
  brand: BRANDS[(index * 3) % BRANDS.length]!,
  model: `M ${(index * 17) % 40}`,
  price: `${1000 + ((index * 7919) % 9000)}.${String((index * 37) % 100).padStart(2, '0')}`,
  purchase: index % 5 === 0 ? '0.00' : `${500 + ((index * 104729) % 4000)}.50`,
}))

const hasFocus = (element: { ownerDocument: { activeElement: unknown } }) =>
  element === element.ownerDocument.activeElement

browserSuite(
  "the price manager's desk: columns, the history beside the grid, the change log's filters",
  (ctx, browser) => {
    const consoleErrors = new ConsoleErrors()
    const desk = serveDesk(ctx, browser, consoleErrors, async () => {
      await clearGlassPrices(ctx.db)
      await seedEntries(ctx.db, entries)
    })
    const api = () => `${desk.base}${pricesPath}`
    const apiList = async (query: string): Promise<{ totalElements: number; content: Row[] }> => {
      const response = await fetch(`${api()}/list?${query}`)
      assert.equal(response.status, 200)
      return (await response.json()) as { totalElements: number; content: Row[] }
    }
    const gridIds = (page: Page) =>
      page
        .locator('table.desk-grid tbody tr[id^="row-"]')
        .evaluateAll((rows) => rows.map((row) => Number(row.id.slice('row-'.length))))
    const waitForGrid = (page: Page, expected: Row[]) =>
      until(`the ids ${expected.map((row) => row.id).join(',')}`, async () => {
        return JSON.stringify(await gridIds(page)) === JSON.stringify(expected.map((row) => row.id))
      })

    test('every column sorts at its header as the API sorts it, both ways', async () => {
      const { base, page } = desk
      await page.goto(`${base}/#/prices`)
      await waitForGrid(page, (await apiList('page=0&size=20')).content)
      for (const column of [
        'BRAND',
        'MODEL',
        'MARKUP',
        'UPDATED_ON',
        'USER',
        'PARAMETERS',
        'PRICE',
        'PURCHASE',
        'ID',
      ]) {
        const header = page.locator(`th[data-column="${column}"]`)
        await header.locator('button').click()
        await page.waitForSelector(`th[data-column="${column}"][aria-sort="ascending"]`)
        await waitForGrid(page, (await apiList(`page=0&size=20&sortColumn=${column}&sortDirection=ASC`)).content)
        await header.locator('button').click()
        await page.waitForSelector(`th[data-column="${column}"][aria-sort="descending"]`)
        await waitForGrid(page, (await apiList(`page=0&size=20&sortColumn=${column}&sortDirection=DESC`)).content)
        await header.locator('button').click()
        await page.waitForSelector(`th[data-column="${column}"][aria-sort="none"]`)
      }
      // Brand and model sort as their text: the API's order is the names' order.
      const byBrand = (await apiList('page=0&size=40&sortColumn=BRAND')).content.map((row) => row.brand)
      assert.deepEqual(byBrand, [...byBrand].sort())
      const byMarkup = (await apiList('page=0&size=40&sortColumn=MARKUP&sortDirection=DESC')).content
      assert.equal(byMarkup[0]!.purchase, 0, 'entries without a purchase price come first, descending')
    })

    test('the markup column is (price − purchase) / purchase to one decimal, blank where the purchase is 0', async () => {
      const { page } = desk
      await page.click('th[data-column="MARKUP"] button')
      const rows = (await apiList('page=0&size=20&sortColumn=MARKUP&sortDirection=ASC')).content
      await waitForGrid(page, rows)
      const shown = await page
        .locator('table.desk-grid tbody tr[id^="row-"] td.markup')
        .evaluateAll((cells) => cells.map((cell) => cell.textContent))
      const expected = rows.map((row) => {
        const markup = markupPercent(row.price, row.purchase)
        return markup === undefined
          ? ''
          : `${new Intl.NumberFormat('ru', { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(markup as Intl.StringNumericLiteral)} %`
      })
      assert.deepEqual(shown, expected)
      assert.ok(expected.some((text) => text !== ''))
      const withoutPurchase = await apiList('page=0&size=40&sortColumn=MARKUP&sortDirection=DESC')
      await page.click('th[data-column="MARKUP"] button')
      await waitForGrid(page, withoutPurchase.content.slice(0, 20))
      assert.equal(await page.locator(`#row-${withoutPurchase.content[0]!.id} td.markup`).textContent(), '')
      await page.click('th[data-column="MARKUP"] button')
    })

    for (const viewport of [
      { width: 1366, height: 768 },
      { width: 768, height: 1024 },
    ]) {
      test(`at ${viewport.width} × ${viewport.height} an entry's history opens in view wherever its row is; Escape closes it, the focus back on the row's button`, async () => {
        const { page } = desk
        await page.setViewportSize(viewport)
        await page.getByLabel('Строк на странице').selectOption('50')
        const rows = (await apiList('page=0&size=50')).content
        await waitForGrid(page, rows)
        // The last row of a long page: far below the first screen.
        const last = rows[rows.length - 1]!
        const button = page.locator(`#row-${last.id} [data-action="history"]`)
        await button.click()
        const panel = page.locator('section.history')
        await page.waitForSelector(`#history-title:has-text("№${last.id}")`)
        assert.ok(await page.locator('#history-title').evaluate(hasFocus), 'the focus moves to the history')
        // Within the window, and nothing of the page covers it: its title is what the window shows at its place.
        const placed = await page.evaluate<{ inView: boolean; onTop: boolean }>(`(() => {
        const box = document.querySelector('section.history').getBoundingClientRect()
        const title = document.getElementById('history-title')
        const at = title.getBoundingClientRect()
        const shown = Math.min(box.bottom, window.innerHeight) - Math.max(box.top, 0)
        return {
          inView: box.top >= 0 && box.left >= 0 && box.right <= window.innerWidth + 0.5 && at.bottom <= window.innerHeight &&
            shown >= Math.min(box.height, window.innerHeight * 0.6),
          onTop: title.contains(document.elementFromPoint(at.left + 2, at.top + at.height / 2)),
        }
      })()`)
        assert.ok(placed.inView, 'the history is within the window')
        assert.ok(placed.onTop, 'the history is above the page')
        await page.keyboard.press('Escape')
        await panel.waitFor({ state: 'detached' })
        await until('the focus back on the row’s History button', () => button.evaluate(hasFocus))
        await page.setViewportSize({ width: 1280, height: 900 })
        await page.getByLabel('Строк на странице').selectOption('20')
      })
    }

    test('the change log is filtered by who, the days and the kinds; a change opens to its entries, old → new', async () => {
      const { page } = desk
      const rows = (await apiList('page=0&size=3&sortColumn=ID')).content
      // A single edit, and a bulk change of those three entries (by the anonymous user).
      const edit = await fetch(`${api()}/${rows[0]!.id}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...rows[0], price: 7777 }),
      })
      assert.equal(edit.status, 200)
      const bulk = await fetch(`${api()}/list?priceFrom=0`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', difference: 10, round: 'WHOLE' }),
      })
      assert.equal(bulk.status, 200)
      const batch = Number(bulk.headers.get('x-price-change-batch'))

      await page.click('nav a[href="#/prices/changes"]')
      const ids = () =>
        page.locator('table.change-log tbody tr[id^="change-"]').evaluateAll((found) => found.map((row) => row.id))
      const shows = (expected: string[]) =>
        until(`the changes ${expected.join(',')}`, async () => JSON.stringify(await ids()) === JSON.stringify(expected))
      const apiChanges = async (query: string) =>
        (
          (await (await fetch(`${api()}/changes?size=20&${query}`)).json()) as { content: { id: number }[] }
        ).content.map((change) => `change-${change.id}`)
      await shows(await apiChanges(''))
      assert.equal((await ids()).length, 2)

      await page.getByLabel('Массовое изменение цен').check()
      await shows([`change-${batch}`])
      await page.getByLabel('Правка').check()
      await shows(await apiChanges('action=BULK_CHANGE&action=UPDATE'))
      await page.getByLabel('Кто').fill('nobody')
      await shows([])
      await page.getByLabel('Кто').fill('ANON')
      await shows(await apiChanges('action=BULK_CHANGE&action=UPDATE&user=anon'))
      // Days: today's changes from today on, none up to yesterday (the business day, as the API counts it).
      const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Moscow' }).format(new Date())
      const yesterday = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Moscow' }).format(
        new Date(Date.now() - 86_400_000),
      )
      await page.getByLabel('По', { exact: true }).fill(yesterday)
      await shows([])
      await page.getByLabel('По', { exact: true }).fill('')
      await page.getByLabel('С', { exact: true }).fill(today)
      await shows(await apiChanges(`from=${today}&user=anon&action=BULK_CHANGE&action=UPDATE`))
      assert.deepEqual(await seriousViolations(page), [])
      await page.click('.change-filters button.clear')
      await shows(await apiChanges(''))

      // The bulk change opened to its entries, as the API lists them.
      const opener = page.locator(`#change-${batch} [data-action="entries"]`)
      await opener.click()
      const panel = page.locator('section.change-entries')
      await page.waitForSelector(`#change-entries-title:has-text("№${batch}")`)
      const answer = (await (await fetch(`${api()}/changes/${batch}/entries?size=20`)).json()) as {
        totalElements: number
        content: { entryId: number; changes: { oldValue: number; newValue: number }[] }[]
      }
      assert.equal(answer.totalElements, 40)
      await until('the entries of the change', async () => (await panel.locator('tbody tr').count()) === 20)
      const first = answer.content[0]!
      const text = await panel.locator(`#change-entry-${first.entryId}`).innerText()
      const money = (value: number) =>
        new Intl.NumberFormat('ru', { minimumFractionDigits: 2, maximumFractionDigits: 2 }).format(value)
      assert.ok(
        text.includes(`Цена: ${money(first.changes[0]!.oldValue)} → ${money(first.changes[0]!.newValue)}`),
        text,
      )
      assert.equal(
        await panel.locator(`#change-entry-${first.entryId} a`).getAttribute('href'),
        `#/prices?entry=${first.entryId}`,
      )
      assert.deepEqual(await seriousViolations(page), [])
      await page.keyboard.press('Escape')
      await panel.waitFor({ state: 'detached' })
      await until('the focus back on the change’s button', () => opener.evaluate(hasFocus))
    })

    test('the desk logged no console error', () => {
      assert.deepEqual(consoleErrors.errors, [])
    })
  },
)
