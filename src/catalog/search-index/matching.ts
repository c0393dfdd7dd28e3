import { compareDecimal, type DecimalValue } from '../../domain/decimal.js'
import { type PackedPostings, packPostings } from '../search/packed-postings.js'
import { scratchBytes, scratchUint32 } from './scratch.js'
import { type Codes, type Column, KEPT_MEMOS, NULL_CODE, type Table, textRanks } from './table.js'

/*
 * Which rows of a table match a search, and which of them make a page. A condition is either a test of one
 * column's value (a set of codes: substring, equality) or a test of a row (ranges, SKU-only filters); matching
 * starts from the most selective value test's postings and checks the rest row by row, in the table's order.
 */

/** A condition on one column: the codes it accepts (`accepted[code] === 1`), also listed in `codes` when few. */
export interface ValueCondition {
  readonly kind: 'value'
  readonly column: Column
  readonly accepted: Uint8Array
  readonly codes?: Uint32Array
}

/** A condition met by a known set of rows (ascending), with a membership flag per row. */
export interface RowSetCondition {
  readonly kind: 'rows'
  readonly rows: Uint32Array
  readonly member: Uint8Array
}

export type Condition = ValueCondition | RowSetCondition

/** Above this many distinct values, substring search over a column's values goes through its n-gram index. */
const GRAM_INDEX_VALUES = 2000

/** N-gram (as a number, see {@link gramKey}) → the codes whose normalised text holds it. */
type GramIndex = PackedPostings<number>

/** The n-gram of `text` at `at` as one number: its n UTF-16 units (n ≤ 3) in base 65536. */
function gramKey(text: string, at: number, n: number): number {
  let key = 0
  for (let index = 0; index < n; index++) key = key * 0x10000 + text.charCodeAt(at + index)
  return key
}

/** The codes whose normalised text holds each n-gram (n UTF-16 units), built once per column. */
function gramIndex(column: Column, n: 2 | 3): GramIndex {
  // Kept in snapshots: a restart need not build them again.
  return column.memo(n === 2 ? KEPT_MEMOS.grams2 : KEPT_MEMOS.grams3, () => {
    const { norms } = column
    return packPostings<number>(1, norms.length, (code, visit) => {
      const text = norms[code] as string
      for (let at = 0; at + n <= text.length; at++) visit(gramKey(text, at, n))
    })
  })
}

/** Builds what substring filters on a text column use (postings; n-grams of a large dictionary) ahead of time. */
export function prepareTextColumn(column: Column): void {
  void column.postings
  if (column.distinct > GRAM_INDEX_VALUES) {
    gramIndex(column, 2)
    gramIndex(column, 3)
  }
}

/**
 * Codes that may contain `needle` (already normalised), ascending, from the column's n-gram index: every code whose
 * normalised text contains it is among them; `exact` when they all do (the needle is one n-gram). Undefined where
 * the column has no such index or the needle is shorter than a gram.
 */
export function substringCandidates(
  column: Column,
  needle: string,
): { readonly codes: Uint32Array; readonly exact: boolean } | undefined {
  if (column.distinct <= GRAM_INDEX_VALUES || needle.length < 2) return undefined
  const n = needle.length >= 3 ? 3 : 2
  const index = gramIndex(column, n)
  // Only values holding every n-gram of the needle can contain it: the two rarest, intersected.
  let [rarest, second] = [-1, -1]
  const size = (slot: number) =>
    slot < 0 ? Number.POSITIVE_INFINITY : (index.offsets[slot + 1] as number) - (index.offsets[slot] as number)
  for (let at = 0; at + n <= needle.length; at++) {
    const slot = index.slots.get(gramKey(needle, at, n))
    if (slot === undefined) return { codes: new Uint32Array(0), exact: true }
    if (slot === rarest || slot === second) continue
    if (size(slot) < size(rarest)) [rarest, second] = [slot, rarest]
    else if (size(slot) < size(second)) second = slot
  }
  const list = (slot: number) => index.items.subarray(index.offsets[slot] as number, index.offsets[slot + 1] as number)
  if (second < 0) return { codes: list(rarest), exact: needle.length === n }
  return { codes: intersectAscending(list(rarest), list(second)), exact: false }
}

