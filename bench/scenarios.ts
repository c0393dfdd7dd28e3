import { createReadStream, createWriteStream } from 'node:fs'
import { finished } from 'node:stream/promises'
import { CompiledQuery, type Kysely, sql } from 'kysely'
import { refreshMatview } from '../src/catalog/freshness/catalog-repository.js'
import type { Kind } from '../src/catalog/kinds/kind.js'
import { glasses, lenses } from '../src/catalog/kinds/kinds.js'
import { searchFacets } from '../src/catalog/search/facets.js'
import { buildSearchQuery, type FilterValues, type SearchRequest } from '../src/catalog/search/search-query.js'
import { copyText } from '../src/db/copy-text.js'
import type { Database } from '../src/db/database.js'
import type { GlassPriceFilter } from '../src/glass-prices/glass-price-filter.js'
import { findGlassPrice } from '../src/glass-prices/glass-price-repository.js'
import type { SortColumn, SortDirection } from '../src/glass-prices/glass-price-schemas.js'
import { importCsv } from '../src/transfer/csv-import.js'
import { openCsv } from '../src/transfer/csv-records.js'
import { exportTable } from '../src/transfer/export-writer.js'
import { transferColumns } from '../src/transfer/transfer-columns.js'
import { bulkUnderLoadScenario, purchaseTimesKFloor, sendPurchaseTimesK } from './bulk-under-load.js'
import { coldMixId, coldMixScenarios, listingFloor, listingPath, searchFloor } from './cold-mix.js'
import type { HttpRequestSpec } from './load.js'

/*
 * The scenarios of the benchmark. Each load scenario is a list of varied requests drawn from the catalogue itself;
 * every request carries its floor: the SQL the service sends for it (page and count), run straight through the
 * driver. Each one-shot scenario (a write, an import, a refresh) runs the service's code against the bare
 * statement that does the same work.
 */

export interface BenchRequest {
  readonly http: HttpRequestSpec
  readonly floor: (db: Database) => Promise<unknown>
  /** What kind of request it is, where a list mixes kinds (the cold mix reports its latencies per kind). */
  readonly category?: string
}

export interface LoadScenario {
  readonly type: 'load'
  readonly id: string
  readonly title: string
  /** The target's p99 latency, in milliseconds. */
  readonly p99Target: number
  /** The target's throughput as a share of the floor's (0.85: at least 85 % of it). */
  readonly ratioTarget?: number
  /** The list the workers take their requests from (cycling through it for the run's duration). */
  readonly requests: readonly BenchRequest[]
  /** This scenario's concurrency, where not the run's `connections` (the cold mix runs at 1 and at the run's). */
  readonly connections?: number
  /**
   * Each request sent exactly once, the run ending when its list is exhausted (the cold mix): run `r` sends
   * `runs[r]`, and each side sends `warmup` (unmeasured) before its first run. No request is in two lists.
   * `requests` is then the first run's list.
   */
  readonly once?: {
    readonly warmup: readonly BenchRequest[]
    readonly runs: readonly (readonly BenchRequest[])[]
  }
}

export interface OneShotScenario {
  readonly type: 'once'
  readonly id: string
  readonly title: string
  /** At most this many times the floor's duration. */
  readonly ratioTarget: number
  /** The service's side: over HTTP (needs the service running) or its own code in this process. */
  readonly side: 'http' | 'local'
  /**
   * Each returns the rows it wrote; `run` is the run's number, so repeated runs can vary their input. A service
   * that does more than the work measured (reads before it, say) returns the work's own seconds too.
   */
  readonly service: (
    target: { readonly baseUrl?: string; readonly db?: Database },
    run: number,
  ) => Promise<number | { readonly rows: number; readonly seconds: number }>
  readonly floor: (db: Database, run: number) => Promise<number>
  /** What the service's runs observed beside their duration, with targets of its own (see bulk-under-load.ts). */
  readonly details?: () => ScenarioDetails
}

export interface ScenarioDetails {
  /** Sentences for the report, each a figure with how it was measured. */
  readonly lines: readonly string[]
  readonly figures: Readonly<Record<string, unknown>>
  readonly targets: string
  readonly met: boolean
}

export type Scenario = LoadScenario | OneShotScenario

type AnyDb = Kysely<any>

/** Runs compiled queries one after the other, as the service does for one request. */
const _runCompiled =
  (...queries: CompiledQuery[]) =>
  async (db: Database) => {
    for (const query of queries) await db.read.executeQuery(query)
  }

