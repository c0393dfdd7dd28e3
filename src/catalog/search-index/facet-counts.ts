import type { Filter, Kind } from '../kinds/kind.js'
import { FACET_VALUES, type Facets, facetFields, type NumericFacet, type TextFacet } from '../search/facet-fields.js'
import type { ExactFilters, FilterValues } from '../search/search-query.js'
import { fieldColumn, filterConditions, type IndexedSearch } from './conditions.js'
import { type Condition, matchRows, withRowFlags } from './matching.js'
import { scratchUint32 } from './scratch.js'
import { type Column, KEPT_MEMOS, NULL_CODE, sharedUint32, type Table } from './table.js'

/*
 * The facets of a search from a kind's tables, as facets.ts counts them in SQL: totals, numeric bounds, and the top
 * values of each text field with their counts.
 */

/** The one value of one column that the conditions amount to, if they do (one condition accepting one code). */
function singleValue(conditions: readonly Condition[]): { column: Column; code: number } | undefined {
  const [condition] = conditions
  if (conditions.length !== 1 || condition?.kind !== 'value') return undefined
  if (condition.codes)
    return condition.codes.length === 1 ? { column: condition.column, code: condition.codes[0] as number } : undefined
  const { accepted } = condition
  let code = -1
  for (let at = 0; at < accepted.length; at++) {
    if (!accepted[at]) continue
    if (code >= 0) return undefined
    code = at
  }
  return code >= 0 ? { column: condition.column, code } : undefined
}

/** Above this many values, a column's co-occurrence counts are not kept (a row per value). */
const COOCCURRENCE_VALUES = 256
/** At most this many counts per pair of columns. */
const COOCCURRENCE_CELLS = 1 << 20

const cooccurrences = new WeakMap<Column, WeakMap<Column, Uint32Array>>()

/**
 * How many rows carry each pair of values of two columns of one table (`by` code × `of`'s distinct + `of` code),
 * counted once per pair of columns and data version (the columns are that version's), or undefined where `by`
 * has too many values for it to pay.
 */
function cooccurrence(table: Table, by: Column, of: Column): Uint32Array | undefined {
  if (by.distinct > COOCCURRENCE_VALUES || by.distinct * of.distinct > COOCCURRENCE_CELLS) return undefined
  const kept = keptBy(by)
  let counts = kept.get(of)
  if (!counts) {
    // In shared memory: a search thread is given the counts made here (replica.ts).
    counts = sharedUint32(by.distinct * of.distinct)
    const [left, right, width] = [by.codes, of.codes, of.distinct]
    for (let row = 0; row < table.rows; row++) {
      const cell = (left[row] as number) * width + (right[row] as number)
      counts[cell] = (counts[cell] as number) + 1
    }
    kept.set(of, counts)
  }
  return counts
}

/** The co-occurrence counts made of the table's columns so far, by the columns' names (`by`, `of`). */
export function computedCooccurrences(table: Table): [string, string, Uint32Array][] {
  const found: [string, string, Uint32Array][] = []
  for (const [byName, by] of table.columns) {
    const kept = cooccurrences.get(by)
    if (!kept) continue
    for (const [ofName, of] of table.columns) {
      const counts = kept.get(of)
      if (counts) found.push([byName, ofName, counts])
    }
  }
  return found
}

/** Keeps counts made elsewhere ({@link computedCooccurrences}) for two columns of the table. */
export function keepComputedCooccurrence(by: Column, of: Column, counts: Uint32Array): void {
  if (counts.length !== by.distinct * of.distinct) throw new Error(`co-occurrences of ${by.name} of another size`)
  keptBy(by).set(of, counts)
}

/** The counts kept of `by` with each other column. */
function keptBy(by: Column): WeakMap<Column, Uint32Array> {
  let kept = cooccurrences.get(by)
  if (!kept) {
    kept = new WeakMap()
    cooccurrences.set(by, kept)
  }
  return kept
}

/** Code → how many of `rows` carry it (all rows when undefined). */
function tally(column: Column, rows: Uint32Array | undefined): Uint32Array {
  const counts = scratchUint32(column.distinct)
  const { codes } = column
  if (!rows) {
    for (let code = 0; code < counts.length; code++) counts[code] = column.count(code)
    return counts
  }
  for (let index = 0; index < rows.length; index++) {
    const code = codes[rows[index] as number] as number
    counts[code] = (counts[code] as number) + 1
  }
  return counts
}

