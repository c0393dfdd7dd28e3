import type { IndexedSearch } from './conditions.js'
import { Lazy } from './lazy.js'
import { type MatviewTable, type PriceTable, rowOfEntry } from './load.js'
// In shared memory, as the tables' arrays: a search thread is given the pairing built here (replica.ts).
import { sharedInt32 } from './table.js'

/*
 * The pairing of a kind's matview rows with its price list's (the entry that prices each SKU): a price-list
 * filter on an attribute only SKUs carry reads through it.
 */

/** Per matview, its pairing with one price table (computed on first use; carried over by writes). */
const entryRowsKept = new WeakMap<MatviewTable, { prices: PriceTable; rows: Lazy<Int32Array> }>()

function keepEntryRows(matview: MatviewTable, prices: PriceTable, make: () => Int32Array): void {
  entryRowsKept.set(matview, { prices, rows: new Lazy(make) })
}

/**
 * Carries the pairing of `from` over to `to`, whose matview and/or price table are `from`'s after a merge (`moved`:
 * each merged table's old row → new row). Rows whose SKU or entry moved keep their pairing; the others (gone,
 * come, or unpaired) are looked up. Carried only from a pairing in use (computed): an unused one is left to be
 * computed if ever needed, so no chain of versions builds up behind it.
 */
export function carryEntryRows(
  from: IndexedSearch,
  to: IndexedSearch,
  moved: { readonly matview?: Int32Array; readonly prices?: Int32Array },
): void {
  const kept = entryRowsKept.get(from.matview)
  if (kept?.prices !== from.prices || !kept.rows.ready) return
  const before = kept.rows.get()
  // Both tables' rows in place with their ids (a price change): the same pairing.
  if (to.matview.rowByTie === from.matview.rowByTie && to.prices.rowByTie === from.prices.rowByTie) {
    keepEntryRows(to.matview, to.prices, () => before)
    return
  }
  keepEntryRows(to.matview, to.prices, () => {
    const rows = sharedInt32(to.matview.rows).fill(-1)
    const paired = new Uint8Array(to.matview.rows)
    for (let row = 0; row < from.matview.rows; row++) {
      const at = moved.matview ? (moved.matview[row] as number) : row
      const entry = before[row] as number
      const entryAt = entry >= 0 && moved.prices ? (moved.prices[entry] as number) : entry
      if (at < 0 || entryAt < 0) continue
      rows[at] = entryAt
      paired[at] = 1
    }
    for (let row = 0; row < to.matview.rows; row++) {
      if (!paired[row]) rows[row] = rowOfEntry(to.prices, to.matview.priceIds[row] as number)
    }
    return rows
  })
}

/** Per matview row, the row of its entry in `prices` (-1 where the entry is not there). */
export function entryRowsOf(matview: MatviewTable, prices: PriceTable): Int32Array {
  const kept = entryRowsKept.get(matview)
  if (kept?.prices === prices) return kept.rows.get()
  keepEntryRows(matview, prices, () => {
    const rows = sharedInt32(matview.rows)
    for (let row = 0; row < matview.rows; row++) rows[row] = rowOfEntry(prices, matview.priceIds[row] as number)
    return rows
  })
  return entryRowsOf(matview, prices)
}

/** The pairing of the tables if computed already (what a search thread is given of it). */
export function computedEntryRows(matview: MatviewTable, prices: PriceTable): Int32Array | undefined {
  const kept = entryRowsKept.get(matview)
  return kept?.prices === prices && kept.rows.ready ? kept.rows.get() : undefined
}

/** Keeps the pairing of the tables as computed elsewhere ({@link computedEntryRows}). */
export function keepComputedEntryRows(matview: MatviewTable, prices: PriceTable, rows: Int32Array): void {
  if (rows.length !== matview.rows) throw new Error('a pairing of another size')
  entryRowsKept.set(matview, { prices, rows: Lazy.of(rows) })
}
