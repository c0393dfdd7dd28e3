import assert from 'node:assert/strict'
import { test } from 'node:test'
import { seedCatalogue } from '../../src/demo/demo-catalogue.js'
import { browserSuite, ConsoleErrors, seriousViolations, serveDesk, until } from './browser.js'

/*
 * The demo mode (`AUTH_MODE=demo`, as the image runs with `-e AUTH_MODE=demo`) in a real browser: the counter and
 * the desk open without a sign-in, and every screen says in the staff's language that this is a demo open to
 * anyone, so nobody takes it for the chain's real price list.
 */

browserSuite('the demo mode in the browser', (ctx, browser) => {
  const consoleErrors = new ConsoleErrors()
  const desk = serveDesk(ctx, browser, consoleErrors, () => seedCatalogue(ctx.db, { scale: 30 }), {
    AUTH_MODE: 'demo',
  })

  const banner = () => desk.page.locator('[role="note"].demo')

  test('the counter opens without a sign-in and says it is a demo open to anyone', async () => {
    const { page, base } = desk
    await page.goto(`${base}/#/?kind=glasses`)
    await until('the demo note', async () => (await banner().count()) === 1)
    assert.match((await banner().textContent()) ?? '', /^Демонстрация: .*без входа всем/)
    assert.equal(await page.locator('button:text-is("Войти")').count(), 0, 'no sign-in is offered')
    await until('the results', async () => (await page.locator('tbody tr').count()) > 0)
    assert.deepEqual(await seriousViolations(page), [])
  })

  test('the desk says it too, in the language picked, and its price list is open for editing', async () => {
    const { page } = desk
    await page.selectOption('.language select', 'en')
    await page.click('a:text-is("Frame price list")')
    // Rows with their Edit buttons: open for editing without a sign-in.
    await until('the price list open for editing', async () => {
      return (await page.getByRole('button', { name: /^Edit entry / }).count()) > 0
    })
    assert.match((await banner().textContent()) ?? '', /^Demo: sample goods and prices, open to anyone/)
    assert.deepEqual(consoleErrors.errors, [])
  })
})
