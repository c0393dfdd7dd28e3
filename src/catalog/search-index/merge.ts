import { type Codes, type Column, codesFor, sharedUint32, type Table, type TextForms, tieOf } from './table.js'

/*
 * A table brought to a later data version by its changed rows alone: the rows that changed (or went) are dropped,
 * the rows as they are now are coded in the columns' dictionaries (extended with their new values) and put at
 * their places in the natural order, found by binary search. Linear in the table's rows, with no sort of them and
 * no read of the unchanged rows from the database: what the incremental application of writes rests on.
 */

/** A table with its tiebreak ids (`sku_id, price_id` of a matview row, `id` of an entry), row → id. */
export interface IdentifiedTable extends Table {
  readonly ids: readonly Uint32Array[]
}

/** A table after a merge: where each old row went (-1: dropped or read again), and where each added row is. */
export type MergedTable = IdentifiedTable & { readonly oldToNew: Int32Array; readonly addedRows: Uint32Array }

/** What changed: the old rows to drop, and the rows to add as read (any order). */
export interface RowChanges {
  readonly removed: Uint8Array
  readonly rows: number
  /** Per column of the table, each added row's value. */
  readonly values: ReadonlyMap<string, readonly (string | null)[]>
  /** Per id column, each added row's id. */
  readonly ids: readonly Uint32Array[]
}

/** The new non-ASCII text values the changes bring, whose normal forms the database must give. */
export function newNonAsciiValues(table: Table, changes: RowChanges): string[] {
  return nonAsciiValuesNew([...table.columns].map(([name, column]) => [column, changes.values.get(name) ?? []]))
}

/** Of each text column's `values`, the non-ASCII ones its dictionary does not hold yet (each once). */
export function nonAsciiValuesNew(columns: Iterable<readonly [Column, readonly (string | null)[]]>): string[] {
  const found = new Set<string>()
  for (const [column, values] of columns) {
    if (column.type !== 'text') continue
    for (const value of column.newValues(values)) {
      // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is U+0000 … U+007F.
      if (/[^\u0000-\u007f]/.test(value)) found.add(value)
    }
  }
  return [...found]
}

/**
 * The table with `changes` applied, its rows in the natural order of `order` (columns ascending, NULL last) then
 * the ids; `oldToNew` maps each old row to its new row (-1 where dropped), `addedRows` each added row to its row.
 */
