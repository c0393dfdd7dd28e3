import { type IdentifiedTable, type MergedTable, nonAsciiValuesNew } from './merge.js'
import { type Column, codesFor, NULL_CODE, type TextForms } from './table.js'

/*
 * A table compared with every row of it read again, one row at a time as COPY's output is parsed, where a write
 * changed most of its rows but moved none (a bulk change or an upload of the whole price list: new prices, the
 * same entries in the same natural order). Only the cells that differ are kept; the columns without one stay as
 * they are, with all that was built for them (postings, n-gram indexes, sorts), and the ids and the tiebreak order
 * stay too. Where a row came, went or moved, the table cannot be patched and is read anew.
 */

/** How a column's value is taken from a row read again: its field, or a value derived from the fields. */
export type FieldOf = number | ((fields: readonly (string | null)[]) => string | null)

interface PatchedColumn {
  readonly name: string
  readonly column: Column
  readonly field: FieldOf
  /** A column of the natural order. */
  readonly order: boolean
}

export class RowPatch {
  readonly #table: IdentifiedTable
  readonly #idCount: number
  readonly #columns: PatchedColumn[]
  /** Per column (same index), the rows whose value differs and their new values. */
  readonly #rows: number[][]
  readonly #values: (string | null)[][]
  readonly #seen: Uint8Array
  #count = 0
  #refused: string | undefined

  /**
   * `fields`: per column of the table, where a row read again holds its value; `order`: the columns of the natural
   * order (a value changed there moves the row). The first `idCount` fields are the ids.
   */
  constructor(table: IdentifiedTable, idCount: number, fields: ReadonlyMap<string, FieldOf>, order: readonly string[]) {
    this.#table = table
    this.#idCount = idCount
    this.#columns = [...table.columns].map(([name, column]) => {
      const field = fields.get(name)
      if (field === undefined) throw new Error(`no field for column ${name}`)
      return { name, column, field, order: order.includes(name) }
    })
    this.#rows = this.#columns.map(() => [])
    this.#values = this.#columns.map(() => [])
    this.#seen = new Uint8Array(table.rows)
  }

  /** Why the table cannot be patched, once a row showed it. */
  get refused(): string | undefined {
    return this.#refused
  }

  /** One row read again. */
  push(fields: readonly (string | null)[]): void {
    if (this.#refused) return
    const row = this.#rowOf(fields)
    if (row < 0) {
      this.#refused = 'a row came or changed its ids'
      return
    }
    if (this.#seen[row]) {
      this.#refused = 'a row came twice'
      return
    }
    this.#seen[row] = 1
    this.#count++
    for (let index = 0; index < this.#columns.length; index++) {
      const { column, field, order } = this.#columns[index] as PatchedColumn
      const value = typeof field === 'number' ? (fields[field] ?? null) : field(fields)
      const code = column.codes[row] as number
      if (code === NULL_CODE ? value === null : value === column.values[code]) continue
      if (order) {
        this.#refused = 'a row moved'
        return
      }
      ;(this.#rows[index] as number[]).push(row)
      ;(this.#values[index] as (string | null)[]).push(value)
    }
  }

  /** The new non-ASCII text values, whose normal forms the database must give before {@link finish}. */
  newNonAsciiValues(): string[] {
    return nonAsciiValuesNew(
      this.#columns.map(({ column }, index) => [column, this.#values[index] as (string | null)[]]),
    )
  }

  /** The patched table, or undefined (with {@link refused} saying why) where a row came, went or moved. */
  finish(forms: ReadonlyMap<string, TextForms>): MergedTable | undefined {
    const table = this.#table
    if (!this.#refused && this.#count !== table.rows) this.#refused = 'a row went'
    if (this.#refused) return undefined
    const changedRow = new Uint8Array(table.rows)
    const columns = new Map<string, Column>()
    this.#columns.forEach(({ name, column }, index) => {
      const rows = this.#rows[index] as number[]
      if (rows.length === 0) {
        columns.set(name, column)
        return
      }
      const extended = column.extend(this.#values[index] as (string | null)[], forms)
      const codes = codesFor(extended.distinct, table.rows)
      if (codes.constructor === column.codes.constructor) codes.set(column.codes)
      else for (let row = 0; row < table.rows; row++) codes[row] = column.codes[row] as number
      for (let at = 0; at < rows.length; at++) {
        const row = rows[at] as number
        codes[row] = extended.codes[at] as number
        changedRow[row] = 1
      }
      columns.set(name, compacted(extended.withCodes(codes)))
    })
    const oldToNew = new Int32Array(table.rows)
    const added: number[] = []
    for (let row = 0; row < table.rows; row++) {
      if (changedRow[row]) {
        oldToNew[row] = -1
        added.push(row)
      } else oldToNew[row] = row
    }
    return { ...table, columns, oldToNew, addedRows: Uint32Array.from(added) }
  }

  /** The row with the ids of `fields` (a binary search in the tiebreak order), or -1. */
  #rowOf(fields: readonly (string | null)[]): number {
    const { rowByTie, ids } = this.#table
    let low = 0
    let high = this.#table.rows
    while (low < high) {
      const middle = (low + high) >>> 1
      const row = rowByTie[middle] as number
      let difference = 0
      for (let index = 0; difference === 0 && index < this.#idCount; index++) {
        difference = Number(fields[index]) - ((ids[index] as Uint32Array)[row] as number)
      }
      if (difference > 0) low = middle + 1
      else if (difference < 0) high = middle
      else return row
    }
    return -1
  }
}

/**
 * The column with its dictionary cut to the values its rows hold, once values no row holds any more are most of it:
 * each write of every price adds its new prices to the dictionary, and without this it would grow by the list's
 * size with each.
 */
function compacted(column: Column): Column {
  const used = new Uint8Array(column.distinct)
  const { codes } = column
  for (let row = 0; row < codes.length; row++) used[codes[row] as number] = 1
  let live = 0
  for (let code = 1; code < used.length; code++) live += used[code] as number
  if (column.distinct - 1 <= 2 * live + 1024) return column
  return column.compacted(used)
}
