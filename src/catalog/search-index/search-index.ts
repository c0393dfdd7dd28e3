import type { FastifyBaseLogger } from 'fastify'
import type { Database, ReadQuery } from '../../db/database.js'
import { outsideRequest } from '../../db/request-work.js'
import { SharedRead } from '../../db/shared-read.js'
import type { GlassPriceListItem } from '../../glass-prices/glass-price-schemas.js'
import type { Page } from '../../http/page.js'
import type { ItemField, Kind } from '../kinds/kind.js'
import type { Facets } from '../search/facet-fields.js'
import type { SearchIndexAnswers } from '../search/index-answers.js'
import type { ExactFilters, FilterValues, SearchRequest } from '../search/search-query.js'
import type { Suggestion } from '../search/suggestion-ranking.js'
import { applyMatviewChanges, applyPriceChanges, changedIds, patchMatviewTable, patchPriceTable } from './changes.js'
import type { IndexedSearch } from './conditions.js'
import { probeDatabase } from './database-probe.js'
import type { IndexedListing } from './glass-listing.js'
import { type IndexDatabase, indexDatabaseOf } from './index-database.js'
import { firstLoad, type KindVersions, readVersions, StartMoment, settledWithin } from './kind-versions.js'
import {
  type ColumnSpec,
  databaseForms,
  loadMatviewTable,
  loadPriceTable,
  type MatviewTable,
  type PriceTable,
  type PriceTableReader,
  priceColumnSpecs,
} from './load.js'
import { computeAnswer, holdsVersions, localNormOf, type Question, questions, textsToNormalise } from './questions.js'
import type {
  ListingIndexAnswers,
  SearchIndexLoads,
  SearchIndexServed,
  SearchIndexService,
  SearchIndexStatus,
} from './service-types.js'
import type { SnapshotIdentity } from './snapshot.js'
import { type HeldTables, SnapshotKeeper } from './snapshot-keeper.js'
import type { ProbedNorm } from './text.js'
import { warmTablesAnswering } from './warm-up.js'

/*
 * The in-memory search index of the kinds it is given, kept at the database's data versions: per kind, its matview
 * and its price list as tables (load.ts), brought up to date by the changed rows (changes.ts), and searched
 * (conditions.ts, search.ts, kept-orders.ts), counted (facet-counts.ts) and suggested from (field-values.ts) exactly
 * as the SQL of catalog/search does. It names no kind: the kinds, and the readers of their price tables (the glass
 * price listing, glass-listing-reader.ts), are given to it.
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

/** A load of one kind starting to read a table in full, or ending (`done`). */
export interface LoadEvent {
  readonly kind: string
  readonly phase: 'reading' | 'done'
}

/** How long a request waits for its kind to catch up with a few changes before SQL answers it instead. */
const CATCH_UP_WAIT_MS = 250
/** How long a request waits for its kind's tables to be patched by every row read again (patch.ts). */
const PATCH_WAIT_MS = 5_000
/**
 * How long a request for a kind not loaded yet waits for its load, unless the load turns to reading the tables in
 * full (then SQL answers at once). A snapshot restores a kind of a million rows in a fraction of a second
 * (snapshot.ts), a second or so on a busy machine at start, and the request is then answered in milliseconds:
 * waiting for it beats SQL, whose substring searches at that size take seconds. A file of another moment is
 * patched after it (every row read again), which takes as long as {@link PATCH_WAIT_MS} allows.
 */
const RESTORE_WAIT_MS = PATCH_WAIT_MS
/**
 * Beyond this share of a table's rows changed, a load reads every row and keeps what it holds only where each row
 * stayed in place (a change of prices); otherwise it reads the table anew.
 */
const CHANGED_SHARE_LIMIT = 0.125

