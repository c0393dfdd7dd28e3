import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { Page } from 'playwright-core'
import { kindByPath } from '../../src/catalog/kinds/kinds.js'
import type { KindForms } from '../../src/catalog/search/kind-form-routes.js'
import { seedCatalogue } from '../../src/demo/demo-catalogue.js'
import { buildTestApp } from '../harness.js'
import { browserSuite, ConsoleErrors, screenshotPath, seriousViolations, until } from './browser.js'

/*
 * The counter search in a real browser (Debian's Chromium through playwright-core) against the real service on
 * each database, holding the demo catalogue: every kind's tab, form, facets, prescription, paging, sorting and
 * the price-list switch, as an optician uses them with the keyboard; no console error, no serious accessibility
 * violation (axe-core). One browser for the file, one page per database. The screenshots in docs/ come from here.
 */

type KindForm = KindForms['kinds'][number]
type FormField = KindForm['fields'][number]

const SCALE = 400

interface SearchPage {
  totalElements: number
  content: Record<string, string | number | null>[]
}

browserSuite('counter search in a real browser', (ctx, browser) => {
  let app: FastifyInstance
  let base: string
  let page: Page
  let forms: KindForms['kinds']
  const consoleErrors = new ConsoleErrors()

  /** What the API itself answers for a search, to compare the page with. */
  const apiSearch = async (kind: string, body: Record<string, unknown>, query = ''): Promise<SearchPage> => {
    const response = await fetch(`${base}/api/v2/good/nomenclature/search/${kind}?${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    assert.equal(response.status, 200)
    return (await response.json()) as SearchPage
  }

  /** Waits until the results' caption shows `total` (the page has searched with what was typed). */
  const waitForTotal = (total: number) =>
    until(`the total ${total}`, async () =>
      new RegExp(`\\b${total}\\b`).test((await page.locator('caption').textContent()) ?? ''),
    )

  /** The first row's price as the API writes it (`1234.5`), read from the page's formatted cell. */
  const firstPrice = async () =>
    ((await page.locator('tbody tr td.price').first().textContent()) ?? '').replace(/\s/g, '').replace(',', '.')
  const plain = (value: unknown) =>
    String(value)
      .replace(/(\.\d*?)0+$/, '$1')
      .replace(/\.$/, '')
  const waitForFirstPrice = (price: unknown) =>
    until(`the first price ${price}`, async () => plain(await firstPrice()) === plain(price))

  const openTab = async (kind: string) => {
    await page.click(`#tab-${kind}`)
    await page.waitForSelector(`#tab-${kind}[aria-selected="true"]`)
  }

  const fillField = async (kind: string, name: string, value: string) => {
    await page.fill(`#${kind}-${name}`, value)
  }

  before(async () => {
    await seedCatalogue(ctx.db, { scale: SCALE })
    app = await buildTestApp(ctx.db)
    await app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    forms = ((await (await fetch(`${base}/api/v2/good/nomenclature/kinds`)).json()) as KindForms).kinds
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    consoleErrors.watch(page)
  })
  after(async () => {
    await page?.close()
    await app?.close()
  })

  test('the first screen shows a tab per kind in Russian and a page of results', async (t) => {
    await page.goto(`${base}/`)
    await page.waitForSelector('table.results tbody tr td.price')
    // Measured, not asserted: the machine's load decides it.
    const shown = await page.evaluate(() => Math.round(performance.now()))
    t.diagnostic(`first screen with results ${shown} ms after navigation started`)
    assert.equal(await page.getAttribute('html', 'lang'), 'ru')
    assert.deepEqual(
      await page.locator('[role="tab"]').allTextContents(),
      forms.map((form) => form.title.ru),
    )
    const first = forms[0]!
    await waitForTotal((await apiSearch(first.kind, { byPriceList: false })).totalElements)
    // Every text filter is an input named as the API names the field, with a visible label.
    for (const field of first.fields) {
      const input = page.locator(`input[name="${field.name}"]`)
      assert.equal(await input.count(), 1, field.name)
      assert.equal(
        (await page.locator(`label[for="${await input.getAttribute('id')}"]`).textContent())?.trim(),
        field.label.ru,
      )
    }
  })

  test('results follow what is typed into a text filter', async (t) => {
    const form = forms[0]!
    const field = form.fields.find((candidate) => candidate.input === 'text')!
    const sample = (await apiSearch(form.kind, { byPriceList: false })).content[0]![field.name]
    const fragment = String(sample).slice(0, 3)
    const expected = (await apiSearch(form.kind, { byPriceList: false, [field.name]: fragment })).totalElements
    const input = page.locator(`#${form.kind}-${field.name}`)
    await input.pressSequentially(fragment, { delay: 40 })
    const typed = performance.now()
    await waitForTotal(expected)
    // Measured, not asserted: the typing pause (40 ms), the search and the drawing, on a loaded machine.
    t.diagnostic(`results updated ${Math.round(performance.now() - typed)} ms after the last keystroke`)
    await input.fill('')
    await page.keyboard.press('Escape')
    await waitForTotal((await apiSearch(form.kind, { byPriceList: false })).totalElements)
  })

  /** Types a power some item of the kind has (the lower bound of its zone) and waits for the API's total. */
  const searchPrescription = async (form: KindForm, prescription: FormField, body: Record<string, unknown>) => {
    // A power some item of the kind has: the lower bound of its zone.
    const items = await apiSearch(form.kind, { byPriceList: false }, 'size=50')
    const power = items.content.map((item) => item[`${prescription.name}From`]).find((v) => v !== null)
    assert.ok(power !== undefined, `${form.kind} has items with a ${prescription.name}`)
    await fillField(form.kind, prescription.name, String(power))
    body[prescription.name] = String(power)
    const expected = (await apiSearch(form.kind, body)).totalElements
    await waitForTotal(expected)
  }

  test('every kind: a facet value chosen with the keyboard, and a prescription, give what the API gives', async () => {
    for (const form of forms) {
      await openTab(form.kind)
      const text = form.fields.find((field) => field.input === 'text')!
      const input = page.locator(`#${form.kind}-${text.name}`)
      await input.focus()
      // The drop-down offers the field's values with their counts (facets); ↓ and Enter take the first.
      const option = page.locator(`#${form.kind}-${text.name}-list [role="option"]`).first()
      await option.waitFor()
      const value = (await option.locator('span').first().textContent())!
      await page.keyboard.press('ArrowDown')
      await page.keyboard.press('Enter')
      assert.equal(await input.inputValue(), value)
      const body: Record<string, unknown> = { byPriceList: false, [text.name]: value }
      await waitForTotal((await apiSearch(form.kind, body)).totalElements)

      const prescription = form.fields.find((field) => field.input === 'prescription')
      if (prescription) await searchPrescription(form, prescription, body)
      await page.click('button:text-is("Сбросить фильтры")')
    }
  })

  test('every text filter of every kind offers its values, and suggests them as one types', async () => {
    for (const form of forms) {
      await openTab(form.kind)
      for (const field of form.fields.filter((candidate) => candidate.input === 'text')) {
        const input = page.locator(`#${form.kind}-${field.name}`)
        await input.focus()
        const first = page.locator(`#${form.kind}-${field.name}-list [role="option"]`).first()
        await first.waitFor()
        const value = (await first.locator('span').first().textContent())!
        // The first letters typed: the service suggests the value (lens material, geometry and technology
        // included), and the list shows it. The answer awaited is the one for all three letters (as the page
        // sends them, trimmed): the page drops the answer to a shorter prefix when the next letter is typed, and
        // its body is gone then.
        const typed = value.slice(0, 3)
        const suggested = page.waitForResponse((response) => {
          const url = new URL(response.url())
          return (
            url.pathname.endsWith('/suggest') &&
            url.searchParams.get('kind') === form.kind &&
            url.searchParams.get('field') === field.name &&
            url.searchParams.get('q') === typed.trim()
          )
        })
        await input.pressSequentially(typed, { delay: 20 })
        const { suggestions } = (await (await suggested).json()) as { suggestions: { value: string }[] }
        assert.ok(
          suggestions.some((suggestion) => suggestion.value === value),
          `${form.kind}.${field.name} suggests ${value}`,
        )
        await until(`${form.kind}.${field.name} suggesting ${value}`, async () =>
          (await page.locator(`#${form.kind}-${field.name}-list [role="option"] span`).allTextContents()).includes(
            value,
          ),
        )
        await input.fill('')
        await page.keyboard.press('Escape')
      }
    }
  })

  test('prescription fields are checked as the API checks them, and a plus cylinder is explained', async () => {
    const lenses = forms.find((form) => form.fields.some((field) => field.role === 'cylinder'))!
    const role = (name: string) => lenses.fields.find((field) => field.role === name)!.name
    await openTab(lenses.kind)
    await fillField(lenses.kind, role('sphere'), '-2.7')
    const sphere = page.locator(`#${lenses.kind}-${role('sphere')}`)
    await page.waitForSelector(`#${lenses.kind}-${role('sphere')}-error`)
    assert.equal(await sphere.getAttribute('aria-invalid'), 'true')
    assert.match((await page.textContent(`#${lenses.kind}-${role('sphere')}-error`))!, /0\.25/)

    await fillField(lenses.kind, role('sphere'), '-2')
    await fillField(lenses.kind, role('cylinder'), '+1,25')
    const note = await page.waitForSelector('.note')
    assert.match((await note.textContent())!, /-0\.75.*-1\.25/)
    const expected = await apiSearch(lenses.kind, { byPriceList: false, sphere: '-2', cylinder: '1.25' })
    await waitForTotal(expected.totalElements)
    await page.click('button:text-is("Сбросить фильтры")')
  })

  test('a typographic minus is a minus, and invalid input marks the results on screen as not updated', async () => {
    const lenses = forms.find((form) => form.fields.some((field) => field.role === 'cylinder'))!
    const sphere = lenses.fields.find((field) => field.role === 'sphere')!
    await openTab(lenses.kind)
    const minusTwo = (await apiSearch(lenses.kind, { byPriceList: false, [sphere.name]: '-2.25' })).totalElements
    const plusTwo = (await apiSearch(lenses.kind, { byPriceList: false, [sphere.name]: '2.25' })).totalElements
    assert.notEqual(minusTwo, plusTwo, 'the sign makes a difference in the demo catalogue')
    for (const minus of ['\u2212', '\u2013']) {
      await fillField(lenses.kind, sphere.name, `${minus}2,25`)
      await waitForTotal(minusTwo)
      assert.equal(await page.locator(`#${lenses.kind}-${sphere.name}`).getAttribute('aria-invalid'), 'false')
      assert.equal(await page.locator('.stale-note').count(), 0)
      await fillField(lenses.kind, sphere.name, '2.25')
      await waitForTotal(plusTwo)
    }
    // A mistake leaves the last results on screen, dimmed under a note saying why.
    await fillField(lenses.kind, sphere.name, '2.2x')
    const note = await page.waitForSelector('.stale-note')
    assert.equal(await note.textContent(), `Результаты не обновлены: ${sphere.label.ru}: Введите число`)
    assert.equal((await page.locator('.results-area.stale tbody tr').count()) > 0, true)
    assert.equal(
      await page.evaluate("getComputedStyle(document.querySelector('.results-area.stale .table-scroll')).opacity"),
      '0.45',
    )
    await fillField(lenses.kind, sphere.name, '2.25')
    await page.waitForSelector('.results-area:not(.stale)')
    assert.equal(await page.locator('.stale-note').count(), 0)
    await page.click('button:text-is("Сбросить фильтры")')
  })

  test('results are sorted by a column header and paged with PageDown / PageUp, as Spring pages them', async () => {
    const form = forms.find((candidate) => candidate.kind === 'glasses') ?? forms[0]!
    await openTab(form.kind)
    const priceHeader = page.locator('th.price')
    await priceHeader.locator('button').click()
    await page.waitForSelector('th.price[aria-sort="ascending"]')
    const ascending = await apiSearch(form.kind, { byPriceList: false }, 'size=20&sort=retailPrice,asc')
    await waitForFirstPrice(ascending.content[0]!.retailPrice)
    await priceHeader.locator('button').click()
    await page.waitForSelector('th.price[aria-sort="descending"]')
    const descending = await apiSearch(form.kind, { byPriceList: false }, 'size=20&sort=retailPrice,desc')
    await waitForFirstPrice(descending.content[0]!.retailPrice)

    // ↓ moves from row to row; PageDown / PageUp turn pages wherever the focus is.
    const rows = page.locator('tbody tr')
    await rows.first().focus()
    await page.keyboard.press('ArrowDown')
    assert.equal(await rows.nth(1).evaluate((row) => row === row.ownerDocument.activeElement), true)
    await page.keyboard.press('PageDown')
    await page.waitForSelector('text=Страница 2 из')
    const second = await apiSearch(form.kind, { byPriceList: false }, 'page=1&size=20&sort=retailPrice,desc')
    await waitForFirstPrice(second.content[0]!.retailPrice)
    await page.keyboard.press('PageUp')
    await page.waitForSelector('text=Страница 1 из')
    await waitForFirstPrice(descending.content[0]!.retailPrice)
    await priceHeader.locator('button').click()
    await page.waitForSelector('th.price[aria-sort="none"]')
  })

  test('"позиций прайс-листа" searches the price list itself, "товаров с ценой" the priced goods', async () => {
    const form = forms[0]!
    await openTab(form.kind)
    // The switch says in the optician's words what each side holds.
    assert.equal((await page.textContent('fieldset.mode legend'))?.trim(), 'Искать среди')
    assert.match((await page.textContent('#mode-hint')) ?? '', /штрихкод.*группу товаров.*под заказ/)
    await page.getByLabel('позиций прайс-листа').check()
    await waitForTotal((await apiSearch(form.kind, { byPriceList: true })).totalElements)
    await page.getByLabel('товаров с ценой').check()
    await waitForTotal((await apiSearch(form.kind, { byPriceList: false })).totalElements)
  })

  test('the whole page switches to English and back', async () => {
    await page.getByLabel('Язык').selectOption('en')
    await page.waitForSelector('html[lang="en"]')
    assert.deepEqual(
      await page.locator('[role="tab"]').allTextContents(),
      forms.map((form) => form.title.en),
    )
    assert.ok(await page.getByLabel('price-list entries').isVisible())
    await page.getByLabel('Language').selectOption('ru')
    await page.waitForSelector('html[lang="ru"]')
  })

  test('kind, mode, filters (exact ones too), sort and page are in the link: a reload and a shared link return to them', async () => {
    const lenses = forms.find((form) => form.fields.some((field) => field.role === 'cylinder'))!
    const field = lenses.fields.find((candidate) => candidate.input === 'text')!
    // The manufacturer with the most price-list entries, so that there is a second page of ten.
    const facets = (await (
      await fetch(`${base}/api/v2/good/nomenclature/search/${lenses.kind}/facets`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ byPriceList: true }),
      })
    ).json()) as { text: Record<string, { values: { value: string; count: number }[] }> }
    const value = facets.text[field.name]!.values.toSorted((a, b) => b.count - a.count)[0]!.value
    const body = { byPriceList: true, [field.name]: value, exact: [field.name] }
    const second = await apiSearch(lenses.kind, body, 'page=1&size=10&sort=retailPrice,asc')
    assert.ok(second.content.length > 0, 'a second page of ten')

    await openTab(lenses.kind)
    await page.getByLabel('позиций прайс-листа').check()
    const input = page.locator(`#${lenses.kind}-${field.name}`)
    await input.fill(value.slice(0, -1))
    await page
      .locator(`#${lenses.kind}-${field.name}-list [role="option"]`)
      .filter({ has: page.locator(`span:text-is(${JSON.stringify(value)})`) })
      .click()
    await page.getByLabel('Строк на странице').selectOption('10')
    await page.locator('th.price button').click()
    await page.waitForSelector('th.price[aria-sort="ascending"]')
    await page.keyboard.press('PageDown')
    await page.waitForSelector('text=Страница 2 из')
    await until('the second page in the link', async () => new URL(page.url()).hash.includes('page=2'))
    const hash = new URLSearchParams(new URL(page.url()).hash.split('?')[1])
    assert.deepEqual(Object.fromEntries(hash), {
      kind: lenses.kind,
      in: 'price-list',
      [field.name]: value,
      exact: field.name,
      sort: 'retailPrice,asc',
      page: '2',
      rows: '10',
    })

    /** The screen the link names: the tab, the mode, the exact filter, the sort, the page and its rows. */
    const sameScreen = async (shown: Page) => {
      await shown.waitForSelector(`#tab-${lenses.kind}[aria-selected="true"]`)
      assert.equal(await shown.getByLabel('позиций прайс-листа').isChecked(), true)
      assert.equal(await shown.locator(`#${lenses.kind}-${field.name}`).inputValue(), value)
      assert.match((await shown.textContent(`#${lenses.kind}-${field.name}-exact`)) ?? '', new RegExp(`= ${value}`))
      await shown.waitForSelector('th.price[aria-sort="ascending"]')
      await shown.waitForSelector('text=Страница 2 из')
      await until('the second page of the link', async () => {
        const cells = await shown.locator('tbody tr td.price').allTextContents()
        return (
          cells.length === second.content.length &&
          plain(cells[0]!.replace(/\s/g, '').replace(',', '.')) === plain(second.content[0]!.retailPrice)
        )
      })
    }
    await page.reload()
    await sameScreen(page)
    // A shared link opens the same screen in another browser (its own storage).
    const shared = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    try {
      consoleErrors.watch(shared)
      await shared.goto(page.url())
      await sameScreen(shared)
    } finally {
      await shared.close()
    }

    // Without a kind in the location, the page opens on the kind chosen last.
    const other = forms.find((form) => form.kind !== lenses.kind && form.kind !== forms[0]!.kind)!
    await openTab(other.kind)
    await page.goto(`${base}/`)
    await page.waitForSelector(`#tab-${other.kind}[aria-selected="true"]`)
    assert.match(new URL(page.url()).hash, new RegExp(`^#/\\?kind=${other.kind}$`))
    // The counter's link in the menu, followed on the counter, opens it afresh on that kind.
    await openTab(lenses.kind)
    await page.click('nav a[href="#/"]')
    await page.waitForSelector(`#tab-${lenses.kind}[aria-selected="true"]`)
    assert.equal(await page.locator(`#${lenses.kind}-${field.name}`).inputValue(), '')
  })

  test("the counter's link followed on the screen it names keeps the results and the drop-down's values", async () => {
    const form = forms.find((candidate) => candidate.fields.some((field) => field.input === 'text'))!
    const field = form.fields.find((candidate) => candidate.input === 'text')!
    const input = page.locator(`#${form.kind}-${field.name}`)
    const list = page.locator(`#${form.kind}-${field.name}-list`)
    await page.goto(`${base}/#/?kind=${form.kind}`)
    await page.waitForSelector('tbody tr td.price')
    // Every answer of the screen is in before the link is followed.
    await input.focus()
    await list.locator('[role="option"]').first().waitFor()
    await page.keyboard.press('Escape')
    const rows = await page.locator('tbody tr').count()
    await page.click('nav a[href="#/"]')
    await until('the location written back', async () => new URL(page.url()).hash === `#/?kind=${form.kind}`)
    await page.waitForSelector('tbody tr td.price')
    assert.equal(await page.locator('tbody tr').count(), rows)
    await input.blur()
    await input.focus()
    await list.locator('[role="option"]').first().waitFor({ timeout: 5_000 })
  })

  test('a column chooser, remembered per kind, makes the lenses table fit at 1366 px', async () => {
    const lenses = forms.find((form) => form.fields.some((field) => field.role === 'cylinder'))!
    const other = forms.find((form) => form.kind !== lenses.kind)!
    const narrow = await browser.newPage({ viewport: { width: 1366, height: 768 } })
    try {
      consoleErrors.watch(narrow)
      await narrow.goto(`${base}/#/?kind=${lenses.kind}`)
      await narrow.waitForSelector('tbody tr td.price')
      const overflows = () =>
        narrow.evaluate("(s => s.scrollWidth > s.clientWidth)(document.querySelector('.table-scroll'))")
      assert.equal(await overflows(), true, `${lenses.columns.length} columns overflow at 1366 px`)
      const headers = () => narrow.locator('thead th').count()
      await narrow.click('.column-chooser summary')
      assert.equal(await narrow.locator('.column-chooser input[value="retailPrice"]').isDisabled(), true)
      // Columns unticked from the last until the table fits.
      const boxes = narrow.locator('.column-chooser input[name="column"]')
      let shown = lenses.columns.length
      for (let index = lenses.columns.length - 1; index >= 0 && (await overflows()); index--) {
        if (await boxes.nth(index).isDisabled()) continue
        await boxes.nth(index).uncheck()
        shown--
        assert.equal(await headers(), shown)
      }
      assert.equal(await overflows(), false)
      assert.ok(shown >= 6, `${shown} columns fit`)
      assert.equal(
        (await narrow.textContent('.column-chooser summary'))?.trim(),
        `Столбцы: ${shown} из ${lenses.columns.length}`,
      )
      await narrow.reload()
      await narrow.waitForSelector('tbody tr td.price')
      assert.equal(await headers(), shown)
      // Another kind keeps its own columns.
      await narrow.click(`#tab-${other.kind}`)
      await narrow.waitForSelector(`#tab-${other.kind}[aria-selected="true"]`)
      await until('all columns of the other kind', async () => (await headers()) === other.columns.length)
    } finally {
      await narrow.close()
    }
  })

  test('axe-core finds no serious or critical accessibility violation', async () => {
    const lenses = forms.find((form) => form.fields.some((field) => field.input === 'prescription'))!
    await openTab(lenses.kind)
    await page.locator(`#${lenses.kind}-${lenses.fields[0]!.name}`).focus()
    await page.waitForSelector('[role="listbox"]:not([hidden])')
    assert.deepEqual(await seriousViolations(page), [])
  })

  test("a banner says when a kind's prices are being refreshed", async () => {
    const form = forms[0]!
    // A write marks the kind's matview stale; the refresher is off in tests, so it stays stale.
    const table = sql.table(kindByPath.get(form.kind)!.priceTable)
    await sql`UPDATE ${table} SET price = price WHERE id = (SELECT min(id) FROM ${table})`.execute(ctx.db.primary)
    await page.reload()
    await openTab(form.kind)
    const banner = await page.waitForSelector('.banner')
    assert.match((await banner.textContent())!, new RegExp(form.title.ru))
  })

  // Taken once, from the embedded database's run.
  if (ctx.target === 'pglite') {
    test('a screenshot of the counter search for docs/web-app.md', async () => {
      const lenses = forms.find((form) => form.fields.some((field) => field.role === 'cylinder'))!
      await page.reload()
      await openTab(lenses.kind)
      await fillField(lenses.kind, 'manufacturer', 'Hoya')
      await waitForTotal((await apiSearch(lenses.kind, { byPriceList: false, manufacturer: 'Hoya' })).totalElements)
      // The brand's drop-down: its values under the chosen manufacturer, with counts.
      await page.locator(`#${lenses.kind}-brand`).focus()
      await page.locator(`#${lenses.kind}-brand-list [role="option"]`).first().waitFor()
      await page.screenshot({ path: screenshotPath('counter-search.png') })
    })
  }

  test('the screen logged no console error', () => {
    assert.deepEqual(consoleErrors.errors, [])
  })
})
