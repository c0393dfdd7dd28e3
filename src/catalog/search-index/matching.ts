import { compareDecimal, type DecimalValue } from '../../http/decimal.js'
import { type Column, NULL_CODE, type Table } from './table.js'

/*
 * Which rows of a table match a search, and which of them make a page. A condition is either a test of one
 * column's value (a set of codes: substring, equality) or a test of a row (ranges, SKU-only filters); matching
 * starts from the most selective value test's postings and checks the rest row by row, in the table's order.
 */

/** A condition on one column: the codes it accepts (`accepted[code] === 1`). */
export interface ValueCondition {
  readonly kind: 'value'
  readonly column: Column
  readonly accepted: Uint8Array
}

/** A condition on a whole row. */
export interface RowCondition {
  readonly kind: 'row'
  readonly test: (row: number) => boolean
}

export type Condition = ValueCondition | RowCondition

/** Codes of `column` whose normalised text contains `needle` (already normalised). */
export function containsCondition(column: Column, needle: string): ValueCondition {
  const accepted = new Uint8Array(column.distinct)
  const { forms } = column
  for (let code = 1; code < accepted.length; code++) {
    if ((forms[code] as { norm: string }).norm.includes(needle)) accepted[code] = 1
  }
  return { kind: 'value', column, accepted }
}

/** Codes of a numeric column whose value compares to `value` as `test` says. */
export function compareCondition(
  column: Column,
  value: DecimalValue,
  test: (comparison: number) => boolean,
  nullAccepted = false,
): ValueCondition {
  const accepted = new Uint8Array(column.distinct)
  const { decimals } = column
  accepted[NULL_CODE] = nullAccepted ? 1 : 0
  for (let code = 1; code < accepted.length; code++) {
    const decimal = decimals[code]
    if (decimal && test(compareDecimal(decimal, value))) accepted[code] = 1
  }
  return { kind: 'value', column, accepted }
}

/** Adds NULL to the codes a condition accepts (a wildcard key of a price-list entry matches any filter). */
export function orNull(condition: ValueCondition): ValueCondition {
  const accepted = condition.accepted.slice()
  accepted[NULL_CODE] = 1
  return { ...condition, accepted }
}

function acceptedRows(condition: ValueCondition): number {
  let rows = 0
  const { accepted, column } = condition
  for (let code = 0; code < accepted.length; code++) if (accepted[code]) rows += column.count(code)
  return rows
}

/**
 * The rows matching every condition, ascending (the table's order). Postings of the most selective value
 * condition give the candidates when they are few; otherwise every row is tested.
 */
export function matchRows(table: Table, conditions: readonly Condition[]): Uint32Array {
  const values = conditions.filter((c): c is ValueCondition => c.kind === 'value')
  const rowTests = conditions.filter((c): c is RowCondition => c.kind === 'row')
  let driver: ValueCondition | undefined
  let driverRows = table.rows
  for (const condition of values) {
    const rows = acceptedRows(condition)
    if (rows < driverRows) {
      driver = condition
      driverRows = rows
    }
  }
  const others = values.filter((condition) => condition !== driver)
  const otherCodes = others.map((condition) => condition.column.codes)
  const otherAccepted = others.map((condition) => condition.accepted)
  const passes = (row: number): boolean => {
    for (let index = 0; index < otherCodes.length; index++) {
      if (!(otherAccepted[index] as Uint8Array)[(otherCodes[index] as Uint32Array)[row] as number]) return false
    }
    for (const test of rowTests) if (!test.test(row)) return false
    return true
  }

  const matches = new Uint32Array(driver ? driverRows : table.rows)
  let found = 0
  if (!driver || driverRows > table.rows / 4) {
    // Many candidates: test every row (the driver too).
    const codes = driver?.column.codes
    const accepted = driver?.accepted
    for (let row = 0; row < table.rows; row++) {
      if (codes && !(accepted as Uint8Array)[codes[row] as number]) continue
      if (passes(row)) matches[found++] = row
    }
    return matches.subarray(0, found)
  }
  const { offsets, rows } = driver.column.postings
  const acceptedCodes: number[] = []
  for (let code = 0; code < driver.accepted.length; code++) if (driver.accepted[code]) acceptedCodes.push(code)
  if (acceptedCodes.length === 1) {
    const code = acceptedCodes[0] as number
    for (let index = offsets[code] as number; index < (offsets[code + 1] as number); index++) {
      const row = rows[index] as number
      if (passes(row)) matches[found++] = row
    }
    return matches.subarray(0, found)
  }
  // Several values: their postings through a bitset, read back in row order.
  const bits = new Uint32Array((table.rows + 31) >>> 5)
  for (const code of acceptedCodes) {
    for (let index = offsets[code] as number; index < (offsets[code + 1] as number); index++) {
      const row = rows[index] as number
      bits[row >>> 5] = (bits[row >>> 5] as number) | (1 << (row & 31))
    }
  }
  for (let word = 0; word < bits.length; word++) {
    let set = bits[word] as number
    while (set !== 0) {
      const low = set & -set
      const row = (word << 5) + (31 - Math.clz32(low))
      set ^= low
      if (passes(row)) matches[found++] = row
    }
  }
  return matches.subarray(0, found)
}