async function column<T = string>(db: AnyDb, query: string, parameters: unknown[] = []): Promise<T[]> {
  const result = await db.executeQuery<{ value: T }>(CompiledQuery.raw(query, parameters))
  return result.rows.map((row) => row.value)
}

/**
 * Substrings that each `low`–`high` rows of a table carry: whole values of a text column, or else their first 6,
 * 5 or 4 characters, whichever first gives enough of them. Columns are tried in order.
 */
async function selectiveValues(
  db: AnyDb,
  table: string,
  columns: readonly (readonly [filter: string, column: string])[],
  low: number,
  high: number,
): Promise<{ filter: string; values: string[] }> {
  let best = { filter: '', values: [] as string[] }
  for (const [filter, name] of columns) {
    for (const piece of [name, `left(${name}, 6)`, `left(${name}, 5)`, `left(${name}, 4)`]) {
      const values = await column(
        db,
        `SELECT value FROM (SELECT ${piece} AS value, count(*) AS n FROM ${table}
          WHERE ${name} IS NOT NULL GROUP BY 1) counted
         WHERE n BETWEEN $1 AND $2 AND length(trim(value)) >= 3 ORDER BY md5(value) LIMIT 40`,
        [low, high],
      )
      if (values.length > best.values.length) best = { filter, values }
      if (best.values.length >= 20) return best
    }
  }
  if (best.values.length === 0) throw new Error(`${table}: no selective filter value found`)
  return best
}

/** A few hundred matview rows each (scaled down on a small catalogue). */
const matviewSelective = (db: AnyDb, kind: Kind, scale: number) =>
  selectiveValues(
    db,
    kind.matview,
    kind.filters.flatMap((filter) =>
      filter.match === 'substring' ? [[filter.name, filter.attribute.column] as const] : [],
    ),
    Math.max(1, Math.round(scale / 10_000)),
    Math.max(20, Math.round(scale / 1_000)),
  )

function searchRequest(kind: Kind, byPriceList: boolean, filters: FilterValues, page = 0): BenchRequest {
  return {
    http: {
      method: 'POST',
      path: `/api/v2/good/nomenclature/search/${kind.path}?page=${page}&size=10`,
      body: { byPriceList, ...filters },
    },
    floor: searchFloor(kind, byPriceList, filters, page, 10, []),
  }
}

function listingRequest(
  filter: GlassPriceFilter,
  sortColumn: SortColumn,
  sortDirection: SortDirection,
  page: number,
): BenchRequest {
  return {
    http: { method: 'GET', path: listingPath(filter, sortColumn, sortDirection, page) },
    floor: listingFloor(filter, sortColumn, sortDirection, page),
  }
}

/** Two-letter pieces of a column's values: unselective substrings. */
async function twoLetterPieces(db: AnyDb, kind: Kind, columnName: string): Promise<string[]> {
  const values = await column(
    db,
    `SELECT DISTINCT ${columnName} AS value FROM ${kind.matview} WHERE ${columnName} IS NOT NULL`,
  )
  const pieces = new Set<string>()
  for (const value of values.sort()) {
    const letters = value.toLowerCase().replace(/[^\p{L}]/gu, '')
    if (letters.length >= 2) pieces.add(letters.slice(0, 2))
    if (pieces.size >= 8) break
  }
  return [...pieces]
}

/**
 * Whether `--only` selects a scenario: its id, or a prefix of it; a one-letter prefix names the scenarios of that
 * letter (`c`: the (c) scenarios, not the cold mix, which `cold` selects). Everything when `only` is empty.
 */
/** The `PUT` of a glass price entry with a new price: its keys as they are, the prices given. */
export function priceEdit(
  entry: { readonly manufacturer: string; readonly brand: string; readonly model: string },
  price: number | string,
  purchase: number | string,
): RequestInit {
  return {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ manufacturer: entry.manufacturer, brand: entry.brand, model: entry.model, price, purchase }),
  }
}

export function isSelected(id: string, only: readonly string[]): boolean {
  if (only.length === 0) return true
  return only.some((prefix) => id === prefix || id.startsWith(prefix.length === 1 ? `${prefix}-` : prefix))
}

