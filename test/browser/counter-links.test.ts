import assert from 'node:assert/strict'
import { test } from 'node:test'
import { seedCatalogue } from '../../src/demo/demo-catalogue.js'
import { browserSuite, ConsoleErrors, serveDesk, until } from './browser.js'

/*
 * The counter writes its state into the location as it changes; it must never write over a link to another screen
 * that was followed meanwhile. A language switch re-renders the counter, and a link to the desk opened right after
 * (a bookmark, the address typed) once landed back on the counter.
 */

browserSuite('links followed from the counter', (ctx, browser) => {
  const consoleErrors = new ConsoleErrors()
  const desk = serveDesk(ctx, browser, consoleErrors, () => seedCatalogue(ctx.db, { scale: 30 }))

  test('a link to the desk opened right after a language switch on the counter opens the desk', async () => {
    const { page, base } = desk
    await page.goto(`${base}/#/?kind=glasses`)
    await until('the results', async () => (await page.locator('tbody tr').count()) > 0)
    await page.selectOption('.language select', 'en')
    await page.goto(`${base}/#/prices`)
    await until('the desk', async () => (await page.locator('h2:text-is("Frame price list")').count()) === 1)
    assert.equal(new URL(page.url()).hash, '#/prices')
    // And back: the counter's link opens the counter with the kind chosen last.
    await page.click('nav a[href="#/"]')
    await until('the counter', async () => (await page.locator('#tab-glasses[aria-selected="true"]').count()) === 1)
    assert.deepEqual(consoleErrors.errors, [])
  })
})
