import { buildPage, type Page } from '../../http/page.js'
import type { Kind } from '../kinds/kind.js'
import { resolveSort, type SearchRequest } from '../search/search-query.js'
import { fieldColumn, filterConditions, type IndexedSearch } from './conditions.js'
import { hasKeptOrder, type KeySpec, keysOf, sortedPermutation } from './kept-orders.js'
import { matchRows, sortedWindow, withRowFlags } from './matching.js'
import type { Table } from './table.js'

/*
 * A page of a search from a kind's tables, exactly as search-query.ts computes it in SQL: the same rows, the same
 * order, the same total.
 */

/**
 * A page of a search, from the tables. `norm` gives `optics_norm` of a filter's text (the caller has it from the
 * database where the text is not ASCII). Throws {@link NotIndexable} where only SQL can answer.
 */
export function searchTables(
  kind: Kind,
  tables: IndexedSearch,
  request: SearchRequest,
  norm: (text: string) => string,
): Page<Record<string, unknown>> {
  const { byPriceList } = request
  const table: Table = byPriceList ? tables.prices : tables.matview
  const conditions = filterConditions(kind, tables, byPriceList, request.filters, norm, request.exact).flatMap(
    (f) => f.conditions,
  )
  const sorted = resolveSort(kind, request.page.sort)
  const { page, size } = request.page
  const from = page * size
  const matches = conditions.length > 0 ? matchRows(table, conditions, true) : undefined
  const total = matches ? matches.length : table.rows

  let window: Uint32Array
  if (from >= total) window = new Uint32Array(0)
  else if (sorted.length === 0) {
    // The stored order is the natural order.
    const to = Math.min(from + size, total)
    if (matches) window = matches.subarray(from, to)
    else {
      window = new Uint32Array(to - from)
      for (let index = 0; index < window.length; index++) window[index] = from + index
    }
  } else {
    const specs: KeySpec[] = []
    for (const { field, order } of sorted) {
      const column = fieldColumn(table, field, byPriceList)
      if (!column) continue
      const ignoreCase = order.ignoreCase && field.type === 'text'
      specs.push({ column: column.name, descending: order.direction === 'desc', ignoreCase, norm: false })
    }
    window = sortedPage(table, matches, specs, from, from + size)
  }

  const fields = kind.itemFields.map((field) => ({ name: field.name, column: fieldColumn(table, field, byPriceList) }))
  const content: Record<string, unknown>[] = []
  for (let index = 0; index < window.length; index++) {
    const row = window[index] as number
    const item: Record<string, unknown> = {}
    for (const { name, column } of fields) item[name] = column ? column.json[column.codes[row] as number] : null
    content.push(item)
  }
  return buildPage(content, request.page, total)
}

/**
 * The matches (all rows: undefined) at positions `from` … `to` - 1 in the order of `specs`, then the tiebreak
 * (descending with `tieDescending`). Few matches are sorted alone (buckets by rank); many walk the table's rows in
 * that order (kept per table and order, sorted on first use) until the page is full. Up to half the table, matches
 * are sorted alone while that order has not been asked for yet: sorting a million rows by a rare key takes tens of
 * milliseconds, the matches' buckets a few.
 */
export function sortedPage(
  table: Table,
  matches: Uint32Array | undefined,
  specs: readonly KeySpec[],
  from: number,
  to: number,
  tieDescending = false,
): Uint32Array {
  const limit = hasKeptOrder(table, specs, tieDescending) ? table.rows / 8 : table.rows / 2
  if (matches && matches.length <= limit) {
    return sortedWindow(table, matches, keysOf(table, specs), from, to, tieDescending)
  }
  const order = sortedPermutation(table, specs, tieDescending)
  return matches ? walk(order, matches, table.rows, from, to) : order.subarray(from, Math.min(to, order.length))
}

/** The matches at positions `from` … `to` - 1 of `order` (every row of the table, in some order). */
export function walk(order: Uint32Array, matches: Uint32Array, rows: number, from: number, to: number): Uint32Array {
  return withRowFlags(matches, rows, (member) => {
    const found: number[] = []
    let seen = 0
    for (let index = 0; index < order.length && seen < to; index++) {
      const row = order[index] as number
      if (!member[row]) continue
      if (seen >= from) found.push(row)
      seen++
    }
    return Uint32Array.from(found)
  })
}