export interface ScenarioSetup {
  readonly db: Database
  /** SKUs per kind the catalogue was loaded with. */
  readonly scale: number
  /** A scratch directory for the import's file. */
  readonly workDir: string
  /** The run's concurrency, and the cold mix's runs: it builds a list per concurrency and run. */
  readonly connections: number
  readonly coldRuns: number
  /** Requests per run of the cold mix (each sent once); 0 leaves it out. */
  readonly coldRequests: number
  /** Distinct requests of the cold mix sent before its first run on each side (default: a tenth, ≤ 1,000). */
  readonly coldWarmup?: number
  /** Only the scenarios whose ids start with one of these are built (all when empty). */
  readonly only?: readonly string[]
}

/** Builds every scenario from the catalogue as loaded. */
export async function buildScenarios(setup: ScenarioSetup): Promise<Scenario[]> {
  const { db, scale } = setup
  const read = db.read as AnyDb
  const scenarios: Scenario[] = []

  // The cold mix first: no other scenario has yet left answers in the service's caches.
  // (Built only when selected: its lists are long.)
  const coldIds = [coldMixId(1), coldMixId(setup.connections)]
  if (setup.coldRequests > 0 && coldIds.some((id) => isSelected(id, setup.only ?? []))) {
    scenarios.push(
      ...(await coldMixScenarios({
        db,
        requests: setup.coldRequests,
        warmup: setup.coldWarmup,
        runs: setup.coldRuns,
        connections: [1, setup.connections],
      })),
    )
  }

  // (a) Selective searches: a value a few hundred SKUs carry, searched as a case-insensitive substring.
  for (const kind of [glasses, lenses]) {
    const { filter, values } = await matviewSelective(read, kind, scale)
    for (const byPriceList of [false, true]) {
      scenarios.push({
        type: 'load',
        id: `a-${kind.path}-${byPriceList ? 'price-list' : 'matview'}`,
        title: `(a) ${kind.path}, selective ${filter} substring, ${byPriceList ? 'price-list' : 'matview'} mode`,
        p99Target: 25,
        ratioTarget: 0.85,
        requests: await Promise.all(
          values.map((value) => searchRequest(kind, byPriceList, { [filter]: value.toLowerCase() })),
        ),
      })
    }
  }

  // (b) Unselective searches: no filter, or a two-letter substring of the manufacturer; the exact total.
  for (const kind of [glasses, lenses]) {
    const pieces = await twoLetterPieces(read, kind, 'manufacturer')
    const filters: FilterValues[] = [{}, ...pieces.map((piece) => ({ manufacturer: piece }))]
    scenarios.push({
      type: 'load',
      id: `b-${kind.path}`,
      title: `(b) ${kind.path}, unselective: no filter or a two-letter manufacturer substring, pages 0–4`,
      p99Target: 50,
      ratioTarget: 1,
      requests: await Promise.all(
        filters.flatMap((f) => [0, 1, 2, 3, 4].map((page) => searchRequest(kind, false, f, page))),
      ),
    })
  }

  // (c) Lenses by refraction index and diameter; by prescription.
  const pairs = await db.read.executeQuery<{ index: string; diameter: string }>(
    CompiledQuery.raw(
      `SELECT DISTINCT refraction_index::text AS index, diameter::text AS diameter FROM ${lenses.matview}
        WHERE refraction_index IS NOT NULL AND diameter IS NOT NULL ORDER BY 1, 2 LIMIT 40`,
    ),
  )
  scenarios.push({
    type: 'load',
    id: 'c-lenses-index-diameter',
    title: '(c) lenses by refraction index and diameter',
    p99Target: 50,
    requests: await Promise.all(
      pairs.rows.map((pair) =>
        searchRequest(lenses, false, { refractionIndex: Number(pair.index), diameter: Number(pair.diameter) }),
      ),
    ),
  })
  const prescriptions: FilterValues[] = []
  for (let sphere = -8; sphere <= 6; sphere += 1.75) {
    for (const cylinder of [0, -0.75, -2]) prescriptions.push({ sphere, cylinder })
  }
  scenarios.push({
    type: 'load',
    id: 'c-lenses-prescription',
    title: '(c) lenses by prescription (sphere and cylinder)',
    p99Target: 50,
    requests: await Promise.all(prescriptions.map((filters) => searchRequest(lenses, false, filters))),
  })

  // (d) The glass price list: a selective model substring, a brand (a thirtieth of the list), with and without a
  // price band; each sort column both ways.
  const models = await selectiveValues(
    read,
    'glasses_price',
    [['model', 'model']],
    Math.max(1, Math.round(scale / 20_000)),
    Math.max(20, Math.round(scale / 2_000)),
  )
  const brands = await column(read, 'SELECT DISTINCT brand AS value FROM glasses_price ORDER BY 1 LIMIT 10')
  const filters: GlassPriceFilter[] = [
    ...models.values.slice(0, 20).map((model) => ({ model: model.toLowerCase() })),
    ...brands.map((brand) => ({ brand: brand.toLowerCase() })),
    ...brands.map((brand) => ({ brand: brand.toLowerCase(), priceFrom: '5000', priceTo: '15000' })),
  ]
  const sortColumns: SortColumn[] = ['ID', 'PARAMETERS', 'PRICE', 'PURCHASE']
  const listings = await Promise.all(
    filters.flatMap((filter, index) =>
      (['ASC', 'DESC'] as const).map((direction) =>
        listingRequest(filter, sortColumns[index % sortColumns.length] as SortColumn, direction, 0),
      ),
    ),
  )
  scenarios.push({
    type: 'load',
    id: 'd-listing',
    title: '(d) glass price list: a model substring, or a brand with or without a price band; every sort both ways',
    p99Target: 25,
    ratioTarget: 0.85,
    requests: listings,
  })

  // (e) Read by id.
  const ids = await column<number>(read, 'SELECT id AS value FROM glasses_price ORDER BY md5(id::text) LIMIT 500')
  scenarios.push({
    type: 'load',
    id: 'e-read-by-id',
    title: '(e) glass price entry by id',
    p99Target: 25,
    ratioTarget: 0.85,
    requests: ids.map((id) => ({
      http: { method: 'GET', path: `/api/v2/glasses/prices/${id}` },
      floor: async (database: Database) => findGlassPrice(database.primary, String(id)),
    })),
  })

  // (i) Facets of lens searches; suggestions of frame brands.
  const lensSelective = await matviewSelective(read, lenses, scale)
  const facetFilters: FilterValues[] = [
    {},
    ...lensSelective.values.slice(0, 10).map((value) => ({ [lensSelective.filter]: value.toLowerCase() })),
    ...pairs.rows.slice(0, 10).map((pair) => ({ refractionIndex: Number(pair.index) })),
  ]
  scenarios.push({
    type: 'load',
    id: 'i-facets',
    title: '(i) lens facets: no filter, a selective substring, a refraction index',
    p99Target: 50,
    requests: facetFilters.map((filters) => ({
      http: {
        method: 'POST',
        path: `/api/v2/good/nomenclature/search/${lenses.path}/facets`,
        body: { byPriceList: false, ...filters },
      },
      floor: async (database: Database) => searchFacets(database.read, lenses, { byPriceList: false, filters }),
    })),
  })
  const brandNames = await column(
    read,
    `SELECT DISTINCT brand AS value FROM ${glasses.matview} WHERE brand IS NOT NULL`,
  )
  const prefixes = [...new Set(brandNames.map((brand) => brand.slice(0, 3).toLowerCase()))].slice(0, 40)
  scenarios.push({
    type: 'load',
    id: 'i-suggest',
    title: '(i) frame brand suggestions for a typed prefix',
    p99Target: 50,
    requests: prefixes.map((prefix) => ({
      http: {
        method: 'GET',
        path: `/api/v2/good/nomenclature/suggest?kind=glasses&field=brand&byPriceList=false&q=${encodeURIComponent(prefix)}`,
      },
      // What a direct implementation would send: the prefix's values, most frequent first.
      floor: async (database: Database) =>
        sql`SELECT brand AS value, count(*) AS count FROM ${sql.table(glasses.matview)}
            WHERE optics_norm(brand) LIKE optics_norm(${prefix}) || '%'
            GROUP BY brand ORDER BY count(*) DESC, brand LIMIT 10`.execute(database.read),
    })),
  })

  scenarios.push(await bulkChangeScenario(db))
  const readsOf = (prefix: string) =>
    scenarios.flatMap((scenario) =>
      scenario.type === 'load' && !scenario.once && scenario.id.startsWith(prefix)
        ? scenario.requests.map((request) => request.http)
        : [],
    )
  scenarios.push(
    await bulkUnderLoadScenario(db, [...readsOf('a-glasses'), ...readsOf('a-lenses'), ...readsOf('d-listing')]),
  )
  scenarios.push(await writeThenSearchScenario(db))
  scenarios.push(await importScenario(setup))
  scenarios.push(refreshScenario())
  return scenarios
}

