import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { type Browser, chromium, type Page } from 'playwright-core'
import { uniformInt } from 'pure-rand/distribution/uniformInt'
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus'
import { glasses, lenses } from '../src/catalog/kinds/kinds.js'
import { openDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { seedCatalogue } from '../src/demo/demo-catalogue.js'
import { median, percentile } from './load.js'
import { buildService, type Service, startService } from './service.js'

/*
 * npm run bench:web -- [--scale N] [--fragments N] [--loads N] [--key-delay MS]
 *
 * The web app in a real browser (Debian's Chromium through playwright-core), as an optician uses it:
 * - first screen: a fresh browser context (nothing cached) opens `/`; measured from the navigation's start until
 *   the counter search is usable (the kind's form is drawn) and until the first results are shown;
 * - typing: in the frames tab, brand fragments typed key by key (--key-delay apart), each a different fragment
 *   of a different brand drawn with a fixed seed from the catalogue's own brands, so no answer is a repeat; measured
 *   from the last keystroke until the page has drawn the answer to exactly what was typed. The page's total is then
 *   compared with the API's, so a figure never comes from a wrong answer.
 * The probes are strings evaluated in the page, so the page's content security policy is bypassed (it forbids
 * evaluated code); nothing else of the page changes. The service runs with RESULT_CACHE=off: every answer is computed afresh. Against BENCH_DATABASE_URL as it is
 * (fill it first, e.g. `npm run cli -- seed --scale 1000000 --kinds glasses,lenses` with that DATABASE_URL), else a
 * temporary embedded database seeded with --scale SKUs of frames and lenses.
 */

const here = fileURLToPath(new URL('.', import.meta.url))
const CHROMIUM = process.env.CHROMIUM_PATH?.trim() || '/usr/bin/chromium'
const url = process.env.BENCH_DATABASE_URL || undefined
const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '20000' },
    fragments: { type: 'string', default: '40' },
    loads: { type: 'string', default: '10' },
    'key-delay': { type: 'string', default: '60' },
    help: { type: 'boolean', default: false },
  },
})

if (values.help) {
  process.stdout.write(
    'npm run bench:web -- [--scale N] [--fragments N] [--loads N] [--key-delay MS]\n' +
      '  BENCH_DATABASE_URL: a filled PostgreSQL database, measured as it is; unset: a temporary embedded\n' +
      '  database with --scale SKUs of frames and of lenses (default 20000).\n' +
      '  --fragments: brand fragments typed (default 40); --loads: first-screen loads (default 10);\n' +
      '  --key-delay: milliseconds between keystrokes (default 60).\n',
  )
  process.exit(0)
}

function positive(name: string, raw: string): number {
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`bench: --${name} must be a positive integer (got ${raw})\n`)
    process.exit(2)
  }
  return value
}

const scale = positive('scale', values.scale)
const fragmentCount = positive('fragments', values.fragments)
const loads = positive('loads', values.loads)
const keyDelay = positive('key-delay', values['key-delay'])
const log = (line: string) => process.stdout.write(`${line}\n`)

if (!existsSync(CHROMIUM)) {
  process.stderr.write(`bench: no browser at ${CHROMIUM}: install Debian's chromium package (or set CHROMIUM_PATH)\n`)
  process.exit(2)
}
if (!existsSync(join(here, '../dist/web/index.html'))) {
  process.stderr.write('bench: the web app is not built: run `npm run build` first\n')
  process.exit(2)
}

/**
 * Run in the page before its own scripts: notes the time of every keystroke and, for every search the page sends,
 * its body and when its answer was drawn (two frames after it arrived), in the page's clock. A string, since it
 * runs in the browser, not here.
 */
const pageProbe = `
  const state = { lastKey: 0, shown: [] }
  window.__bench = state
  document.addEventListener('keydown', () => { state.lastKey = performance.now() }, true)
  const original = window.fetch.bind(window)
  window.fetch = async (input, init) => {
    const response = await original(input, init)
    const path = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url
    if (path.includes('/nomenclature/search/') && !path.includes('/facets') && response.ok) {
      const body = typeof init?.body === 'string' ? init.body : ''
      response.clone().text().then(() =>
        requestAnimationFrame(() => requestAnimationFrame(() => state.shown.push({ body, at: performance.now() }))))
    }
    return response
  }
`

/** Milliseconds from the last keystroke until the answer to `body` was drawn, once it has been (page clock). */
const shownAfterLastKey = `(body) => {
  const probe = window.__bench
  const shown = probe.shown.find((entry) => entry.body === body && entry.at >= probe.lastKey)
  return shown ? shown.at - probe.lastKey : undefined
}`

const sorted = (values: readonly number[]) => [...values].sort((a, b) => a - b)

async function brandsOf(service: Service): Promise<string[]> {
  const response = await fetch(`${service.baseUrl}/api/v2/good/nomenclature/search/glasses/facets`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ byPriceList: false }),
  })
  if (!response.ok) throw new Error(`facets answered ${response.status}`)
  const facets = (await response.json()) as { text: Record<string, { values: { value: string }[] }> }
  return (facets.text.brand?.values ?? []).map((value) => value.value)
}

/** Distinct fragments (3–6 letters from a random place) of distinct brands, drawn with a fixed seed. */
function fragmentsOf(brands: readonly string[], count: number): string[] {
  const rng = xoroshiro128plus(20261127)
  const next = (max: number) => uniformInt(rng, 0, max - 1)
  const chosen = new Set<string>()
  for (let attempt = 0; chosen.size < count && attempt < count * 50; attempt++) {
    const brand = (brands[next(brands.length)] ?? '').trim()
    if (brand.length < 3) continue
    const length = Math.min(brand.length, 3 + next(4))
    const start = next(brand.length - length + 1)
    const fragment = brand.slice(start, start + length).toLowerCase()
    if (fragment.trim().length === length) chosen.add(fragment)
  }
  return [...chosen]
}

