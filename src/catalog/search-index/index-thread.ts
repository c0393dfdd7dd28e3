import type { MessagePort, Worker } from 'node:worker_threads'
import type { FastifyBaseLogger } from 'fastify'
import { type Database, type RawClient, readQueryOf } from '../../db/database.js'
import { outsideRequest } from '../../db/request-work.js'
import { SharedRead } from '../../db/shared-read.js'
import { startModuleWorker } from '../../domain/module-worker.js'
import type { GlassPriceListItem } from '../../glass-prices/glass-price-schemas.js'
import type { Page } from '../../http/page.js'
import type { ItemField, Kind } from '../kinds/kind.js'
import { kinds } from '../kinds/kinds.js'
import type { Facets } from '../search/facet-fields.js'
import type { SearchIndexAnswers } from '../search/index-answers.js'
import type { ExactFilters, FilterValues, SearchRequest } from '../search/search-query.js'
import type { Suggestion } from '../search/suggestion-ranking.js'
import type { IndexedListing } from './glass-listing.js'
import {
  crossedError,
  type DatabaseAsk,
  type FromIndex,
  type IndexCall,
  type ToIndex,
  uncrossedError,
} from './index-protocol.js'
import { firstLoad, type KindVersions, readVersions, StartMoment, settledWithin } from './kind-versions.js'
import { logLine, SearchThreads, searchThreadLimits, usedHeap } from './search-threads.js'
import type {
  ListingIndexAnswers,
  SearchIndexLoads,
  SearchIndexServed,
  SearchIndexService,
  SearchIndexStatus,
} from './service-types.js'
import { holdsSnapshots } from './snapshot.js'

/*
 * The search index on a thread of its own (index-worker.ts runs it). Loading a kind at a million rows is tens of
 * seconds of computation (parsing COPY's output, sorting, building postings and n-gram indexes), some steps
 * seconds long in one piece; on the service's thread every request, a health probe included, waited behind them.
 * Here the service's thread only relays: the index's statements and COPY's output to its thread, the requests'
 * questions to it and its answers back. While a kind's table is read in full, the index answers nothing (its
 * thread is busy building), so every request meanwhile is answered from SQL at once, never queued behind the build.
 */

/** What the index's thread is given at its start. */
export interface IndexThreadOptions {
  readonly driver: Database['driver']
  readonly timezone: string
  /** The path of the kind whose price table the glass price listing reads (glass-listing-reader.ts); none: SQL lists. */
  readonly listingKind?: string | undefined
  /**
   * Tests: the first time a table is read in full, the thread holds itself busy this long (as building the tables of a
   * million rows does), to show that the service's thread goes on meanwhile.
   */
  readonly holdFirstReadMs?: number | undefined
  /** Where the kinds' tables are kept between runs (snapshot.ts); none: nowhere. */
  readonly snapshotDir?: string | undefined
  /** The index's ends of the channels to the search threads beside it (search-threads.ts), if any. */
  readonly replicaPorts?: readonly MessagePort[] | undefined
}

/** How much of COPY's output crosses in one message (whole chunks, so a little more). */
const COPY_SLICE_CHARACTERS = 1 << 16
/** How long closing waits for the index's thread to end its loads (and write its snapshots) before it is stopped. */
const CLOSE_WAIT_MS = 10_000

/** Thrown into a relayed transaction the index's thread asked to roll back. */
class RolledBack extends Error {
  override name = 'RolledBack'
}

interface Relayed {
  readonly client: RawClient
  readonly finish: (commit: boolean) => void
  readonly ended: Promise<void>
}