/** The values in both ascending lists (the first the shorter), ascending. */
function intersectAscending(short: Uint32Array, long: Uint32Array): Uint32Array {
  const both = new Uint32Array(short.length)
  let found = 0
  let at = 0
  for (let index = 0; index < short.length && at < long.length; index++) {
    const value = short[index] as number
    // Gallop to the first value of `long` not below it.
    let step = 1
    while (at + step < long.length && (long[at + step] as number) < value) step *= 2
    let [low, high] = [at, Math.min(at + step, long.length - 1)]
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((long[middle] as number) < value) low = middle + 1
      else high = middle
    }
    at = low
    if (long[at] === value) both[found++] = value
  }
  return both.subarray(0, found)
}

/**
 * A condition accepting `codes` (ascending). Its flag per code is made only if a search asks for it (to test rows
 * it does not drive): a selective substring drives, and a large dictionary's flags would be garbage per request.
 */
function codesCondition(column: Column, codes: Uint32Array): ValueCondition {
  let accepted: Uint8Array | undefined
  return {
    kind: 'value',
    column,
    codes,
    get accepted() {
      if (!accepted) {
        accepted = new Uint8Array(column.distinct)
        for (let at = 0; at < codes.length; at++) accepted[codes[at] as number] = 1
      }
      return accepted
    },
  }
}

/** Codes of `column` whose normalised text contains `needle` (already normalised). */
export function containsCondition(column: Column, needle: string): ValueCondition {
  const { norms } = column
  const candidates = substringCandidates(column, needle)
  if (candidates?.exact) return codesCondition(column, candidates.codes)
  const found: number[] = []
  if (!candidates) {
    for (let code = 1; code < column.distinct; code++) if ((norms[code] as string).includes(needle)) found.push(code)
  } else {
    const { codes } = candidates
    for (let at = 0; at < codes.length; at++) {
      const code = codes[at] as number
      if ((norms[code] as string).includes(needle)) found.push(code)
    }
  }
  return codesCondition(column, Uint32Array.from(found))
}

/** Codes of `column` whose normalised text equals `needle` (already normalised). */
export function equalsTextCondition(column: Column, needle: string): ValueCondition {
  const byNorm = column.memo('codes by norm', () => {
    const codes = new Map<string, number[]>()
    const { norms } = column
    for (let code = 1; code < column.distinct; code++) {
      const text = norms[code] as string
      const list = codes.get(text)
      if (list) list.push(code)
      else codes.set(text, [code])
    }
    return codes
  })
  return codesCondition(column, Uint32Array.from(byNorm.get(needle) ?? []))
}

