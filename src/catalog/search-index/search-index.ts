import type { FastifyBaseLogger } from 'fastify'
import { CompiledQuery } from 'kysely'
import type { Database, RawClient } from '../../db/database.js'
import { outsideRequest } from '../../db/request-work.js'
import type { GlassPriceListItem } from '../../glass-prices/glass-price-schemas.js'
import type { Page } from '../../http/page.js'
import type { Facets } from '../facets.js'
import type { ItemField, Kind } from '../kind.js'
import { kinds as allKinds, glasses } from '../kinds.js'
import { activeFilters, type FilterValues, type SearchRequest } from '../search-query.js'
import {
  databaseForms,
  facetTables,
  fieldValueCounts,
  type IndexedListing,
  type IndexedSearch,
  listingTable,
  loadMatviewTable,
  loadPriceTable,
  type MatviewTable,
  NotIndexable,
  type PriceTable,
  searchTables,
  warmTables,
} from './kind-index.js'
import type { SearchIndexServed, SearchIndexService } from './service-types.js'
import { asciiNorm, compareCodePoints } from './text.js'

/*
 * The in-memory search index of every kind (kind-index.ts), kept at the database's data versions.
 *
 * Exactness: every search first reads the kind's current versions (one tiny statement, shared by the requests
 * that arrive while the previous one runs; each request uses a read that started after it arrived). The index
 * answers only when it holds exactly those versions; otherwise the request is answered from SQL and the kind is
 * reloaded in the background (one load per kind at a time), so no answer is ever older than the data. A load
 * reads every row of the kind in one snapshot (REPEATABLE READ) together with the versions it shows.
 *
 * The index needs the database to order text in byte order (collation "C" or "C.UTF-8", as PostgreSQL's
 * `ORDER BY` then agrees with code point order): a probe at the first load checks it, and a database that sorts
 * otherwise keeps the index off (logged), every answer coming from SQL.
 */

interface KindVersions {
  readonly dataGeneration: number
  readonly matviewVersion: number
}

interface KindState {
  matview?: MatviewTable
  prices?: PriceTable
  loading?: Promise<void>
}

/** Reads every kind's versions; concurrent callers share one statement that started after they asked. */
class VersionReader {
  readonly #read: () => Promise<Map<string, KindVersions>>
  #running: Promise<Map<string, KindVersions>> | undefined
  #next: Promise<Map<string, KindVersions>> | undefined

  constructor(read: () => Promise<Map<string, KindVersions>>) {
    this.#read = read
  }

  current(): Promise<Map<string, KindVersions>> {
    if (!this.#running) return this.#start()
    // A statement is running, but it may have started before this request: wait for the next one.
    this.#next ??= this.#running.then(
      () => this.#start(),
      () => this.#start(),
    )
    return this.#next
  }

  #start(): Promise<Map<string, KindVersions>> {
    this.#next = undefined
    // Shared by the requests that wait for it: not one request's work (db/request-work.ts).
    const running = outsideRequest(() => this.#read())
    this.#running = running
    const clear = () => {
      if (this.#running === running) this.#running = undefined
    }
    running.then(clear, clear)
    return running
  }
}

/** Strings whose order the probe compares between the database and the index. */
const collationProbe = [
  'a',
  'B',
  'b',
  'A',
  '_',
  '-',
  ' ',
  'a b',
  'ab',
  'Ä',
  'ё',
  'Ж',
  'е',
  'z',
  '1',
  '10',
  '9',
  '\u{1F600}',
  '\uFF21',
]

export class SearchIndex implements SearchIndexService {
  readonly enabled: boolean
  readonly served: SearchIndexServed = { index: 0, sql: 0 }
  readonly #db: Database
  readonly #log: FastifyBaseLogger
  readonly #kinds: readonly Kind[]
  readonly #states = new Map<string, KindState>()
  readonly #versions: VersionReader
  readonly #timezone: string
  #usable: Promise<boolean> | undefined
  #loadedOnce = false
  #warming = false
  #closed = false

