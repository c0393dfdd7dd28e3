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
   * Brings every kind's index up to the database's current data version (loading or reloading what is behind);
   * resolves when done. Requests never wait for it: while an index is behind, its requests are answered from SQL.
   */
  catchUp(): Promise<void>
  /** Counters since the start. */
  readonly served: SearchIndexServed
  /** Stops background loads (on close). */
  close(): Promise<void>
}