/** A text filter's codes: whole (`exact`) or a substring; `needle` already normalised. */
export function textCondition(column: Column, needle: string, exact: boolean): ValueCondition {
  return exact ? equalsTextCondition(column, needle) : containsCondition(column, needle)
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

/** Codes of a column whose value passes `test`. */
export function codeCondition(column: Column, test: (code: number) => boolean): ValueCondition {
  const accepted = new Uint8Array(column.distinct)
  for (let code = 0; code < accepted.length; code++) if (test(code)) accepted[code] = 1
  return { kind: 'value', column, accepted }
}

/** Adds NULL to the codes a condition accepts (a wildcard key of a price-list entry matches any filter). */
export function orNull(condition: ValueCondition): ValueCondition {
  if (condition.codes) return codesCondition(condition.column, Uint32Array.from([NULL_CODE, ...condition.codes]))
  const accepted = condition.accepted.slice()
  accepted[NULL_CODE] = 1
  return { kind: 'value', column: condition.column, accepted }
}

function acceptedCodes(condition: ValueCondition): Uint32Array {
  if (condition.codes) return condition.codes
  const codes: number[] = []
  const { accepted } = condition
  for (let code = 0; code < accepted.length; code++) if (accepted[code]) codes.push(code)
  return Uint32Array.from(codes)
}

function acceptedRows(condition: ValueCondition, codes: Uint32Array): number {
  let rows = 0
  for (let index = 0; index < codes.length; index++) rows += condition.column.count(codes[index] as number)
  return rows
}

/**
 * The rows matching every condition, ascending (the table's order); read-only (it may be the table's own postings;
 * `borrow`ed, the shared buffer's, valid until the next call). The most selective condition gives the
 * candidates (a row set, or the postings of a value condition's codes) when they are few; otherwise every row is
 * tested.
 */
export function matchRows(table: Table, conditions: readonly Condition[], borrow = false): Uint32Array {
  let driver: Condition | undefined
  let driverCodes: Uint32Array | undefined
  let driverRows = table.rows
  for (const condition of conditions) {
    if (condition.kind === 'rows') {
      if (condition.rows.length <= driverRows) {
        driver = condition
        driverRows = condition.rows.length
        driverCodes = undefined
      }
      continue
    }
    const codes = acceptedCodes(condition)
    const rows = acceptedRows(condition, codes)
    if (rows < driverRows) {
      driver = condition
      driverRows = rows
      driverCodes = codes
    }
  }
  const rest = conditions.filter((condition) => condition !== driver)
  const alone = rest.length === 0
  if (driver?.kind === 'value' && alone && (driverCodes as Uint32Array).length === 1) {
    // One condition with one value: its postings are the answer.
    const { offsets, rows } = driver.column.postings
    const code = (driverCodes as Uint32Array)[0] as number
    return rows.subarray(offsets[code] as number, offsets[code + 1] as number)
  }
  // The candidates, ascending, gathered in a buffer shared by every search (this runs without yielding), then
  // narrowed by each other condition in turn: one tight pass per condition over the rows still in.
  let buffer: Uint32Array
  let found: number
  if (driver?.kind === 'rows') {
    buffer = scratch(driver.rows.length)
    buffer.set(driver.rows)
    found = driver.rows.length
  } else if (!driver || (driverRows > table.rows / 4 && !alone)) {
    // Many candidates: the first value condition tested on every row.
    const first = (driver ?? rest.shift()) as ValueCondition
    buffer = scratch(table.rows)
    found = scanRows(first.column.codes, first.accepted, table.rows, buffer)
  } else {
    const { offsets, rows } = driver.column.postings
    const codes = driverCodes as Uint32Array
    buffer = scratch(driverRows)
    found = 0
    if (codes.length === 1) {
      const code = codes[0] as number
      found = (offsets[code + 1] as number) - (offsets[code] as number)
      buffer.set(rows.subarray(offsets[code] as number, offsets[code + 1] as number))
    } else found = unionOfPostings(offsets, rows, codes, table.rows, buffer)
  }
  for (const condition of rest) {
    found =
      condition.kind === 'value'
        ? keepAccepted(buffer, found, condition.column.codes, condition.accepted)
        : keepMembers(buffer, found, condition.member)
  }
  // Borrowed, the answer is the shared buffer's: valid until the next match, so it spares large copies; else a
  // scratch copy, valid until the answer ends.
  if (borrow) return buffer.subarray(0, found)
  const copy = scratchUint32(found)
  copy.set(buffer.subarray(0, found))
  return copy
}

let flags = new Uint8Array(0)
let flagsInUse = false

/**
 * Calls `use` with a flag per row of a table of `size` rows, set for `rows`: in a buffer shared by every search
 * (cleared again afterwards, in time proportional to `rows`), so a search allocates no table-sized array.
 */
export function withRowFlags<T>(rows: Uint32Array, size: number, use: (member: Uint8Array) => T): T {
  const own = flagsInUse ? scratchBytes(size) : flags.length >= size ? flags : new Uint8Array(size)
  const shared = !flagsInUse
  if (shared) {
    flags = own
    flagsInUse = true
  }
  for (let index = 0; index < rows.length; index++) own[rows[index] as number] = 1
  try {
    return use(own)
  } finally {
    for (let index = 0; index < rows.length; index++) own[rows[index] as number] = 0
    if (shared) flagsInUse = false
  }
}

let shared = new Uint32Array(1 << 16)

/** The shared buffer, at least `size` long. */
function scratch(size: number): Uint32Array {
  if (shared.length < size) shared = new Uint32Array(Math.max(size, shared.length * 2))
  return shared
}

/** Writes the rows whose code is accepted into `into`; returns how many. */
function scanRows(codes: Codes, accepted: Uint8Array, rows: number, into: Uint32Array): number {
  let found = 0
  for (let row = 0; row < rows; row++) if (accepted[codes[row] as number]) into[found++] = row
  return found
}

/** Keeps, in place, the first `count` rows of `rows` whose code is accepted; returns how many stay. */
function keepAccepted(rows: Uint32Array, count: number, codes: Codes, accepted: Uint8Array): number {
  let kept = 0
  for (let index = 0; index < count; index++) {
    const row = rows[index] as number
    if (accepted[codes[row] as number]) rows[kept++] = row
  }
  return kept
}

/** Keeps, in place, the first `count` rows of `rows` flagged in `member`; returns how many stay. */
function keepMembers(rows: Uint32Array, count: number, member: Uint8Array): number {
  let kept = 0
  for (let index = 0; index < count; index++) {
    const row = rows[index] as number
    if (member[row]) rows[kept++] = row
  }
  return kept
}

/** The rows of several values' postings, ascending (through a bitset), written into `into`; returns how many. */
function unionOfPostings(
  offsets: Uint32Array,
  postings: Uint32Array,
  codes: Uint32Array,
  rows: number,
  into: Uint32Array,
): number {
  const words = (rows + 31) >>> 5
  // Shared by every search: all zero between uses (the read-back below clears each word it reads).
  if (sharedBits.length < words) sharedBits = new Uint32Array(words)
  const bits = sharedBits
  for (let at = 0; at < codes.length; at++) {
    const code = codes[at] as number
    for (let index = offsets[code] as number; index < (offsets[code + 1] as number); index++) {
      const row = postings[index] as number
      bits[row >>> 5] = (bits[row >>> 5] as number) | (1 << (row & 31))
    }
  }
  let found = 0
  for (let word = 0; word < words; word++) {
    let set = bits[word] as number
    if (set === 0) continue
    bits[word] = 0
    while (set !== 0) {
      const low = set & -set
      into[found++] = (word << 5) + (31 - Math.clz32(low))
      set ^= low
    }
  }
  return found
}

let sharedBits = new Uint32Array(0)

/** One key of a requested sort: per row, a rank (small first). */
export interface SortKey {
  readonly codes: Codes
  /** Code → rank in the requested direction. */
  readonly ranks: Uint32Array
  /** Ranks run from 0 to `range` - 1. */
  readonly range: number
}

/** A sort key over `column`'s ranks, ascending (NULLs last) or descending (NULLs first), as PostgreSQL orders. */
export function sortKey(column: Column, descending: boolean, ignoreCase: boolean): SortKey {
  return keyOf(column, `ranks ${ignoreCase}`, () => column.ranks(ignoreCase), descending)
}

/** A sort key over the byte order of `column`'s normalised text (`optics_norm(x) COLLATE "C"`). */
export function normSortKey(column: Column, descending: boolean): SortKey {
  // Sorting a large dictionary's normal forms is the costliest step of a first listing: snapshots keep it.
  return keyOf(column, KEPT_MEMOS.normRanks, () => textRanks(column.norms), descending)
}

/** The key of ascending ranks, or of their reverse (NULL first), kept with the column. */
function keyOf(column: Column, name: string, ascending: () => Uint32Array, descending: boolean): SortKey {
  const up = column.memo(name, ascending)
  const top = up[NULL_CODE] as number
  const ranks = descending ? column.memo(`${name} descending`, () => up.map((rank) => top - rank)) : up
  return { codes: column.codes, ranks, range: top + 1 }
}

/**
 * The rows at positions `from` … `to` - 1 of `rows` ordered by `keys`, then by the table's tiebreak (descending
 * with `tieDescending`). Each key
 * splits the rows into rank buckets (a counting pass); only the buckets overlapping the window go on to the next
 * key, and the last ones are ordered by the tiebreak.
 */
export function sortedWindow(
  table: Table,
  rows: Uint32Array,
  keys: readonly SortKey[],
  from: number,
  to: number,
  tieDescending = false,
): Uint32Array {
  to = Math.min(to, rows.length)
  if (from >= to) return new Uint32Array(0)
  const [key, ...rest] = keys
  if (!key) {
    const ties = scratchUint32(rows.length)
    for (let index = 0; index < rows.length; index++) ties[index] = table.tie[rows[index] as number] as number
    ties.sort()
    if (tieDescending) ties.reverse()
    const window = new Uint32Array(to - from)
    for (let index = from; index < to; index++) window[index - from] = table.rowByTie[ties[index] as number] as number
    return window
  }
  const { codes, ranks, range } = key
  const counts = scratchUint32(range + 1)
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
  const gathered = scratchUint32((counts[last + 1] as number) - base)
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
    const part = sortedWindow(
      table,
      bucket,
      rest,
      Math.max(from, start) - start,
      Math.min(to, end) - start,
      tieDescending,
    )
    window.set(part, filled)
    filled += part.length
  }
  return window
}