/**
 * `fetch`, sent once more when the connection fails before an answer (a kept-alive socket the server closed as it
 * was reused): only for requests whose repetition changes nothing more (a PUT of the same body, a search).
 */
async function idempotentFetch(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init)
  } catch (error) {
    if (!(error instanceof TypeError)) throw error
    return fetch(url, init)
  }
}

/** Price edits, one after another, each followed at once by the search that must show it. */
const WRITES_PER_RUN = 100

/**
 * (j) A price manager's edits: each sets an entry's price, then the price-list search for its model must show the
 * new price in its very next answer (on the service: from the index brought forward by the change, or from SQL;
 * never stale). The floor: the same UPDATE and the same search's SQL, through the driver.
 */
async function writeThenSearchScenario(db: Database): Promise<OneShotScenario> {
  const entries = await db.read.executeQuery<{
    id: string | number
    manufacturer: string
    brand: string
    model: string
    price: string
    purchase: string
  }>(
    CompiledQuery.raw(
      `SELECT id, manufacturer, brand, model, price, purchase FROM glasses_price ORDER BY md5(id::text) LIMIT ${WRITES_PER_RUN * 8}`,
    ),
  )
  const pick = (run: number, index: number, side: number) => {
    const list = entries.rows
    const entry = list[(run * WRITES_PER_RUN * 2 + side * WRITES_PER_RUN + index) % list.length]
    if (!entry) throw new Error('the price list is empty')
    // Whole roubles, a different price each time (and never the one it has).
    const price = Math.round(Number(entry.price)) + 1 + ((run * 7 + index) % 50)
    return { ...entry, id: Number(entry.id), price }
  }
  // The entry's own key as filters: a page of 100 holds every entry matching all three substrings.
  const filtersOf = (entry: { manufacturer: string; brand: string; model: string }) => ({
    manufacturer: entry.manufacturer,
    brand: entry.brand,
    model: entry.model,
  })
  const search = (entry: { manufacturer: string; brand: string; model: string }): SearchRequest => ({
    byPriceList: true,
    filters: filtersOf(entry),
    page: { page: 0, size: 100, sort: [] },
  })
  const shows = (items: readonly Record<string, unknown>[], price: number) =>
    items.some((item) => Number(item.retailPrice) === price)
  return {
    type: 'once',
    id: 'j-write-then-search',
    title: `(j) ${WRITES_PER_RUN} price edits, each followed at once by the price-list search that must show it`,
    ratioTarget: 1.5,
    side: 'http',
    async service({ baseUrl }, run) {
      for (let index = 0; index < WRITES_PER_RUN; index++) {
        const entry = pick(run, index, 0)
        const written = await idempotentFetch(
          `${baseUrl}/api/v2/glasses/prices/${entry.id}`,
          priceEdit(entry, entry.price, Number(entry.purchase)),
        )
        if (written.status !== 200) throw new Error(`PUT answered ${written.status}: ${await written.text()}`)
        const found = await idempotentFetch(`${baseUrl}/api/v2/good/nomenclature/search/glasses?size=100`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ byPriceList: true, ...filtersOf(entry) }),
        })
        const page = (await found.json()) as { content: Record<string, unknown>[] }
        if (!shows(page.content, entry.price))
          throw new Error(`entry ${entry.id}: the next search did not show its price`)
      }
      return WRITES_PER_RUN
    },
    async floor(database, run) {
      for (let index = 0; index < WRITES_PER_RUN; index++) {
        const entry = pick(run, index, 1)
        await sql`UPDATE glasses_price SET price = ${String(entry.price)}::numeric, updated_at = now(), version = version + 1
                  WHERE id = ${entry.id}`.execute(database.primary)
        const queries = buildSearchQuery(database.read as AnyDb, glasses, search(entry), { fenced: true })
        await queries.count.execute()
        const rows = (await queries.page.execute()) as Record<string, unknown>[]
        if (!shows(rows, entry.price)) throw new Error(`entry ${entry.id}: the search did not show its price`)
      }
      return WRITES_PER_RUN
    },
  }
}

