import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { type Browser, type BrowserContextOptions, chromium, type Page } from 'playwright-core'
import { buildTestApp, eachDatabase, type TestContext } from '../harness.js'

/*
 * What every browser test shares: Debian's Chromium through playwright-core (one browser per test file, a
 * visible skip when it is not installed), the wait for an asynchronous page, the axe-core check, the page's
 * console errors and the folder of the documentation's screenshots (docs/screenshots/).
 */

const CHROMIUM = process.env.CHROMIUM_PATH?.trim() || '/usr/bin/chromium'
const screenshots = new URL('../../docs/screenshots/', import.meta.url)
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** The file's browser, launched before its suites run; pages are opened in the suites' own `before`. */
export interface SuiteBrowser {
  newPage(options?: BrowserContextOptions): Promise<Page>
}

/**
 * Defines `define` once per database (as `eachDatabase` does) with one Chromium launched for the whole file, or,
 * when there is no Chromium, a single test named `name` that is skipped saying how to install it.
 */
export function browserSuite(name: string, define: (ctx: TestContext, browser: SuiteBrowser) => void): void {
  if (!existsSync(CHROMIUM)) {
    test(name, (t) => {
      t.skip(`no browser at ${CHROMIUM}: install Debian's chromium package (or set CHROMIUM_PATH) to run it`)
    })
    return
  }
  let browser: Browser | undefined
  before(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
    })
  })
  after(() => browser?.close())
  const shared: SuiteBrowser = {
    newPage: (options) => {
      if (!browser) throw new Error('the browser is launched before the suites run')
      return browser.newPage(options)
    },
  }
  eachDatabase(name, (ctx) => define(ctx, shared))
}

/** Waits until `check` holds (the page answers asynchronously, debounced); fails naming `what` after 30 s. */
export async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`the page never showed ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

export interface Violation {
  id: string
  impact: string
  nodes: number
}

/** The serious and critical accessibility violations axe-core finds on the page as it is now. */
export async function seriousViolations(page: Page): Promise<Violation[]> {
  await page.evaluate(axeSource)
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> }
      }
    ).axe
    const result = await axe.run()
    return result.violations.map(({ id, impact, nodes }) => ({ id, impact, nodes: nodes.length }))
  })
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
}

/** Where the documentation's screenshot `name` (e.g. `price-desk.png`) is written; the folder is made if missing. */
export function screenshotPath(name: string): string {
  mkdirSync(screenshots, { recursive: true })
  return new URL(name, screenshots).pathname
}

/** Which console errors of a page are not faults of the page. */
export interface WatchOptions {
  /**
   * HTTP statuses of refusals the test provokes on purpose: Chromium logs each as "Failed to load resource: the
   * server responded with a status of …", but the page shows them as answers. They are counted in `provoked`.
   */
  readonly provokedStatuses?: readonly number[]
  /** Only console messages logged while the page is at this origin count (another site's pages are not ours). */
  readonly origin?: string
}

/** The console errors and uncaught exceptions of the pages it watches, for a last test to assert there are none. */
export class ConsoleErrors {
  readonly errors: string[] = []
  readonly provoked: string[] = []

  watch(page: Page, options: WatchOptions = {}): void {
    const { provokedStatuses = [], origin } = options
    const provoked =
      provokedStatuses.length > 0
        ? new RegExp(`Failed to load resource: the server responded with a status of (${provokedStatuses.join('|')}) `)
        : undefined
    page.on('console', (message) => {
      if (message.type() !== 'error') return
      if (origin !== undefined && !page.url().startsWith(origin)) return
      if (provoked?.test(message.text())) this.provoked.push(message.text())
      else this.errors.push(message.text())
    })
    page.on('pageerror', (error) => this.errors.push(error.message))
  }
}

/** The app on a free port with a page open on it (1280 × 900), its console errors watched; set once `before` ran. */
export interface ServedDesk {
  readonly base: string
  readonly page: Page
}

/**
 * Serves the app for a suite (configured by `env` beside the tests' defaults): in its `before`, after `seed`, on a free port with a page opened on it whose console
 * errors `consoleErrors` collects; both closed in its `after`.
 */
export function serveDesk(
  ctx: TestContext,
  browser: SuiteBrowser,
  consoleErrors: ConsoleErrors,
  seed: () => Promise<unknown>,
  env: Record<string, string> = {},
): ServedDesk {
  let app: FastifyInstance | undefined
  let served: ServedDesk | undefined
  before(async () => {
    await seed()
    app = await buildTestApp(ctx.db, env)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
    consoleErrors.watch(page)
    served = { base: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, page }
  })
  after(async () => {
    await served?.page.close()
    await app?.close()
  })
  const current = () => {
    if (!served) throw new Error('the desk is served once the suite has started')
    return served
  }
  return {
    get base() {
      return current().base
    },
    get page() {
      return current().page
    },
  }
}

/** The date-time picker's value (the browser's local time, as the manager picks it) that many seconds from now. */
export function localTimeAhead(page: Page, seconds: number): Promise<string> {
  // A string, so the test's compiler adds nothing the page lacks.
  return page.evaluate<string>(`(() => {
    const at = new Date(Date.now() + ${seconds * 1000})
    const pad = (value) => String(value).padStart(2, '0')
    return at.getFullYear() + '-' + pad(at.getMonth() + 1) + '-' + pad(at.getDate()) +
      'T' + pad(at.getHours()) + ':' + pad(at.getMinutes()) + ':' + pad(at.getSeconds())
  })()`)
}