/** One key of a requested sort: per row, a rank (small first). */
export interface SortKey {
  readonly codes: Codes32
  /** Code → rank in the requested direction. */
  readonly ranks: Uint32Array
  /** Ranks run from 0 to `range` - 1. */
  readonly range: number
}

type Codes32 = Uint8Array | Uint16Array | Uint32Array

/** A sort key over `column`'s ranks, ascending (NULLs last) or descending (NULLs first), as PostgreSQL orders. */
export function sortKey(column: Column, descending: boolean, ignoreCase: boolean): SortKey {
  const ascending = column.ranks(ignoreCase)
  const top = ascending[NULL_CODE] as number
  const ranks = descending ? ascending.map((rank) => top - rank) : ascending
  return { codes: column.codes, ranks, range: top + 1 }
}

/**
 * The rows at positions `from` … `to` - 1 of `rows` ordered by `keys`, then by the table's tiebreak. Each key
 * splits the rows into rank buckets (a counting pass); only the buckets overlapping the window go on to the next
 * key, and the last ones are ordered by the tiebreak.
 */
export function sortedWindow(
  table: Table,
  rows: Uint32Array,
  keys: readonly SortKey[],
  from: number,
  to: number,
): Uint32Array {
  to = Math.min(to, rows.length)
  if (from >= to) return new Uint32Array(0)
  const [key, ...rest] = keys
  if (!key) {
    const ties = new Uint32Array(rows.length)
    for (let index = 0; index < rows.length; index++) ties[index] = table.tie[rows[index] as number] as number
    ties.sort()
    const window = new Uint32Array(to - from)
    for (let index = from; index < to; index++) window[index - from] = table.rowByTie[ties[index] as number] as number
    return window
  }
  const { codes, ranks, range } = key
  const counts = new Uint32Array(range + 1)
  for (let index = 0; index < rows.length; index++) {
    const slot = (ranks[codes[rows[index] as number] as number] as number) + 1
    counts[slot] = (counts[slot] as number) + 1
  }
  for (let rank = 0; rank < range; rank++) counts[rank + 1] = (counts[rank + 1] as number) + (counts[rank] as number)
  // counts[rank] is now the position of the bucket's first row; the window needs buckets first … last.
  let first = 0
  while ((counts[first + 1] as number) <= from) first++
  let last = first
  while (last + 1 < range && (counts[last + 1] as number) < to) last++
  const base = counts[first] as number
  const gathered = new Uint32Array((counts[last + 1] as number) - base)
  const next = counts.slice(first, last + 1)
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index] as number
    const rank = ranks[codes[row] as number] as number
    if (rank >= first && rank <= last) {
      const at = next[rank - first] as number
      next[rank - first] = at + 1
      gathered[at - base] = row
    }
  }
  const window = new Uint32Array(to - from)
  let filled = 0
  for (let rank = first; rank <= last; rank++) {
    const start = counts[rank] as number
    const end = counts[rank + 1] as number
    if (end === start) continue
    const bucket = gathered.subarray(start - base, end - base)
    const part = sortedWindow(table, bucket, rest, Math.max(from, start) - start, Math.min(to, end) - start)
    window.set(part, filled)
    filled += part.length
  }
  return window
}