export class SearchIndexThread implements SearchIndexService, SearchIndexAnswers, ListingIndexAnswers {
  readonly enabled = true
  readonly served: SearchIndexServed = { index: 0, sql: 0, threads: 0 }
  readonly loads: SearchIndexLoads = { read: 0, changes: 0, restored: 0 }
  readonly #db: Database
  readonly #log: FastifyBaseLogger
  readonly #workerData: IndexThreadOptions
  #started: Worker | undefined
  readonly #threadCount: number
  /** The search threads beside the index's (started with it), if SEARCH_THREADS asks for more than one. */
  #searchThreads: SearchThreads | undefined
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
  readonly #transactions = new Map<number, Relayed>()
  /** Every relayed transaction not yet ended, opened or still waiting for its connection. */
  readonly #ending = new Set<Promise<void>>()
  readonly #copies = new Map<number, AsyncIterator<string>>()
  readonly #reading = new Set<string>()
  /**
   * The kinds' versions each question is sent with: the embedded database's as of its last committed write, else
   * read (one statement shared by the questions waiting for it).
   */
  readonly #versions: { current(): Promise<Map<string, KindVersions>> }
  #nextId = 1
  #kindsLoaded = 0
  #loadedOnce = false
  #warming = false
  #failed: Error | undefined
  #closed = false
  /** Settled once every kind is restored, or one is read from the database, or the load failed (`restored`). */
  readonly #restored = new StartMoment()