/** The value at position `k` (from 0) of `values` in ascending order; rearranges `values` (quickselect). */
function selectKth(values: Uint32Array, k: number): number {
  let [low, high] = [0, values.length - 1]
  while (low < high) {
    const pivot = values[(low + high) >>> 1] as number
    let [i, j] = [low, high]
    while (i <= j) {
      while ((values[i] as number) < pivot) i++
      while ((values[j] as number) > pivot) j--
      if (i <= j) {
        const swap = values[i] as number
        values[i++] = values[j] as number
        values[j--] = swap
      }
    }
    if (k <= j) high = j
    else if (k >= i) low = i
    else return values[k] as number
  }
  return values[k] as number
}

/** A column's codes but NULL's, in rank order (PostgreSQL's order of the values); kept with the column. */
function codesByRank(column: Column): Uint32Array {
  // Kept in snapshots with the ranks it follows: a restart need not sort a large dictionary again.
  return column.memo(KEPT_MEMOS.codesByRank, () => {
    const ranks = column.ranks()
    return Uint32Array.from({ length: column.distinct - 1 }, (_, index) => index + 1).sort(
      (a, b) => (ranks[a] as number) - (ranks[b] as number),
    )
  })
}

/**
 * The `k` codes with the highest counts, ties by ascending rank (`ORDER BY count DESC, value`), and how many codes
 * are present at all. Thresholds are found by selection, so only about `k` codes are ever sorted; when more codes
 * tie at the threshold than are wanted (most of a large dictionary counted once), the lowest-ranked of them are
 * found by walking the codes in rank order until enough are met, not by gathering every tie.
 */
function topCodes(counts: Uint32Array, column: Column, k: number): { codes: number[]; distinct: number } {
  const ranks = column.ranks()
  const order = (a: number, b: number) =>
    (counts[b] as number) - (counts[a] as number) || (ranks[a] as number) - (ranks[b] as number)
  const presentCounts = scratchUint32(counts.length)
  let distinct = 0
  for (let code = 1; code < counts.length; code++) {
    const count = counts[code] as number
    if (count > 0) presentCounts[distinct++] = count
  }
  const chosen: number[] = []
  if (distinct <= 4 * k) {
    for (let code = 1; code < counts.length; code++) if ((counts[code] as number) > 0) chosen.push(code)
    return { codes: chosen.sort(order).slice(0, k), distinct }
  }
  // The k-th highest count; every code above it is in, and the lowest-ranked of those at it fill the rest.
  const threshold = selectKth(presentCounts.subarray(0, distinct), distinct - k)
  const tied: number[] = []
  let tiedCount = 0
  for (let code = 1; code < counts.length; code++) {
    const count = counts[code] as number
    if (count > threshold) chosen.push(code)
    else if (count === threshold && tiedCount++ < k) tied.push(code)
  }
  const wanted = k - chosen.length
  if (tiedCount <= wanted) chosen.push(...tied)
  else {
    const ordered = codesByRank(column)
    for (let index = 0, taken = 0; index < ordered.length && taken < wanted; index++) {
      const code = ordered[index] as number
      if (counts[code] === threshold) {
        chosen.push(code)
        taken++
      }
    }
  }
  return { codes: chosen.sort(order).slice(0, k), distinct }
}

/**
 * Builds, once per load, what facets would otherwise build on a request: the co-occurrences a facet under one value
 * reads, of every column with few enough values to be kept (a refraction index, a zone's coverage, a type) with
 * every facet field's column, and the rank order of each large facet field's codes, in both modes, so no request
 * pays for a pass over every row or a sort of a dictionary (some 100 ms each at a million rows). A step at a time
 * (warm-up.ts): it pauses after each pass or sort, and returns the cells counted.
 */
export function* warmingFacets(kind: Kind, tables: IndexedSearch): Generator<void, number> {
  let cells = 0
  for (const byPriceList of [false, true]) {
    const table: Table = byPriceList ? tables.prices : tables.matview
    const { text, numeric } = facetFields(kind, byPriceList)
    const facetColumns = [...text, ...numeric].flatMap((field) => fieldColumn(table, field, byPriceList) ?? [])
    for (const by of table.columns.values()) {
      if (by.distinct < 2) continue
      for (const of of facetColumns) {
        cells += cooccurrence(table, by, of)?.length ?? 0
        yield
      }
    }
    for (const column of facetColumns) {
      if (column.distinct <= 4 * FACET_VALUES) continue
      codesByRank(column)
      yield
    }
  }
  return cells
}

