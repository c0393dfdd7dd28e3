import { LRUCache } from 'lru-cache'
import { WorkAbandonedError } from '../db/request-work.js'
import { heapBytes, stringBytes } from './heap-size.js'

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

/** Default bound of the totals, facets and suggestions remembered (`RESULT_CACHE_MB`), in bytes. */
const RESULT_CACHE_BYTES = 16 * 1024 * 1024

/** No one result may take more than this share of its cache, so one huge page never flushes everything else. */
const LARGEST_ENTRY_SHARE = 1 / 8

/**
 * A page that took longer than this to read is remembered from then on, however few rows its search matches
 * (a filter no index serves, such as a two-letter substring, scans the table).
 */
export const SLOW_PAGE_MS = 25

/** A remembered value and its heap bytes (with its key), measured once when it is remembered. */
interface Entry {
  readonly value: unknown
  readonly bytes: number
}

const entry = (key: string, value: unknown): Entry => ({ value, bytes: stringBytes(key) + heapBytes(value) + 64 })

export class ResultCache {
  readonly #entries: LRUCache<string, Entry>
  /** The latest value remembered for each key, whatever its version: a hint, never an answer. */
  readonly #latest: LRUCache<string, Entry>
  /** Computations under way, so concurrent requests for one uncached result share one query. */
  readonly #pending = new Map<string, Promise<{ value: unknown; version: string | null }>>()

  /** False when built with no room (`RESULT_CACHE=off`): nothing is remembered, every result is computed. */
  readonly enabled: boolean

  /**
   * `maxBytes` bounds the heap the remembered results hold, as {@link heapBytes} measures them (the hints, small,
   * get a tenth of it on top); 0 remembers nothing.
   */
  constructor(readonly maxBytes = RESULT_CACHE_BYTES) {
    this.enabled = maxBytes > 0
    const bounded = (bytes: number) => {
      const maxSize = Math.max(1024, Math.floor(bytes))
      return new LRUCache<string, Entry>({
        maxSize,
        maxEntrySize: Math.max(1024, Math.floor(maxSize * LARGEST_ENTRY_SHARE)),
        sizeCalculation: (remembered) => remembered.bytes,
      })
    }
    this.#entries = bounded(maxBytes)
    this.#latest = bounded(maxBytes / 10)
  }

  /**
   * The value last remembered for `key` at any version. Not an answer (the data may have moved since), only a
   * hint for choosing how to compute one: a search's last known total tells whether it is selective.
   */
  hint<T>(key: string): T | undefined {
    return this.#latest.get(key)?.value as T | undefined
  }

  /** Leaves a hint for `key` without remembering a result (see {@link hint}). */
  setHint(key: string, value: unknown): void {
    if (this.enabled) this.#latest.set(key, entry(key, value))
  }

  /** The result remembered for `key` at data version `version`, or undefined. */
  get<T>(key: string, version: string | null | undefined): T | undefined {
    if (version === null || version === undefined) return undefined
    return this.#entries.get(`${version}\u0000${key}`)?.value as T | undefined
  }

  /** Remembers `value` for `key` at `version` (the version selected in the statement that computed it). */
  set(key: string, version: string | null | undefined, value: unknown): void {
    if (version === null || version === undefined || !this.enabled) return
    const slot = `${version}\u0000${key}`
    this.#entries.set(slot, entry(slot, value))
    // Hints are totals and flags; a whole page kept as a hint would outlive its eviction from the results.
    if (typeof value !== 'object' || value === null) this.#latest.set(key, entry(key, value))
  }

  /**
   * The cached result for `key` at `version`, else `compute()`'s, remembered under the version it reports
   * (which may be newer than `version` if the data moved in between; it is then right for that version).
   * Requests arriving while the same key is computed at the same version wait for that computation instead of
   * starting their own (sixteen users opening the unfiltered search after a refresh cost one count, not sixteen).
   */
  async getOrCompute<T>(
    key: string,
    version: string | null | undefined,
    compute: () => Promise<{ value: T; version: string | null }>,
  ): Promise<T> {
    const cached = this.get<T>(key, version)
    if (cached !== undefined) return cached
    if (version === null || version === undefined || !this.enabled) {
      const computed = await compute()
      this.set(key, computed.version, computed.value)
      return computed.value
    }
    const slot = `${version}\u0000${key}`
    const shared = this.#pending.get(slot)
    if (shared) {
      try {
        return (await shared).value as T
      } catch (error) {
        // The request that computed it was given up (its work cancelled): this one computes its own.
        if (!(error instanceof WorkAbandonedError)) throw error
        const computed = await compute()
        this.set(key, computed.version, computed.value)
        return computed.value
      }
    }
    const pending = compute()
    this.#pending.set(slot, pending)
    pending
      .then((computed) => this.set(key, computed.version, computed.value))
      .catch(() => {})
      .finally(() => this.#pending.delete(slot))
    return (await pending).value as T
  }

  get size(): number {
    return this.#entries.size
  }

  /** Heap bytes the remembered results hold now, as measured when each was remembered (at most `maxBytes`). */
  get bytes(): number {
    return this.#entries.calculatedSize
  }
}