export function mergeRows(
  table: IdentifiedTable,
  changes: RowChanges,
  order: readonly string[],
  forms: ReadonlyMap<string, TextForms>,
): MergedTable {
  const { rows: oldRows, ids: oldIds } = table
  const added = changes.rows
  const extended = new Map<string, Column>()
  for (const [name, column] of table.columns) {
    const values = changes.values.get(name)
    if (!values || values.length !== added) throw new Error(`the changes have no values for column ${name}`)
    extended.set(name, column.extend(values, forms))
  }
  // The ranks of the extended dictionaries order the old values as before, and the new ones among them.
  const keys = order.map((name) => {
    const column = extended.get(name) as Column
    return { ranks: column.ranks(), added: column.codes, old: (table.columns.get(name) as Column).codes }
  })
  const compareIds = (addedRow: number, otherIds: readonly Uint32Array[], other: number) => {
    for (let index = 0; index < oldIds.length; index++) {
      const difference =
        ((changes.ids[index] as Uint32Array)[addedRow] as number) - ((otherIds[index] as Uint32Array)[other] as number)
      if (difference !== 0) return difference
    }
    return 0
  }
  const compareToOld = (addedRow: number, oldRow: number) => {
    for (const { ranks, added: codes, old } of keys) {
      const difference = (ranks[codes[addedRow] as number] as number) - (ranks[old[oldRow] as number] as number)
      if (difference !== 0) return difference
    }
    return compareIds(addedRow, oldIds, oldRow)
  }
  const compareAdded = (a: number, b: number) => {
    for (const { ranks, added: codes } of keys) {
      const difference = (ranks[codes[a] as number] as number) - (ranks[codes[b] as number] as number)
      if (difference !== 0) return difference
    }
    return compareIds(a, changes.ids, b)
  }

  const sorted = Array.from({ length: added }, (_, row) => row).sort(compareAdded)
  // Per added row in order: how many old rows come before it.
  const before = new Uint32Array(added)
  let low = 0
  for (let index = 0; index < added; index++) {
    const row = sorted[index] as number
    let high = oldRows
    while (low < high) {
      const middle = (low + high) >>> 1
      if (compareToOld(row, middle) > 0) low = middle + 1
      else high = middle
    }
    before[index] = low
  }

  let removedCount = 0
  for (let row = 0; row < oldRows; row++) removedCount += changes.removed[row] as number
  const rows = oldRows - removedCount + added
  // New row → old row (≥ 0) or -(added row + 1).
  const source = new Int32Array(rows)
  const oldToNew = new Int32Array(oldRows).fill(-1)
  const addedToNew = new Uint32Array(added)
  let next = 0
  let oldRow = 0
  for (let index = 0; index <= added; index++) {
    const until = index < added ? (before[index] as number) : oldRows
    for (; oldRow < until; oldRow++) {
      if (changes.removed[oldRow]) continue
      oldToNew[oldRow] = next
      source[next++] = oldRow
    }
    if (index < added) {
      const row = sorted[index] as number
      addedToNew[row] = next
      source[next++] = -(row + 1)
    }
  }

  // Runs of consecutive old rows are copied as blocks; only the added rows are placed one by one.
  const runs: number[] = []
  for (let row = 0; row < rows; ) {
    const from = source[row] as number
    if (from < 0) {
      row++
      continue
    }
    let end = row + 1
    while (end < rows && source[end] === from + (end - row)) end++
    runs.push(row, from, end - row)
    row = end
  }
  const gather = <T extends Codes>(target: T, old: T, fresh: ArrayLike<number>): T => {
    const sameType = target.constructor === old.constructor
    for (let index = 0; index < runs.length; index += 3) {
      const [at, from, length] = [runs[index] as number, runs[index + 1] as number, runs[index + 2] as number]
      if (sameType) target.set(old.subarray(from, from + length), at)
      else for (let offset = 0; offset < length; offset++) target[at + offset] = old[from + offset] as number
    }
    for (let index = 0; index < added; index++) target[addedToNew[index] as number] = fresh[index] as number
    return target
  }
  // The commonest write, a price edited: every row read again lands where it was, with its id. Then the ids and the
  // tiebreak order stay as they are, and so does every column whose values at those rows did not change (the same
  // object, with its postings): a column that changed is copied and patched.
  let inPlace = rows === oldRows
  for (let index = 0; inPlace && index < runs.length; index += 3) inPlace = runs[index] === runs[index + 1]
  for (let row = 0; inPlace && row < added; row++) {
    const at = addedToNew[row] as number
    for (let index = 0; inPlace && index < oldIds.length; index++) {
      inPlace = (changes.ids[index] as Uint32Array)[row] === (oldIds[index] as Uint32Array)[at]
    }
  }
  const columns = new Map<string, Column>()
  for (const [name, column] of extended) {
    const previous = table.columns.get(name) as Column
    const old = previous.codes
    if (inPlace && column.values === previous.values) {
      let same = true
      for (let row = 0; same && row < added; row++) same = column.codes[row] === old[addedToNew[row] as number]
      if (same) {
        columns.set(name, previous)
        continue
      }
    }
    columns.set(name, column.withCodes(gather(codesFor(column.distinct, rows), old, column.codes)))
  }
  if (inPlace) {
    return { rows, columns, ids: oldIds, tie: table.tie, rowByTie: table.rowByTie, oldToNew, addedRows: addedToNew }
  }
  const ids = oldIds.map((old, index) => gather(sharedUint32(rows), old, changes.ids[index] as Uint32Array))

  // The tiebreak order: the old one without the dropped rows, the added rows merged in by their ids.
  const addedByIds = Array.from({ length: added }, (_, row) => row).sort((a, b) => compareIds(a, changes.ids, b))
  const rowByTie = sharedUint32(rows)
  let rank = 0
  let nextAdded = 0
  for (let index = 0; index < oldRows; index++) {
    const row = table.rowByTie[index] as number
    if (changes.removed[row]) continue
    while (nextAdded < added && compareIds(addedByIds[nextAdded] as number, oldIds, row) < 0) {
      rowByTie[rank++] = addedToNew[addedByIds[nextAdded++] as number] as number
    }
    rowByTie[rank++] = oldToNew[row] as number
  }
  while (nextAdded < added) rowByTie[rank++] = addedToNew[addedByIds[nextAdded++] as number] as number

  return { rows, columns, ids, ...tieOf(rowByTie), oldToNew, addedRows: addedToNew }
}