/** The facets of a search, as facets.ts computes them in SQL: totals, numeric bounds, top values with counts. */
export function facetTables(
  kind: Kind,
  tables: IndexedSearch,
  byPriceList: boolean,
  filters: FilterValues,
  norm: (text: string) => string,
  exact?: ExactFilters,
): Facets {
  const table: Table = byPriceList ? tables.prices : tables.matview
  const active = filterConditions(kind, tables, byPriceList, filters, norm, exact)
  const matching = (except?: Filter): Uint32Array | undefined => {
    const conditions = active.filter((a) => a.filter !== except).flatMap((a) => a.conditions)
    // All matches are kept while the other fields count; a field's own are counted at once (borrowed).
    return conditions.length > 0 ? matchRows(table, conditions, except !== undefined) : undefined
  }
  const all = matching()
  const fields = facetFields(kind, byPriceList)
  // Matches that are one value's rows (a refraction index, a type chosen from a drop-down): every field's counts
  // under that value are read from the pair's co-occurrence counts, not tallied over the rows.
  const single = all && singleValue(active.flatMap((a) => a.conditions))
  const coCounts = (column: Column) => (single ? cooccurrence(table, single.column, column) : undefined)

  // Numeric bounds: among few matches, their values' ranks; among many, the values in rank order from each end
  // until one is carried by a match (found at once when matches are dense).
  const few = all !== undefined && all.length < table.rows / 4
  const numeric: Record<string, NumericFacet> = {}
  const bounds = (member: Uint8Array | undefined) => {
    for (const field of fields.numeric) {
      const column = fieldColumn(table, field, byPriceList) as Column
      const pairs = coCounts(column)
      if (pairs && single) {
        // The lowest and highest ranked values carried under the single value.
        const ranks = column.ranks()
        const base = single.code * column.distinct
        let [min, max] = [NULL_CODE, NULL_CODE]
        for (let code = 1; code < column.distinct; code++) {
          if (!pairs[base + code]) continue
          if (min === NULL_CODE || (ranks[code] as number) < (ranks[min] as number)) min = code
          if (max === NULL_CODE || (ranks[code] as number) > (ranks[max] as number)) max = code
        }
        numeric[field.name] = { min: column.json[min] as number | null, max: column.json[max] as number | null }
        continue
      }
      if (few) {
        const ranks = column.ranks()
        const { codes } = column
        let [min, max] = [NULL_CODE, NULL_CODE]
        for (let index = 0; index < (all as Uint32Array).length; index++) {
          const code = codes[(all as Uint32Array)[index] as number] as number
          if (code === NULL_CODE) continue
          if (min === NULL_CODE || (ranks[code] as number) < (ranks[min] as number)) min = code
          if (max === NULL_CODE || (ranks[code] as number) > (ranks[max] as number)) max = code
        }
        numeric[field.name] = { min: column.json[min] as number | null, max: column.json[max] as number | null }
        continue
      }
      const ordered = codesByRank(column)
      const { offsets, rows } = column.postings
      const carried = (code: number) => {
        if (!member) return (offsets[code + 1] as number) > (offsets[code] as number)
        for (let at = offsets[code] as number; at < (offsets[code + 1] as number); at++) {
          if (member[rows[at] as number]) return true
        }
        return false
      }
      let [min, max] = [NULL_CODE, NULL_CODE]
      for (let index = 0; index < ordered.length && min === NULL_CODE; index++) {
        if (carried(ordered[index] as number)) min = ordered[index] as number
      }
      for (let index = ordered.length - 1; index >= 0 && max === NULL_CODE && min !== NULL_CODE; index--) {
        if (carried(ordered[index] as number)) max = ordered[index] as number
      }
      numeric[field.name] = { min: column.json[min] as number | null, max: column.json[max] as number | null }
    }
  }
  if (all && !few) withRowFlags(all, table.rows, bounds)
  else bounds(undefined)

  const text: Record<string, TextFacet> = {}
  for (const field of fields.text) {
    const column = fieldColumn(table, field, byPriceList) as Column
    const own = active.find((a) => a.filter.name === field.name)
    const pairs = own ? undefined : coCounts(column)
    const counts =
      pairs && single
        ? pairs.subarray(single.code * column.distinct, (single.code + 1) * column.distinct)
        : tally(column, own ? matching(own.filter) : all)
    const { codes, distinct } = topCodes(counts, column, FACET_VALUES)
    text[field.name] = {
      values: codes.map((code) => ({ value: column.values[code] as string, count: counts[code] as number })),
      distinct,
    }
  }
  return { total: all ? all.length : table.rows, text, numeric }
}