interface KindState {
  matview?: MatviewTable
  prices?: PriceTable
  loading?: Promise<void>
  /** While a load runs, settles when it starts reading a table in full (requests then go to SQL at once). */
  readingAnew?: Promise<void>
  startReading?: () => void
  /** True while a load reads one of the kind's tables in full. */
  reading?: boolean
  /** The snapshot of the database the tables show (with snapshots on, snapshot.ts). */
  identity?: SnapshotIdentity
  /** Settles when what a restore from the snapshot left to build is built (warm-up.ts). */
  warmed?: Promise<void>
}

export class SearchIndex implements SearchIndexService, SearchIndexAnswers, ListingIndexAnswers {
  readonly enabled: boolean
  readonly served: SearchIndexServed = { index: 0, sql: 0, threads: 0 }
  readonly loads: SearchIndexLoads = { read: 0, changes: 0, restored: 0 }
  readonly #db: IndexDatabase
  readonly #onLoad: ((event: LoadEvent) => void) | undefined
  readonly #onTables: ((kind: Kind, tables: IndexedSearch) => void) | undefined
  readonly #onWarmed: ((kind: Kind, tables: IndexedSearch) => void) | undefined
  readonly #log: FastifyBaseLogger
  readonly #kinds: readonly Kind[]
  /** The listing's reader of a price table, and the kind it reads. */
  readonly #listing: { readonly reader: PriceTableReader; readonly kind: Kind } | undefined
  readonly #states = new Map<string, KindState>()
  /** The kinds' versions: read for each request, or (embedded) kept as of the last committed write. */
  readonly #versions: { current(): Promise<Map<string, KindVersions>> }
  readonly #timezone: string
  /** Where the kinds' tables are kept between runs (snapshot-keeper.ts); undefined: nowhere. */
  readonly #snapshots: SnapshotKeeper | undefined
  #usable: Promise<boolean> | undefined
  /** `optics_norm` of query text computed here where the database agreed (set by the first probe). */
  #probedNorm: ProbedNorm | undefined
  #loadedOnce = false
  /** While the first load runs: settles once it has restored (or read) every kind. */
  #restoring: Promise<void> | undefined
  #warming = false
  /** Settled once every kind is restored, or one is read from the database, or the first load ended (`restored`). */
  readonly #restored = new StartMoment()
  #closed = false

