/*
 * What the rest of the service sees of the in-memory search index (see search-index.ts): whether it is on, a way
 * to wait until it holds the database's current data, and how many answers it gave.
 */

export interface SearchIndexServed {
  /** Answers given from the index. */
  index: number
  /** Answers given from SQL because the index was off, loading or behind the data. */
  sql: number
}

export interface SearchIndexLoads {
  /** Tables read in full from the database (first loads, and catch-ups the change log could not cover). */
  read: number
  /** Tables brought to a later data version by the rows that changed alone. */
  changes: number
}

export interface SearchIndexService {
  /** False with `SEARCH_INDEX=off`: every answer comes from SQL. */
  readonly enabled: boolean
  /** True once every kind's index has been loaded once (or when the index is off). */
  readonly loaded: boolean
  /** True while the first load, started with the server, runs: readiness reports the instance not ready. */
  readonly warming: boolean
  /** Starts loading every kind in the background (the server calls it once it listens). */
  start(): void
  /**
   * Brings every kind's index up to the database's current data version (loading what is behind, by the changed
   * rows where the change log covers them); resolves when done. A request whose kind is behind by logged changes
   * waits briefly for them; otherwise, and past that wait, it is answered from SQL.
   */
  catchUp(): Promise<void>
  /** Counters since the start. */
  readonly served: SearchIndexServed
  readonly loads: SearchIndexLoads
  /** Stops background loads (on close). */
  close(): Promise<void>
}