/** (f) A bulk change of up to 100,000 entries: retail = purchase × coefficient over a purchase-price band. */
async function bulkChangeScenario(db: Database): Promise<OneShotScenario> {
  const { rows } = await sql<{ count: number; upper: string | null }>`
    SELECT count(*) AS count, max(purchase)::text AS upper FROM (
      SELECT purchase FROM glasses_price WHERE purchase >= 1 ORDER BY purchase
      LIMIT greatest(1, least(100000, (SELECT count(*) / 2 FROM glasses_price)))) band`.execute(db.primary)
  const upper = rows[0]?.upper ?? '1'
  // Each execution, of either side, sets a coefficient other than the previous one's: every entry of the band changes.
  // (Starting from whichever of the two the band holds now, so a run after an earlier one changes rows too.)
  const { rows: holding } = await sql<{ at: boolean }>`
    SELECT coalesce(bool_and(price = round(purchase * 1.5, 0)), false) AS at FROM (
      SELECT price, purchase FROM glasses_price WHERE purchase BETWEEN 1 AND ${upper}::numeric LIMIT 100) sample`.execute(
    db.primary,
  )
  let executions = holding[0]?.at ? 1 : 0
  const coefficient = () => (executions++ % 2 === 0 ? '1.5' : '1.6')
  return {
    type: 'once',
    id: 'f-bulk-change',
    title: `(f) bulk price change of the entries with purchase 1–${upper} (retail = purchase × k, whole roubles)`,
    ratioTarget: 1.5,
    side: 'http',
    async service({ baseUrl }) {
      const response = await sendPurchaseTimesK(String(baseUrl), upper, coefficient())
      if (response.status !== 200) throw new Error(`bulk change answered ${response.status}: ${await response.text()}`)
      return Number(response.headers.get('x-changed-count'))
    },
    floor: (database) => purchaseTimesKFloor(database, upper, coefficient()),
  }
}