  constructor(
    db: Database,
    log: FastifyBaseLogger,
    options: Omit<IndexThreadOptions, 'driver' | 'replicaPorts'> & {
      /** Threads answering searches in all (SEARCH_THREADS): the index's own and as many search threads beside it less one. */
      readonly threads?: number | undefined
    },
  ) {
    this.#db = db
    this.#log = log
    this.#threadCount = Math.max(1, options.threads ?? 1)
    this.#versions = db.committedRead?.(readVersions) ?? new SharedRead(() => readVersions(readQueryOf(db)))
    this.#workerData = {
      driver: db.driver,
      timezone: options.timezone,
      listingKind: options.listingKind,
      holdFirstReadMs: options.holdFirstReadMs,
      snapshotDir: options.snapshotDir,
    }
  }

  /** The index's thread, started when first asked for (a service that never searches never starts it). */
  get #worker(): Worker {
    if (this.#started) return this.#started
    const { timezone, listingKind } = this.#workerData
    const threads =
      this.#threadCount > 1
        ? new SearchThreads(this.#threadCount - 1, { timezone, listingKind }, this.#log, (at, port) =>
            this.#started?.postMessage({ type: 'search-thread', at, port } satisfies ToIndex, [port]),
          )
        : undefined
    this.#searchThreads = threads
    const ports = threads?.ports ?? []
    const worker = startModuleWorker(import.meta.url, 'index-worker', {
      workerData: { ...this.#workerData, replicaPorts: ports } satisfies IndexThreadOptions,
      transferList: ports,
      resourceLimits: searchThreadLimits,
    })
    // The thread never keeps the process alive by itself; closing the service ends it.
    worker.unref()
    worker.on('message', (message: FromIndex) => this.#received(message))
    worker.on('error', (error) => this.#fail(error))
    worker.on('exit', (code) => {
      if (!this.#closed) this.#fail(new Error(`the search index's thread exited (code ${code})`))
    })
    this.#started = worker
    return worker
  }

  get loaded(): boolean {
    return this.#loadedOnce
  }

  get warming(): boolean {
    return this.#warming
  }

  get status(): SearchIndexStatus {
    return {
      state: this.#failed ? 'failed' : this.#loadedOnce ? 'loaded' : 'loading',
      kindsLoaded: this.#kindsLoaded,
      kinds: kinds.length,
      reading: [...this.#reading],
    }
  }

  start(): void {
    if (this.#closed || this.#failed) return
    firstLoad(
      this.#log,
      () => this.catchUp().finally(() => this.#restored.settle()),
      (warming) => {
        this.#warming = warming
      },
    )
  }

  restored(withinMs: number): Promise<void> {
    // With no file to restore from, every table is read: nothing to wait for.
    const dir = this.#workerData.snapshotDir
    if (!dir || !holdsSnapshots(dir)) return Promise.resolve()
    return this.#restored.within(withinMs)
  }

  async catchUp(): Promise<void> {
    if (this.#closed || this.#failed) return
    await this.#call({ method: 'catchUp' })
    this.#loadedOnce = true
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    if (!this.#started) return
    if (!this.#failed) await settledWithin([this.#call({ method: 'close' })], CLOSE_WAIT_MS)
    // Its end keeps the process alive until it has ended (the thread is unreferenced while idle).
    this.#worker.ref()
    await Promise.all([this.#worker.terminate(), this.#searchThreads?.close()])
    await this.#endRelayed()
  }

  /**
   * Stops search thread `at` (0 for `search-1`) as a crash would: its questions in hand and its share go to the
   * index's thread, and it is started again after a second (a few more at each stop in a row).
   */
  async stopSearchThread(at: number): Promise<void> {
    await this.#searchThreads?.stop(at)
  }

  /** How many search threads run now. */
  get searchThreadsRunning(): number {
    return this.#searchThreads?.running ?? 0
  }

  async threadHeaps(): Promise<Record<string, number>> {
    if (!this.#started || this.#closed) return {}
    const [index, search] = await Promise.all([usedHeap(this.#started), this.#searchThreads?.heaps()])
    return { ...(index === undefined ? {} : { index }), ...search }
  }

  search(kind: Kind, request: SearchRequest): Promise<Page<Record<string, unknown>> | undefined> {
    return this.#answer<Page<Record<string, unknown>>>({ method: 'search', kind: kind.path, request })
  }

  facets(kind: Kind, byPriceList: boolean, filters: FilterValues, exact?: ExactFilters): Promise<Facets | undefined> {
    return this.#answer<Facets>({ method: 'facets', kind: kind.path, byPriceList, filters, exact })
  }

  listing(request: IndexedListing & { readonly timezone: string }): Promise<Page<GlassPriceListItem> | undefined> {
    return this.#answer<Page<GlassPriceListItem>>({ method: 'listing', request })
  }

  suggestions(
    kind: Kind,
    field: ItemField,
    byPriceList: boolean,
    query: string,
    limit: number,
  ): Promise<Suggestion[] | undefined> {
    return this.#answer<Suggestion[]>({
      method: 'suggestions',
      kind: kind.path,
      field: field.name,
      byPriceList,
      query,
      limit,
    })
  }

  /**
   * The index's answer, or undefined (SQL answers) while it is busy reading a table and no search thread holds the
   * kind, stopped, or failed. A search thread that holds the kind at the versions just read answers when it is less
   * busy than the index's thread.
   */
  async #answer<T>(call: IndexCall): Promise<T | undefined> {
    if (this.#closed || this.#failed || (this.#reading.size > 0 && !this.#searchThreads)) {
      this.served.sql++
      return undefined
    }
    let result: unknown
    try {
      const versions = await this.#versions.current()
      const threads = this.#searchThreads
      const kind = call.method === 'listing' ? this.#workerData.listingKind : 'kind' in call ? call.kind : undefined
      const wanted = kind === undefined ? undefined : versions.get(kind)
      const thread = threads && kind && wanted && threads.pick(kind, wanted, this.#pending.size)
      if (thread) {
        const answer = await (threads as SearchThreads).ask(thread, call, wanted as KindVersions)
        if (!answer.behind) {
          if (answer.result === undefined) this.served.sql++
          else {
            this.served.index++
            this.served.threads++
          }
          return answer.result as T | undefined
        }
      }
      if (this.#reading.size > 0) {
        this.served.sql++
        return undefined
      }
      result = await this.#call(call, versions)
    } catch (error) {
      // The thread stopped meanwhile: SQL answers. An error of the answer itself is the request's.
      if (this.#failed || this.#closed) {
        this.served.sql++
        return undefined
      }
      throw error
    }
    if (result === undefined) this.served.sql++
    else this.served.index++
    return result as T | undefined
  }

  #call(call: IndexCall, versions?: Map<string, KindVersions>): Promise<unknown> {
    if (this.#failed) return Promise.reject(this.#failed)
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject })
      const message: ToIndex = { type: 'call', id, ...call, ...(versions ? { versions } : {}) }
      this.#worker.postMessage(message)
    })
  }

  #received(message: FromIndex): void {
    switch (message.type) {
      case 'reply': {
        Object.assign(this.loads, message.loads)
        const waiting = this.#pending.get(message.id)
        this.#pending.delete(message.id)
        if (message.error) waiting?.reject(uncrossedError(message.error))
        else waiting?.resolve(message.result)
        return
      }
      case 'load':
        if (message.phase === 'reading') this.#reading.add(message.kind)
        else this.#reading.delete(message.kind)
        this.#kindsLoaded = message.kindsLoaded
        if (message.phase === 'reading' || message.kindsLoaded === kinds.length) this.#restored.settle()
        return
      case 'log':
        logLine(this.#log, message.line)
        return
      case 'db': {
        const { id } = message
        outsideRequest(() => this.#database(message)).then(
          (result) => this.#worker.postMessage({ type: 'db-reply', id, result } satisfies ToIndex),
          (error: unknown) =>
            this.#worker.postMessage({ type: 'db-reply', id, error: crossedError(error) } satisfies ToIndex),
        )
        return
      }
    }
  }

  /** Runs what the index's thread asks of the database. */
  async #database(ask: DatabaseAsk): Promise<unknown> {
    switch (ask.op) {
      case 'begin':
        return this.#begin(ask.read)
      case 'query':
        return this.#relayed(ask.tx).client.query(ask.text, ask.parameters)
      case 'copy': {
        const iterator = this.#relayed(ask.tx).client.copyOut(ask.query)[Symbol.asyncIterator]()
        const copy = this.#nextId++
        this.#copies.set(copy, iterator)
        return copy
      }
      case 'copy-next': {
        const iterator = this.#copies.get(ask.copy)
        if (!iterator) throw new Error('no such COPY')
        let text = ''
        while (text.length < COPY_SLICE_CHARACTERS) {
          const next = await iterator.next()
          if (next.done) {
            this.#copies.delete(ask.copy)
            return { text, done: true }
          }
          text += next.value
        }
        return { text, done: false }
      }
      case 'copy-close': {
        const iterator = this.#copies.get(ask.copy)
        this.#copies.delete(ask.copy)
        await iterator?.return?.()
        return undefined
      }
      case 'end': {
        const relayed = this.#relayed(ask.tx)
        this.#transactions.delete(ask.tx)
        relayed.finish(ask.commit)
        await relayed.ended.catch((error: unknown) => {
          if (!(error instanceof RolledBack)) throw error
        })
        return undefined
      }
      case 'read':
        return readQueryOf(this.#db)(ask.text, ask.parameters)
    }
  }

  /** Opens a transaction held open for the index's thread until it asks to end it. */
  #begin(read: boolean): Promise<number> {
    const tx = this.#nextId++
    return new Promise((resolve, reject) => {
      const ended: Promise<void> = this.#db.rawTransaction(
        (client) =>
          new Promise<void>((commit, rollback) => {
            // Opened only after the thread stopped (it waited for the connection): nobody will end it but us.
            if (this.#closed || this.#failed) {
              rollback(new RolledBack('the index thread stopped'))
              return
            }
            this.#transactions.set(tx, {
              client,
              finish: (ok) => (ok ? commit() : rollback(new RolledBack('rolled back'))),
              ended,
            })
            resolve(tx)
          }),
        { read },
      )
      this.#ending.add(ended)
      // Failed before it opened (the database unreachable): the thread's load fails with the cause.
      ended
        .catch((error: unknown) => {
          if (!this.#transactions.has(tx)) reject(error)
        })
        .finally(() => this.#ending.delete(ended))
    })
  }

  #relayed(tx: number): Relayed {
    const relayed = this.#transactions.get(tx)
    if (!relayed) throw new Error('no such transaction')
    return relayed
  }

  /** Rolls back what the thread left open (it stopped, or was stopped). */
  async #endRelayed(): Promise<void> {
    for (const iterator of this.#copies.values()) await iterator.return?.().catch(() => {})
    this.#copies.clear()
    const open = [...this.#transactions.values()]
    this.#transactions.clear()
    for (const relayed of open) relayed.finish(false)
    // Those still waiting for the connection roll back as soon as they get it (see #begin): wait for them too, so
    // the connection is free when the database closes.
    await Promise.all([...this.#ending].map((ended) => ended.catch(() => {})))
  }

  #fail(error: Error): void {
    if (this.#failed || this.#closed) return
    this.#failed = error
    this.#restored.settle()
    this.#reading.clear()
    this.#log.error({ err: error }, 'search index: its thread failed; every search is answered from SQL')
    for (const waiting of this.#pending.values()) waiting.reject(error)
    this.#pending.clear()
    void this.#endRelayed()
  }
}
