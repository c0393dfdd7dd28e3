import type { GlassPriceListItem } from '../../glass-prices/glass-price-schemas.js'
import type { Page } from '../../http/page.js'
import type { IndexedListing } from './glass-listing.js'

/*
 * What the rest of the service sees of the in-memory search index (see search-index.ts): whether it is on, a way
 * to wait until it holds the database's current data, and how many answers it gave; and the glass price listing's
 * answer (the searches' answers are the ones catalog's search asks for, index-answers.ts).
 */

export interface SearchIndexServed {
  /** Answers given from the index. */
  index: number
  /** Answers given from SQL because the index was off, loading or behind the data. */
  sql: number
  /** Of the answers from the index, those the search threads beside its own gave (SEARCH_THREADS). */
  threads: number
}

export interface SearchIndexLoads {
  /** Tables read in full from the database (first loads, and catch-ups the change log could not cover). */
  read: number
  /** Tables brought to a later data version by the rows that changed alone. */
  changes: number
  /** Kinds whose tables came from their snapshot file at start (snapshot.ts) rather than read in full. */
  restored: number
}

export interface SearchIndexService {
  /** False with `SEARCH_INDEX=off`: every answer comes from SQL. */
  readonly enabled: boolean
  /** True once every kind's index has been loaded once (or when the index is off). */
  readonly loaded: boolean
  /** True while the first load, started with the server, runs: readiness reports the instance not ready. */
  readonly warming: boolean
  /** Starts loading every kind in the background (the server calls it before it listens). */
  start(): void
  /**
   * Settles once every kind answers from the index restored from its snapshot file, as soon as one has to be read
   * from the database instead (a first start), when the load fails, or after `withinMs`: what a start waits for
   * before it listens, so a restart's first requests find the index.
   */
  restored(withinMs: number): Promise<void>
  /**
   * Brings every kind's index up to the database's current data version (loading what is behind, by the changed
   * rows where the change log covers them); resolves when done. A request whose kind is behind by logged changes
   * waits briefly for them; otherwise, and past that wait, it is answered from SQL.
   */
  catchUp(): Promise<void>
  /** Counters since the start. */
  readonly served: SearchIndexServed
  readonly loads: SearchIndexLoads
  /** Where the index stands (readiness shows it). */
  readonly status: SearchIndexStatus
  /** Stops background loads (on close). */
  close(): Promise<void>
  /**
   * The JavaScript heap each of the index's threads uses, in bytes, by thread (`index`, `search-1`, …); empty where
   * the index runs on no thread of its own.
   */
  threadHeaps?(): Promise<Record<string, number>>
}

/** The glass price listing's answer from the index: undefined where SQL must answer instead. */
export interface ListingIndexAnswers {
  /** A page of the glass price listing. */
  listing(request: IndexedListing & { readonly timezone: string }): Promise<Page<GlassPriceListItem> | undefined>
}

/** What readiness shows of the index: its state, and per kind whether it is held and what is being read. */
export interface SearchIndexStatus {
  readonly state: 'off' | 'loading' | 'loaded' | 'failed'
  /** The kinds whose tables are held now. */
  readonly kindsLoaded: number
  readonly kinds: number
  /** The kinds whose tables are being read in full now (answered from SQL meanwhile). */
  readonly reading: readonly string[]
}