/**
 * (g) The lens nomenclature (every SKU) exported to CSV and imported back with `replace`, as `cli import` does;
 * the floor deletes the rows and COPYs the same rows, converted to COPY text beforehand.
 */
async function importScenario(setup: ScenarioSetup): Promise<OneShotScenario> {
  const { db, workDir } = setup
  const csvFile = `${workDir}/lenses-goods.csv`
  const copyFile = `${workDir}/lenses-goods.copy`
  const columns = transferColumns(lenses, 'goods')
  const out = createWriteStream(csvFile)
  const rows = await exportTable(db.read as AnyDb, lenses, 'goods', out)
  out.end()
  await finished(out)

  // The same rows as COPY text, so the floor pays for nothing but the database's work.
  const reader = await openCsv(createReadStream(csvFile))
  const copyOut = createWriteStream(copyFile)
  let header = true
  for await (const batch of reader.batches) {
    const records = header ? batch.slice(1) : batch
    header = false
    const text = copyText(records.map((record) => record.fields.map((field) => (field === '' ? null : field))))
    if (!copyOut.write(text)) await new Promise<void>((resolve) => copyOut.once('drain', () => resolve()))
  }
  copyOut.end()
  await finished(copyOut)

  const importOnce = async (database: Database) => {
    const result = await importCsv(database, lenses, 'goods', createReadStream(csvFile), {
      replace: true,
      rebuildIndexes: true,
      refresh: 'none',
    })
    if (result.problemCount > 0) throw new Error(`the import found problems: ${JSON.stringify(result.problems)}`)
    return result.written
  }
  return {
    type: 'once',
    id: 'g-import',
    title: `(g) import of ${rows.toLocaleString('en-US')} lens SKUs from CSV, replacing the nomenclature`,
    ratioTarget: 1.5,
    side: 'local',
    service: async ({ db: database }) => importOnce(database as Database),
    floor: (database) =>
      database.rawTransaction(async (client) => {
        await client.query(`DELETE FROM ${lenses.skuTable}`)
        return client.copyRows(
          lenses.skuTable,
          columns.map((c) => c.column),
          createReadStream(copyFile, { encoding: 'utf8' }),
        )
      }),
  }
}

/** (h) The lens matview rebuilt as the service does it (CONCURRENTLY, readers undisturbed) against a bare REFRESH. */
function refreshScenario(): OneShotScenario {
  const count = async (database: Database) => {
    const { rows } = await sql<{ count: number }>`SELECT count(*) AS count FROM ${sql.table(lenses.matview)}`.execute(
      database.primary,
    )
    return Number(rows[0]?.count ?? 0)
  }
  return {
    type: 'once',
    id: 'h-refresh',
    title: '(h) refresh of the lens matview: the service’s REFRESH … CONCURRENTLY against a bare REFRESH',
    ratioTarget: 1.5,
    side: 'local',
    async service({ db: database }) {
      await refreshMatview((database as Database).primary, lenses, { concurrently: true })
      return count(database as Database)
    },
    async floor(database) {
      await sql`REFRESH MATERIALIZED VIEW ${sql.table(lenses.matview)}`.execute(database.primary)
      return count(database)
    },
  }
}