  constructor(
    db: IndexDatabase | Database,
    log: FastifyBaseLogger,
    options: {
      enabled: boolean
      timezone: string
      /** The kinds it indexes. */
      kinds: readonly Kind[]
      /** The glass price listing (glass-listing-reader.ts): a reader of one of the kinds' price tables. */
      listing?: PriceTableReader | undefined
      /** Told when a kind starts reading a table in full and when its load ends. */
      onLoad?: (event: LoadEvent) => void
      /** Told each time a kind's tables are replaced (the search threads' replicas follow, replica.ts). */
      onTables?: (kind: Kind, tables: IndexedSearch) => void
      /** Told when what requests would build of a kind's tables read or restored in full is built (warm-up.ts). */
      onWarmed?: (kind: Kind, tables: IndexedSearch) => void
      /** A directory to keep the kinds' tables in between runs (snapshot.ts). */
      snapshotDir?: string | undefined
      /** How often moved tables are written there (default 10 minutes): a restart after a crash finds them. */
      snapshotEveryMs?: number | undefined
    },
  ) {
    this.enabled = options.enabled
    this.#timezone = options.timezone
    this.#snapshots =
      options.snapshotDir === undefined
        ? undefined
        : new SnapshotKeeper(options.snapshotDir, log, {
            priceColumns: (kind) => this.#priceColumns(kind),
            everyMs: options.snapshotEveryMs,
          })
    this.#db = 'readQuery' in db ? db : indexDatabaseOf(db)
    this.#onLoad = options.onLoad
    this.#onTables = options.onTables
    this.#onWarmed = options.onWarmed
    this.#log = log
    this.#kinds = options.kinds
    const { listing } = options
    const listingKind = listing && this.#kinds.find((kind) => kind.path === listing.kind)
    this.#listing = listing && listingKind ? { reader: listing, kind: listingKind } : undefined
    for (const kind of this.#kinds) this.#states.set(kind.path, {})
    const given = this.#db.currentVersions
    this.#versions = given ? { current: given } : new SharedRead(() => this.#readVersions())
  }

  get status(): SearchIndexStatus {
    const states = [...this.#states.entries()]
    return {
      state: !this.enabled ? 'off' : this.#loadedOnce ? 'loaded' : 'loading',
      kindsLoaded: states.filter(([, state]) => state.matview && state.prices).length,
      kinds: states.length,
      reading: states.filter(([, state]) => state.reading).map(([path]) => path),
    }
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
    if (!this.enabled || this.#closed) {
      this.#restored.settle()
      return
    }
    firstLoad(
      this.#log,
      () => this.catchUp().finally(() => this.#restored.settle()),
      (warming) => {
        this.#warming = warming
      },
    )
  }

  restored(withinMs: number): Promise<void> {
    if (!this.enabled) return Promise.resolve()
    return this.#restored.within(withinMs)
  }

  async catchUp(): Promise<void> {
    if (!this.enabled || this.#closed || !(await this.#checkUsable())) return
    const versions = await this.#readVersions()
    // The first time, restored kinds are warmed once every kind is restored, so no warm-up delays a restore.
    let restored: (() => void) | undefined
    if (!this.#loadedOnce && !this.#restoring) {
      this.#restoring = new Promise((resolve) => {
        restored = resolve
      })
    }
    for (const kind of this.#kinds) {
      const state = this.#states.get(kind.path) as KindState
      // A load already running may have read older versions: wait for it, then load again if still behind.
      if (state.loading) await state.loading.catch(() => {})
      const wanted = versions.get(kind.path)
      if (wanted && !this.#current(state, wanted, true)) await this.#load(kind)
    }
    if (restored) {
      restored()
      this.#restoring = undefined
    }
    // Restored kinds answer while they are warmed: loaded once every warm-up has ended.
    await Promise.all([...this.#states.values()].map((state) => state.warmed))
    if (!this.#loadedOnce) {
      this.#loadedOnce = true
      // Kept at once and then every few minutes, so a restart after a crash starts from them too.
      if (this.#snapshots && !this.#closed) {
        void outsideRequest(() => this.#snapshots?.write(this.#held))
        this.#snapshots.keepWriting(() => outsideRequest(() => this.#held()))
      }
    }
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#snapshots?.stop()
    await Promise.all([...this.#states.values()].map((state) => state.loading?.catch(() => {})))
    await this.#snapshots?.write(this.#held)
  }

  /** Each kind's tables with the snapshot of the database they show, for its snapshot file. */
  readonly #held = (): [Kind, HeldTables][] =>
    this.#kinds.flatMap((kind) => {
      const { matview, prices, identity } = this.#states.get(kind.path) as KindState
      return matview && prices && identity ? [[kind, { matview, prices, identity }] as [Kind, HeldTables]] : []
    })

  /**
   * The page of a search from the index, or undefined when SQL must answer (index off, not loaded, behind the
   * data, or a filter only SQL can read).
   */
  search(kind: Kind, request: SearchRequest): Promise<Page<Record<string, unknown>> | undefined> {
    return this.#answer(questions.search(kind, request)) as Promise<Page<Record<string, unknown>> | undefined>
  }

  /** The facets of a search body (prescription already read), or undefined when SQL must answer. */
  facets(kind: Kind, byPriceList: boolean, filters: FilterValues, exact?: ExactFilters): Promise<Facets | undefined> {
    return this.#answer(questions.facets(kind, byPriceList, filters, exact)) as Promise<Facets | undefined>
  }

  /** A page of the glass price listing, or undefined when SQL must answer. */
  listing(request: IndexedListing & { readonly timezone: string }): Promise<Page<GlassPriceListItem> | undefined> {
    // The index holds each entry's business day in the configured zone only.
    const listing = this.#listing
    if (!listing || request.timezone !== this.#timezone) return Promise.resolve(this.#bySql())
    return this.#answer(questions.listing(listing.kind, request)) as Promise<Page<GlassPriceListItem> | undefined>
  }

  /** The best `limit` suggestions for a normalised query, or undefined when SQL must answer. */
  suggestions(
    kind: Kind,
    field: ItemField,
    byPriceList: boolean,
    query: string,
    limit: number,
  ): Promise<Suggestion[] | undefined> {
    return this.#answer(questions.suggestions(kind, field, byPriceList, query, limit)) as Promise<
      Suggestion[] | undefined
    >
  }

  /** `optics_norm` as the probe found the database computes it, for the search threads (replica.ts). */
  get probedNorm(): ProbedNorm | undefined {
    return this.#probedNorm
  }

  async #answer<T>(question: Question<T>): Promise<T | undefined> {
    const { kind, reads } = question
    const state = this.#states.get(kind.path)
    if (!this.enabled || this.#closed || !state) return this.#bySql()
    if (!state.matview || !state.prices) {
      const loading = this.#startLoad(kind)
      if (loading) await this.#waitFor(loading, state, RESTORE_WAIT_MS)
      if (!state.matview || !state.prices) return this.#bySql()
    }
    const localNorm = localNormOf(this.#probedNorm)
    const texts = textsToNormalise(question, localNorm)
    const [versions, norms] = await Promise.all([
      this.#versions.current(),
      texts.size > 0 ? this.#norms([...texts]) : undefined,
    ])
    const wanted = versions.get(kind.path)
    if (!wanted) return this.#bySql()
    // Read after the versions: a load that finished meanwhile may already hold them.
    let tables = this.#tables(state)
    if (!tables || !holdsVersions(tables, wanted, reads)) {
      const loading = this.#startLoad(kind)
      if (loading) {
        // A few changes are applied in milliseconds; every row read again and patched takes a second or two at a
        // million rows, which SQL's substring searches at that size would take too, on the cores the load needs.
        // A load that turns to reading a table anew sends the request to SQL at once (`readingAnew`).
        await this.#waitFor(loading, state, this.#incremental(state, wanted) ? CATCH_UP_WAIT_MS : PATCH_WAIT_MS)
        tables = this.#tables(state)
      }
      if (!tables || !holdsVersions(tables, wanted, reads)) return this.#bySql()
    }
    const result = computeAnswer(question, tables, (text) => localNorm(text) ?? (norms?.get(text) as string))
    if (result === undefined) return this.#bySql()
    this.served.index++
    return result
  }

  /** Waits for a load until it ends, turns to reading a table in full (`readingAnew`), or `ms` pass. */
  #waitFor(loading: Promise<void>, state: KindState, ms: number): Promise<void> {
    return settledWithin(state.readingAnew ? [loading, state.readingAnew] : [loading], ms)
  }

  #tables(state: KindState): IndexedSearch | undefined {
    return state.matview && state.prices ? { matview: state.matview, prices: state.prices } : undefined
  }

  /** Whether the change log lets a load bring what this kind holds to `wanted` by the changes alone. */
  #incremental(state: KindState, wanted: KindVersions): boolean {
    const log = wanted.changesFrom
    if (log === null || !state.prices || !state.matview) return false
    const prices = state.prices.dataGeneration >= wanted.dataGeneration || state.prices.dataGeneration >= log
    const matview = state.matview.matviewVersion >= wanted.matviewVersion || state.matview.refreshedGeneration >= log
    return prices && matview
  }

  #bySql(): undefined {
    this.served.sql++
    return undefined
  }

  #current(state: KindState, wanted: KindVersions, byPriceList: boolean): boolean {
    const tables = this.#tables(state)
    return !!tables && holdsVersions(tables, wanted, byPriceList)
  }

  #startLoad(kind: Kind): Promise<void> | undefined {
    const state = this.#states.get(kind.path) as KindState
    if (this.#closed) return undefined
    if (state.loading) return state.loading
    this.#expectLoad(state)
    // A load serves every request after it: it is nobody's request work (db/request-work.ts).
    const loading = outsideRequest(() => this.#checkUsable()).then((usable) =>
      usable ? outsideRequest(() => this.#load(kind)) : undefined,
    )
    loading.catch((error: unknown) => this.#log.warn({ err: error, kind: kind.path }, 'search index: a load failed'))
    return loading
  }

  /** A fresh `readingAnew` for the load about to start. */
  #expectLoad(state: KindState): void {
    state.readingAnew = new Promise((resolve) => {
      state.startReading = resolve
    })
  }

  /**
   * Brings one kind to the versions of one snapshot; one load per kind at a time. A table the change log covers
   * since its version, with few rows changed, takes the changed rows alone (see merge.ts); otherwise every row is
   * read again and patched in where none came, went or moved (patch.ts); failing that, it is read anew.
   */
  #load(kind: Kind): Promise<void> {
    const state = this.#states.get(kind.path) as KindState
    if (state.loading) return state.loading
    if (!state.startReading) this.#expectLoad(state)
    const loading = outsideRequest(() =>
      this.#db.rawTransaction(
        async (client) => {
          await client.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
          if (this.#db.driver === 'postgres') await client.query('SET LOCAL statement_timeout = 0')
          const versions = await readVersions((text, parameters) => client.query(text, parameters))
          const wanted = versions.get(kind.path)
          if (!wanted || this.#closed) return
          // A snapshot older than what is held (a standby read as it stands while the primary is away): keep it.
          if (
            (state.matview && state.matview.matviewVersion > wanted.matviewVersion) ||
            (state.prices && state.prices.dataGeneration > wanted.dataGeneration)
          ) {
            return
          }
          const started = performance.now()
          const log = wanted.changesFrom
          let how: 'none' | 'changes' | 'read' | 'restored' = 'none'
          let matview = state.matview
          let prices = state.prices
          const identity = await this.#snapshots?.identity(client, kind, wanted)
          if (identity && !matview && !prices) {
            ;({ matview, prices } = await (this.#snapshots as SnapshotKeeper).restore(client, kind, identity, wanted))
            if (matview && prices) {
              how = 'restored'
              this.loads.restored++
            }
          }
          if (!matview || matview.matviewVersion !== wanted.matviewVersion) {
            let next: MatviewTable | undefined
            if (matview) {
              let changed: { entries: number[]; skus: number[] } | undefined
              if (log !== null && matview.refreshedGeneration >= log) {
                const since = matview.refreshedGeneration
                changed = {
                  entries: await changedIds(client, kind, 'p', since, wanted.dataGeneration),
                  skus: await changedIds(client, kind, 's', since, wanted.dataGeneration),
                }
              }
              next =
                changed && changed.entries.length + changed.skus.length <= matview.rows * CHANGED_SHARE_LIMIT
                  ? await applyMatviewChanges(client, kind, matview, changed, wanted, prices)
                  : await patchMatviewTable(client, kind, matview, wanted, prices)
            }
            if (next) {
              matview = next
              how = 'changes'
              this.loads.changes++
            } else {
              this.#readAnew(kind, state)
              matview = await loadMatviewTable(client, kind, wanted)
              how = 'read'
              this.loads.read++
            }
          }
          if (!prices || prices.dataGeneration !== wanted.dataGeneration) {
            let next: PriceTable | undefined
            if (prices) {
              const changed =
                log !== null && prices.dataGeneration >= log
                  ? await changedIds(client, kind, 'p', prices.dataGeneration, wanted.dataGeneration)
                  : undefined
              const columns = this.#priceColumns(kind)
              const generation = wanted.dataGeneration
              next =
                changed && changed.length <= prices.rows * CHANGED_SHARE_LIMIT
                  ? await applyPriceChanges(client, kind, prices, changed, generation, columns, matview)
                  : await patchPriceTable(client, kind, prices, generation, columns, matview)
            }
            if (next) {
              prices = next
              if (how !== 'read') how = 'changes'
              this.loads.changes++
            } else {
              this.#readAnew(kind, state)
              prices = await loadPriceTable(client, kind, wanted.dataGeneration, this.#priceColumns(kind))
              how = 'read'
              this.loads.read++
            }
          }
          state.matview = matview
          state.prices = prices
          state.identity = identity
          if (how !== 'none') this.#onTables?.(kind, { matview, prices })
          if (how === 'restored') {
            // Loaded as far as readiness tells (no table was read in full, so the end is not told below).
            this.#onLoad?.({ kind: kind.path, phase: 'done' })
            if (this.status.kindsLoaded === this.#kinds.length) this.#restored.settle()
          }
          // Read or restored, the tables answer at once; what requests would build on first use is built between
          // the answers (at the first load, once every kind is loaded). After changes, what requests use is carried
          // over, the rest built on first use: most of what a warm-up builds would not be read before the next.
          if (how === 'read' || how === 'restored') {
            const tables = { matview, prices }
            const held = () => state.matview === tables.matview && state.prices === tables.prices && !this.#closed
            state.warmed = (this.#restoring ?? Promise.resolve())
              .then(() => warmTablesAnswering(kind, tables, this.#readerOf(kind), held))
              .then(() => {
                if (held()) this.#onWarmed?.(kind, tables)
              })
              .catch((error: unknown) =>
                this.#log.warn({ err: error, kind: kind.path }, 'search index: a warm-up failed'),
              )
          }
          this.#log.debug(
            {
              kind: kind.path,
              how,
              rows: matview.rows,
              entries: prices.rows,
              ms: Math.round(performance.now() - started),
            },
            'search index: kind loaded',
          )
        },
        { read: true },
      ),
    ).finally(() => {
      if (state.reading) {
        state.reading = false
        this.#onLoad?.({ kind: kind.path, phase: 'done' })
      }
      if (state.loading === loading) {
        state.loading = undefined
        state.startReading = undefined
      }
    })
    state.loading = loading
    return loading
  }

  /** The reader of the kind's price table beyond its search (the listing's), if any. */
  #readerOf(kind: Kind): PriceTableReader | undefined {
    return this.#listing?.kind === kind ? this.#listing.reader : undefined
  }

  /** The columns the index keeps of the kind's price table: the kind's, and its reader's. */
  #priceColumns(kind: Kind): ColumnSpec[] {
    return priceColumnSpecs(kind, this.#timezone, this.#readerOf(kind)?.columns)
  }

  /** A load starts reading one of the kind's tables in full: requests go to SQL at once, and the host is told. */
  #readAnew(kind: Kind, state: KindState): void {
    this.#restored.settle() // a table read in full takes seconds: a start waiting for the index listens now
    state.startReading?.()
    if (state.reading) return
    state.reading = true
    this.#onLoad?.({ kind: kind.path, phase: 'reading' })
  }

  /** One statement on the read connections (the replica's when one is configured). */
  readonly #readQuery: ReadQuery = (text, parameters) => this.#db.readQuery(text, parameters)

  #readVersions(): Promise<Map<string, KindVersions>> {
    return readVersions(this.#readQuery)
  }

  async #norms(texts: string[]): Promise<Map<string, string>> {
    const forms = await databaseForms({ query: this.#readQuery }, texts)
    return new Map([...forms].map(([text, form]) => [text, form.norm]))
  }

  /** Checks once that the database orders text as the index does (see the header). */
  #checkUsable(): Promise<boolean> {
    this.#usable ??= probeDatabase(this.#db, this.#log).then((probed) => {
      this.#probedNorm = probed
      return probed !== undefined
    })
    // A failed probe (the database unreachable) is tried again next time.
    this.#usable.catch(() => {
      this.#usable = undefined
    })
    return this.#usable
  }
}
