import { LRUCache } from 'lru-cache'

/*
 * Results that are costly to compute and depend only on the data a query reads: the exact total of a search or a
 * listing (a count over every matching row), and the like. Matview contents change only at a refresh and price
 * lists only at a write, so such a result is remembered under the data version it was computed at
 * (`dataVersionSql` in catalog-state.ts) and served only to a request that sees that same version.
 *
 * Nothing is ever invalidated by hand: a write or a refresh, by this instance or any other, moves the version in
 * the database, the next request reads the new one in its own statement, and the old entries simply age out of
 * the LRU. So a change is visible to the very next request on every instance, and a cached value is exact.
 */

/** The default number of remembered results (each a small value; a few MB at most). */
export const RESULT_CACHE_ENTRIES = 10_000

export class ResultCache {
  readonly #entries: LRUCache<string, { value: unknown }>

  constructor(maxEntries = RESULT_CACHE_ENTRIES) {
    this.#entries = new LRUCache({ max: Math.max(1, maxEntries) })
  }

  /** The result remembered for `key` at data version `version`, or undefined. */
  get<T>(key: string, version: string | null | undefined): T | undefined {
    if (version === null || version === undefined) return undefined
    return this.#entries.get(`${version}\u0000${key}`)?.value as T | undefined
  }

  /** Remembers `value` for `key` at `version` (the version selected in the statement that computed it). */
  set(key: string, version: string | null | undefined, value: unknown): void {
    if (version === null || version === undefined) return
    this.#entries.set(`${version}\u0000${key}`, { value })
  }

  /**
   * The cached result for `key` at `version`, else `compute()`'s, remembered under the version it reports
   * (which may be newer than `version` if the data moved in between; it is then right for that version).
   */
  async getOrCompute<T>(
    key: string,
    version: string | null | undefined,
    compute: () => Promise<{ value: T; version: string | null }>,
  ): Promise<T> {
    const cached = this.get<T>(key, version)
    if (cached !== undefined) return cached
    const computed = await compute()
    this.set(key, computed.version, computed.value)
    return computed.value
  }

  get size(): number {
    return this.#entries.size
  }
}
