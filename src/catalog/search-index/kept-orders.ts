import { columnOf } from './conditions.js'
import { Lazy } from './lazy.js'
import { normSortKey, type SortKey, sortKey } from './matching.js'
import { countingPass, sharedUint32, type Table } from './table.js'

/*
 * A table's rows in a requested order, computed once and kept per table (the commonest orders are built at load),
 * and carried over to the table's next version after a write.
 */

/** One key of a sort: a column's values ascending or descending (NULLs last, first), maybe of lower or normal form. */
export interface KeySpec {
  readonly column: string
  readonly descending: boolean
  /** By `lower(value)`. */
  readonly ignoreCase: boolean
  /** By `optics_norm(value) COLLATE "C"`. */
  readonly norm: boolean
}

export function keysOf(table: Table, specs: readonly KeySpec[]): SortKey[] {
  return specs.map((spec) => {
    const column = columnOf(table, spec.column)
    return spec.norm ? normSortKey(column, spec.descending) : sortKey(column, spec.descending, spec.ignoreCase)
  })
}

interface KeptOrder {
  readonly specs: readonly KeySpec[]
  readonly tieDescending: boolean
  /** The table's rows in that order (computed on first use). */
  readonly rows: Lazy<Uint32Array>
}

/** At most this many orders are kept per table (4 bytes a row each). */
// The contract's listing orders both ways and the retail price both ways, with room for a few more (the listing's
// other orders are computed again once pushed out).
const KEPT_ORDERS = 12
const keptOrders = new WeakMap<Table, Map<string, KeptOrder>>()

const orderName = (specs: readonly KeySpec[], tieDescending: boolean) =>
  JSON.stringify([specs.map((spec) => [spec.column, spec.descending, spec.ignoreCase, spec.norm]), tieDescending])

/** Whether the table keeps its rows in that order already ({@link sortedPermutation}). */
export function hasKeptOrder(table: Table, specs: readonly KeySpec[], tieDescending = false): boolean {
  return keptOrders.get(table)?.has(orderName(specs, tieDescending)) ?? false
}

/** The table's rows ordered by `specs` then the tiebreak (descending with `tieDescending`), kept per table. */
export function sortedPermutation(table: Table, specs: readonly KeySpec[], tieDescending = false): Uint32Array {
  const name = orderName(specs, tieDescending)
  const kept = keptOrders.get(table)
  const found = kept?.get(name)
  if (kept && found) {
    kept.delete(name)
    kept.set(name, found)
    return found.rows.get()
  }
  const rows = sortRows(table, specs, tieDescending)
  keep(table, { specs, tieDescending, rows: Lazy.of(rows) })
  return rows
}

/** The table's rows ordered by `specs` then the tiebreak: counting passes from the last key to the first. */
function sortRows(table: Table, specs: readonly KeySpec[], tieDescending: boolean): Uint32Array {
  let order: Uint32Array = tieDescending ? table.rowByTie.slice().reverse() : table.rowByTie
  const rank = new Uint32Array(table.rows)
  const keys = keysOf(table, specs)
  for (let index = keys.length - 1; index >= 0; index--) {
    const { codes, ranks, range } = keys[index] as SortKey
    for (let row = 0; row < table.rows; row++) rank[row] = ranks[codes[row] as number] as number
    order = countingPass(order, rank, range)
  }
  // In shared memory, as the table's own arrays (a search thread reads the order kept here, replica.ts).
  const rows = sharedUint32(table.rows)
  rows.set(order)
  return rows
}

/** The orders kept for the table and computed already (what a search thread is given of them, replica.ts). */
export function computedOrders(table: Table): { specs: KeySpec[]; tieDescending: boolean; rows: Uint32Array }[] {
  const kept = keptOrders.get(table)
  if (!kept) return []
  return [...kept.values()]
    .filter((order) => order.rows.ready)
    .map(({ specs, tieDescending, rows }) => ({ specs: [...specs], tieDescending, rows: rows.get() }))
}

/** Keeps, for the table, its rows in that order as computed elsewhere ({@link computedOrders}). */
export function keepComputedOrder(
  table: Table,
  specs: readonly KeySpec[],
  tieDescending: boolean,
  rows: Uint32Array,
): void {
  keep(table, { specs, tieDescending, rows: Lazy.of(rows) })
}

function keep(table: Table, order: KeptOrder): void {
  let kept = keptOrders.get(table)
  if (!kept) {
    kept = new Map()
    keptOrders.set(table, kept)
  }
  kept.set(orderName(order.specs, order.tieDescending), order)
  if (kept.size > KEPT_ORDERS) kept.delete(kept.keys().next().value as string)
}

/**
 * Carries the orders kept for `old` over to `next`, its rows after a merge (`oldToNew`; `added`: the new rows that
 * came with the changes), each on its first use: the old rows keep their relative order, the added ones are placed
 * by binary search (linear in the rows, where sorting them anew would take several passes).
 */
export function carryOrders(old: Table, next: Table, oldToNew: Int32Array, added: Uint32Array): void {
  const kept = keptOrders.get(old)
  if (!kept) return
  // Only orders in use (computed) are carried: one never asked for since the last write is dropped, so no chain of
  // versions builds up behind orders nobody reads.
  for (const { specs, tieDescending, rows } of kept.values()) {
    if (!rows.ready) continue
    const before = rows.get()
    // Rows in place and no key column changed (a price change, for an order by model): the same order.
    if (
      next.rowByTie === old.rowByTie &&
      specs.every(({ column }) => columnOf(old, column) === columnOf(next, column))
    ) {
      keep(next, { specs, tieDescending, rows: Lazy.of(before) })
      continue
    }
    // Most rows changed (a change of the whole list): a few counting passes beat placing each by binary search.
    if (added.length > next.rows / 8) {
      keep(next, { specs, tieDescending, rows: Lazy.of(sortRows(next, specs, tieDescending)) })
      continue
    }
    keep(next, {
      specs,
      tieDescending,
      rows: new Lazy(() => carryOrder(next, specs, tieDescending, before, oldToNew, added)),
    })
  }
}

function carryOrder(
  next: Table,
  specs: readonly KeySpec[],
  tieDescending: boolean,
  rows: Uint32Array,
  oldToNew: Int32Array,
  added: Uint32Array,
): Uint32Array {
  const keys = keysOf(next, specs)
  const compare = (a: number, b: number) => {
    for (const { codes, ranks } of keys) {
      const difference = (ranks[codes[a] as number] as number) - (ranks[codes[b] as number] as number)
      if (difference !== 0) return difference
    }
    const tie = (next.tie[a] as number) - (next.tie[b] as number)
    return tieDescending ? -tie : tie
  }
  const remaining = new Uint32Array(next.rows - added.length)
  let count = 0
  for (let index = 0; index < rows.length; index++) {
    const row = oldToNew[rows[index] as number] as number
    if (row >= 0) remaining[count++] = row
  }
  const order = sharedUint32(next.rows)
  let out = 0
  let from = 0
  let low = 0
  for (const row of Array.from(added).sort(compare)) {
    let high = count
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compare(row, remaining[middle] as number) > 0) low = middle + 1
      else high = middle
    }
    order.set(remaining.subarray(from, low), out)
    out += low - from
    from = low
    order[out++] = row
  }
  order.set(remaining.subarray(from, count), out)
  return order
}