async function apiTotal(service: Service, brand: string): Promise<number> {
  const response = await fetch(`${service.baseUrl}/api/v2/good/nomenclature/search/glasses?page=0&size=1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ byPriceList: false, brand }),
  })
  return ((await response.json()) as { totalElements: number }).totalElements
}

/** The page's clock (milliseconds since its navigation started) when `selector` first matches, checked each frame. */
async function pageTimeOf(page: Page, selector: string): Promise<number> {
  const found = await page.waitForFunction(
    `document.querySelector(${JSON.stringify(selector)}) ? performance.now() : undefined`,
    undefined,
    { timeout: 60_000, polling: 'raf' },
  )
  return (await found.jsonValue()) as number
}

async function firstScreens(browser: Browser, service: Service) {
  const usable: number[] = []
  const results: number[] = []
  for (let i = 0; i < loads; i++) {
    const context = await browser.newContext({ bypassCSP: true })
    const page = await context.newPage()
    await page.goto(service.baseUrl, { waitUntil: 'commit' })
    usable.push(await pageTimeOf(page, 'form.filters input'))
    results.push(await pageTimeOf(page, 'caption'))
    await context.close()
  }
  return { usable, results }
}

async function typing(page: Page, service: Service, fragments: readonly string[]) {
  const latencies: number[] = []
  const input = page.locator('input[name="brand"]')
  let wrong = 0
  for (const fragment of fragments) {
    await input.fill('')
    await page.waitForTimeout(300)
    await input.focus()
    await page.keyboard.type(fragment, { delay: keyDelay })
    const wanted = JSON.stringify({ byPriceList: false, brand: fragment })
    const handle = await page.waitForFunction(`(${shownAfterLastKey})(${JSON.stringify(wanted)})`, undefined, {
      timeout: 30_000,
      polling: 5,
    })
    latencies.push((await handle.jsonValue()) as number)
    const caption = (await page.locator('caption').textContent()) ?? ''
    const total = await apiTotal(service, fragment)
    if (!new RegExp(`\\b${total}\\b`).test(caption.replace(/\s/g, ''))) wrong++
  }
  return { latencies, wrong }
}

let dataDir: string | undefined
if (!url) {
  dataDir = mkdtempSync(join(tmpdir(), 'optics-bench-web-'))
  log(`seeding ${scale} SKUs of frames and of lenses into a temporary embedded database…`)
  const db = await openDatabase({ dataDir, poolSize: 2, applicationName: 'optics-catalog-bench' })
  await migrateToLatest(db.primary)
  await seedCatalogue(db, { scale, kinds: [glasses, lenses] })
  await db.close()
}

buildService()
const service = await startService({ ...(url ? { url } : { dataDir }), poolSize: 4, caches: 'off', readySeconds: 600 })
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage'],
})
try {
  const skus = await apiTotal(service, '')
  log(`service ready in ${service.readySeconds.toFixed(1)} s; frames: ${skus} SKUs`)
  const screens = await firstScreens(browser, service)
  const brands = await brandsOf(service)
  const fragments = fragmentsOf(brands, fragmentCount)
  const context = await browser.newContext({ bypassCSP: true })
  await context.addInitScript({ content: pageProbe })
  const page = await context.newPage()
  await page.goto(`${service.baseUrl}/`)
  await page.locator('#tab-glasses').click()
  await page.locator('input[name="brand"]').waitFor({ state: 'visible' })
  // A few fragments first, untimed: the page's code and the service's first orders are warm, as at the counter.
  await typing(page, service, fragmentsOf(brands, fragmentCount + 5).slice(fragmentCount))
  const typed = await typing(page, service, fragments)
  await context.close()

  const report = {
    date: new Date().toISOString(),
    database: url ? 'postgres' : 'pglite',
    frames: skus,
    fragments: fragments.length,
    keyDelayMs: keyDelay,
    firstScreen: {
      loads,
      usableMs: { median: median(screens.usable), p90: percentile(sorted(screens.usable), 0.9) },
      resultsMs: { median: median(screens.results), p90: percentile(sorted(screens.results), 0.9) },
    },
    typing: {
      lastKeyToResultsMs: {
        median: median(typed.latencies),
        p90: percentile(sorted(typed.latencies), 0.9),
        max: Math.max(...typed.latencies),
      },
      wrongTotals: typed.wrong,
    },
  }
  const directory = join(here, 'results')
  mkdirSync(directory, { recursive: true })
  const file = join(directory, `${report.date.replace(/[:.]/g, '-')}-web-${report.database}.json`)
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  const ms = (value: number) => `${value.toFixed(0)} ms`
  log(
    [
      `first screen (${loads} loads, nothing cached): usable ${ms(report.firstScreen.usableMs.median)} median, ` +
        `results ${ms(report.firstScreen.resultsMs.median)} median`,
      `typing (${fragments.length} brand fragments of ${skus} frames, ${keyDelay} ms between keys): last key → ` +
        `results ${ms(report.typing.lastKeyToResultsMs.median)} median, ${ms(report.typing.lastKeyToResultsMs.p90)} ` +
        `p90, ${ms(report.typing.lastKeyToResultsMs.max)} max; totals different from the API's: ${typed.wrong}`,
      `results: ${file}`,
    ].join('\n'),
  )
  if (typed.wrong > 0) process.exitCode = 1
} finally {
  await browser.close()
  await service.stop()
  if (dataDir) rmSync(dataDir, { recursive: true, force: true })
}
