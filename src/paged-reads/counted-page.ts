import { buildPage, type Page, type PageRequest, resolveTotal } from '../http/page.js'
import { type ResultCache, SLOW_PAGE_MS } from './result-cache.js'

/*
 * How a page with an exact total is read, for the searches and the glass price listing alike:
 * - A filtered query's total is known first: from the cache at the current data version, or the last total
 *   remembered for it as a hint (no round trip), or else a count. A query matching at most FENCED_MATCHES rows has
 *   its page read fenced: the matches whole, through the filter's index, then sorted. One matching more, in an
 *   order with an index (the natural order), walks that index no further than the matches' number; if that does
 *   not fill the page, the page is read fenced. So no page read walks more rows than match. A page past the end
 *   is answered from the count alone.
 * - Pages of a query matching more than REMEMBERED_PAGE_MATCHES rows (or unfiltered), and pages that once took
 *   longer than SLOW_PAGE_MS, are remembered whole per data version like totals.
 * Caches built without room (RESULT_CACHE=off) are no caches: nothing is remembered and no version is read.
 */

/**
 * At most this many matches are read whole and sorted (see `fenced` of catalog's `buildSearchQuery`): a bitmap scan
 * of the filter's index and a top-N sort, bounded by the matches, a few milliseconds.
 */
export const FENCED_MATCHES = 20_000

/**
 * Above this many matches a search's pages are worth remembering (reading them takes more than a few
 * milliseconds); at most this many, a page is read afresh every time.
 */
export const REMEMBERED_PAGE_MATCHES = 2_000

export interface CountedPageSource<T> {
  /** Whether any filter narrows the rows. */
  readonly filtered: boolean
  /** What identifies the total: the query without its page. */
  readonly countKey: string
  /** What identifies this page: the count key with page, size, order and anything else that shapes it. */
  readonly pageKey: string
  readonly page: PageRequest
  /** Counts the matches; with the data version read in the same statement. */
  readonly count: () => Promise<{ value: number; version: string | null }>
  /** The data version the query reads, now. */
  readonly currentVersion: () => Promise<string | null>
  /**
   * Reads the page's rows, fenced or not, or (`walk`) by walking at most that many rows in the page's order; with
   * the data version they were read at (undefined without rows).
   */
  readonly readRows: (fenced: boolean, walk?: number) => Promise<{ rows: T[]; version: string | null | undefined }>
  /** Whether the page's order has an index to walk (see {@link readCountedPage}). */
  readonly walkable?: boolean
}

export interface PageCaches {
  readonly totals?: ResultCache
  readonly pages?: ResultCache
}

export async function readCountedPage<T>(source: CountedPageSource<T>, caches: PageCaches = {}): Promise<Page<T>> {
  const [totals, pages] = [caches.totals, caches.pages].map((cache) => (cache?.enabled ? cache : undefined))
  const { filtered, countKey, page: request } = source
  const cachedCount = async (at: string | null | undefined) =>
    totals ? totals.getOrCompute(countKey, at, source.count) : (await source.count()).value

  let total: number | undefined
  let version: string | null | undefined
  let matches = filtered ? totals?.hint<number>(countKey) : undefined
  if (filtered && matches === undefined) {
    version = totals ? await source.currentVersion() : undefined
    total = await cachedCount(version)
    matches = total
    if (request.page * request.size >= total) return buildPage([], request, total)
  }
  const fenced = matches !== undefined && matches <= FENCED_MATCHES

  const readPage = async (): Promise<{ value: Page<T>; version: string | null }> => {
    let read: { rows: T[]; version: string | null | undefined } | undefined
    if (!fenced && source.walkable && matches !== undefined) {
      // Walk the order's index, but no further than there are matches: a full page found is the page; else the
      // matches cluster late in the order, and the fenced read of them costs what their count costs.
      read = await source.readRows(false, matches)
      if (read.rows.length < request.size) read = undefined
    }
    const { rows, version: rowsVersion } = read ?? (await source.readRows(fenced || matches !== undefined))
    const readAt = rowsVersion ?? version ?? (totals ? await source.currentVersion() : null)
    const pageTotal =
      total ??
      (filtered ? await cachedCount(readAt) : await resolveTotal(request, rows.length, () => cachedCount(readAt)))
    return { value: buildPage(rows, request, pageTotal), version: readAt }
  }
  const slowKey = JSON.stringify(['slow page', countKey])
  const few = matches !== undefined && matches <= REMEMBERED_PAGE_MATCHES && !pages?.hint(slowKey)
  if (few || !pages) {
    const started = performance.now()
    const { value } = await readPage()
    if (pages && performance.now() - started > SLOW_PAGE_MS) pages.setHint(slowKey, true)
    return value
  }
  version ??= await source.currentVersion()
  return pages.getOrCompute(source.pageKey, version, readPage)
}