  constructor(
    db: Database,
    log: FastifyBaseLogger,
    options: { enabled: boolean; timezone: string; kinds?: readonly Kind[] },
  ) {
    this.enabled = options.enabled
    this.#timezone = options.timezone
    this.#db = db
    this.#log = log
    this.#kinds = options.kinds ?? allKinds
    for (const kind of this.#kinds) this.#states.set(kind.path, {})
    this.#versions = new VersionReader(() => this.#readVersions())
  }

  get loaded(): boolean {
    return !this.enabled || this.#loadedOnce
  }

  /** True while the load started by {@link start} runs: readiness reports the instance not ready meanwhile. */
  get warming(): boolean {
    return this.#warming
  }

  /** Starts loading every kind in the background (the server does, at start). */
  start(): void {
    if (!this.enabled || this.#closed) return
    this.#warming = true
    const started = performance.now()
    this.catchUp()
      .then(() => this.#log.info({ ms: Math.round(performance.now() - started) }, 'search index loaded'))
      .catch((error: unknown) => this.#log.error({ err: error }, 'search index: the first load failed'))
      .finally(() => {
        this.#warming = false
      })
  }

  async catchUp(): Promise<void> {
    if (!this.enabled || this.#closed || !(await this.#checkUsable())) return
    const versions = await this.#readVersions()
    for (const kind of this.#kinds) {
      const state = this.#states.get(kind.path) as KindState
      // A load already running may have read older versions: wait for it, then load again if still behind.
      if (state.loading) await state.loading.catch(() => {})
      const wanted = versions.get(kind.path)
      if (wanted && !this.#current(state, wanted, true)) await this.#load(kind)
    }
    this.#loadedOnce = true
  }

  async close(): Promise<void> {
    this.#closed = true
    await Promise.all([...this.#states.values()].map((state) => state.loading?.catch(() => {})))
  }

  /**
   * The page of a search from the index, or undefined when SQL must answer (index off, not loaded, behind the
   * data, or a filter only SQL can read).
   */
  search(kind: Kind, request: SearchRequest): Promise<Page<Record<string, unknown>> | undefined> {
    return this.#answer(kind, request.byPriceList, request.filters, (tables, norm) =>
      searchTables(kind, tables, request, norm),
    )
  }

  /** The facets of a search body (prescription already read), or undefined when SQL must answer. */
  facets(kind: Kind, byPriceList: boolean, filters: FilterValues): Promise<Facets | undefined> {
    return this.#answer(kind, byPriceList, filters, (tables, norm) =>
      facetTables(kind, tables, byPriceList, filters, norm),
    )
  }

  /** A page of the glass price listing, or undefined when SQL must answer. */
  listing(request: IndexedListing & { readonly timezone: string }): Promise<Page<GlassPriceListItem> | undefined> {
    // The index holds each entry's business day in the configured zone only.
    if (request.timezone !== this.#timezone) return Promise.resolve(this.#bySql())
    const filters = {
      manufacturer: request.filter.manufacturer,
      brand: request.filter.brand,
      model: request.filter.model,
    }
    return this.#answer(glasses, 'listing', filters, (tables, norm) => listingTable(tables.prices, request, norm))
  }

  /** Every value of a text field with its count, shaped by `shape` (kept per data version), or undefined. */
  fieldValues<T>(
    kind: Kind,
    field: ItemField,
    byPriceList: boolean,
    shape: (value: string, count: number) => T,
  ): Promise<readonly T[] | undefined> {
    return this.#answer(kind, byPriceList, {}, (tables) => {
      const values = fieldValueCounts(tables, field, byPriceList, shape)
      if (!values) throw new NotIndexable('no such field in this mode')
      return values
    })
  }

  async #answer<T>(
    kind: Kind,
    reads: boolean | 'listing',
    filters: FilterValues,
    compute: (tables: IndexedSearch, norm: (text: string) => string) => T,
  ): Promise<T | undefined> {
    const state = this.#states.get(kind.path)
    if (!this.enabled || this.#closed || !state) return this.#bySql()
    if (!state.matview || !state.prices) {
      this.#startLoad(kind)
      return this.#bySql()
    }
    const texts = new Set<string>()
    for (const { filter, value } of activeFilters(kind, filters)) {
      if (filter.match === 'substring' && asciiNorm(String(value)) === undefined) texts.add(String(value))
    }
    const [versions, norms] = await Promise.all([
      this.#versions.current(),
      texts.size > 0 ? this.#norms([...texts]) : undefined,
    ])
    const wanted = versions.get(kind.path)
    // Read after the versions: a load that finished meanwhile may already hold them.
    const tables = state.matview && state.prices ? { matview: state.matview, prices: state.prices } : undefined
    if (!wanted || !tables || !this.#fresh(tables, wanted, reads)) {
      this.#startLoad(kind)
      return this.#bySql()
    }
    try {
      const result = compute(tables, (text) => asciiNorm(text) ?? (norms?.get(text) as string))
      this.served.index++
      return result
    } catch (error) {
      if (error instanceof NotIndexable) return this.#bySql()
      throw error
    }
  }

  #bySql(): undefined {
    this.served.sql++
    return undefined
  }

  /** Whether the tables show the versions a search in this mode (or the listing, the price list alone) reads. */
  #fresh(tables: IndexedSearch, wanted: KindVersions, byPriceList: boolean | 'listing'): boolean {
    if (byPriceList === 'listing') return tables.prices.dataGeneration === wanted.dataGeneration
    if (tables.matview.matviewVersion !== wanted.matviewVersion) return false
    if (!byPriceList) return true
    return (
      tables.prices.dataGeneration === wanted.dataGeneration && tables.prices.matviewVersion === wanted.matviewVersion
    )
  }

  #current(state: KindState, wanted: KindVersions, byPriceList: boolean): boolean {
    return (
      !!state.matview &&
      !!state.prices &&
      this.#fresh({ matview: state.matview, prices: state.prices }, wanted, byPriceList)
    )
  }

  #startLoad(kind: Kind): void {
    const state = this.#states.get(kind.path) as KindState
    if (state.loading || this.#closed) return
    // A load serves every request after it: it is nobody's request work (db/request-work.ts).
    outsideRequest(() => this.#checkUsable())
      .then((usable) => (usable ? outsideRequest(() => this.#load(kind)) : undefined))
      .catch((error: unknown) => this.#log.warn({ err: error, kind: kind.path }, 'search index: a load failed'))
  }

  /** Loads what is behind of one kind, in one snapshot; one load per kind at a time. */
  #load(kind: Kind): Promise<void> {
    const state = this.#states.get(kind.path) as KindState
    if (state.loading) return state.loading
    const loading = outsideRequest(() =>
      this.#db.rawTransaction(
        async (client) => {
          await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
          if (this.#db.driver === 'postgres') await client.query('SET LOCAL statement_timeout = 0')
          const versions = await readVersions(client)
          const wanted = versions.get(kind.path)
          if (!wanted || this.#closed) return
          const started = performance.now()
          let matview = state.matview
          if (!matview || matview.matviewVersion !== wanted.matviewVersion) {
            matview = await loadMatviewTable(client, kind, wanted.matviewVersion)
          }
          let prices = state.prices
          if (
            !prices ||
            prices.dataGeneration !== wanted.dataGeneration ||
            prices.matviewVersion !== wanted.matviewVersion
          ) {
            prices = await loadPriceTable(client, kind, wanted.dataGeneration, wanted.matviewVersion, this.#timezone)
          }
          warmTables(kind, { matview, prices }, kind === glasses)
          state.matview = matview
          state.prices = prices
          this.#log.debug(
            { kind: kind.path, rows: matview.rows, entries: prices.rows, ms: Math.round(performance.now() - started) },
            'search index: kind loaded',
          )
        },
        { read: true },
      ),
    ).finally(() => {
      if (state.loading === loading) state.loading = undefined
    })
    state.loading = loading
    return loading
  }

  async #readVersions(): Promise<Map<string, KindVersions>> {
    const rows = await this.#db.read
      .selectFrom('catalog_state')
      .select(['kind', 'data_generation', 'matview_version'])
      .execute()
    return versionsOf(rows)
  }

  async #norms(texts: string[]): Promise<Map<string, string>> {
    const read = this.#db.read
    const forms = await databaseForms(
      {
        query: async <Row>(text: string, parameters?: readonly unknown[]) =>
          (await read.executeQuery<Row>(CompiledQuery.raw(text, [...(parameters ?? [])]))).rows,
      },
      texts,
    )
    return new Map([...forms].map(([text, form]) => [text, form.norm]))
  }

  /** Checks once that the database orders text as the index does (see the header). */
  #checkUsable(): Promise<boolean> {
    this.#usable ??= (async () => {
      const { rows } = await this.#db.rawTransaction(
        async (client: RawClient) => ({
          rows: await client.query<{ ordered: string[] }>(
            'SELECT array_agg(value ORDER BY value) AS ordered FROM unnest($1::text[]) AS value',
            [collationProbe],
          ),
        }),
        { read: true },
      )
      const expected = [...collationProbe].sort(compareCodePoints)
      const actual = rows[0]?.ordered ?? []
      const usable = JSON.stringify(actual) === JSON.stringify(expected)
      if (!usable) {
        this.#log.warn(
          'search index off: the database does not order text in byte order (collation C or C.UTF-8); searches use SQL',
        )
      }
      return usable
    })()
    // A failed probe (the database unreachable) is tried again next time.
    this.#usable.catch(() => {
      this.#usable = undefined
    })
    return this.#usable
  }
}

function versionsOf(
  rows: readonly { kind: string; data_generation: number | string; matview_version: number | string }[],
): Map<string, KindVersions> {
  return new Map(
    rows.map((row) => [
      row.kind,
      { dataGeneration: Number(row.data_generation), matviewVersion: Number(row.matview_version) },
    ]),
  )
}

async function readVersions(client: RawClient): Promise<Map<string, KindVersions>> {
  return versionsOf(
    await client.query<{ kind: string; data_generation: number; matview_version: number }>(
      'SELECT kind, data_generation, matview_version FROM catalog_state',
    ),
  )
}
