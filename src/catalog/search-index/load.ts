import type { Kind, Range, ValueType } from '../kinds/kind.js'
import type { IndexClient } from './index-database.js'
import { prepareTextColumn } from './matching.js'
import type { IdentifiedTable } from './merge.js'
import {
  type Column,
  ColumnBuilder,
  countingPass,
  idsOf,
  NULL_CODE,
  rowRanks,
  sharedUint32,
  sortByIds,
  type Table,
  type TextForms,
  tieOf,
} from './table.js'
import { CopyTextParser } from './text.js'

/*
 * One kind's searchable rows in memory, in both modes, each at the data version it was read at:
 * - the matview (`byPriceList: false`): every column of `<kind>_mv`, rows in the kind's natural order;
 * - the price list (`byPriceList: true`): the entries' columns, rows in the natural order of entries; a filter on
 *   an attribute only SKUs carry looks into the matview table (which must be the one of the same snapshot).
 * Everything a search answers comes from here exactly as the SQL of search-query.ts computes it: the same rows,
 * the same order, the same totals (the equality test proves it against SQL on both databases).
 */

export interface ColumnSpec {
  readonly name: string
  readonly type: ValueType
  /** The SQL that reads it, when not the column of that name. */
  readonly sql?: string
}

export interface MatviewTable extends IdentifiedTable {
  /** `'m' || matview_version`: the version a matview search reads. */
  readonly matviewVersion: number
  /**
   * A data generation the matview shows at least (the one its refresh started from): every change the matview may
   * lack since an earlier version is logged after it.
   */
  readonly refreshedGeneration: number
  /** Row → the id of the entry that prices it (`ids[1]`). */
  readonly priceIds: Uint32Array
}

export interface PriceTable extends IdentifiedTable {
  readonly dataGeneration: number
  /** Row → entry id (`ids[0]`). */
  readonly entryIds: Uint32Array
}

/**
 * A reader of one kind's price table beyond the kind's own search (the glass price listing,
 * glass-listing-reader.ts): the columns it needs besides the kind's, and what it builds once the table is read in
 * full. The index is given its readers as it is given its kinds, and names none of them.
 */
export interface PriceTableReader {
  /** The path of the kind whose price table it reads. */
  readonly kind: string
  readonly columns: readonly ColumnSpec[]
  /** Builds what its requests would otherwise build on first use (after a full read of the table), a step at a time. */
  warming(prices: PriceTable): Generator<void>
}

/** The columns of `<kind>_mv` the index keeps (besides sku_id, which only orders ties). */
export function matviewColumnSpecs(kind: Kind): ColumnSpec[] {
  return [
    { name: 'retail_price', type: 'decimal' },
    ...kind.attributes.map((a) => ({ name: a.column, type: a.type })),
    ...kind.ranges.filter((r) => r.sku !== 'none').map((r) => ({ name: r.column, type: r.type })),
    ...kind.ranges.flatMap((r) => [
      { name: `${r.column}_from`, type: r.type },
      { name: `${r.column}_to`, type: r.type },
    ]),
  ]
}

/** A text literal of SQL. */
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`

/**
 * The columns of `<kind>_price` the index keeps (besides id): the entry, and who changed it last and on which
 * business day (`timezone`) for a listing; first those a reader of the table adds (`extra`, see
 * {@link PriceTableReader}).
 */
export function priceColumnSpecs(kind: Kind, timezone: string, extra: readonly ColumnSpec[] = []): ColumnSpec[] {
  return [
    ...extra,
    { name: 'price', type: 'decimal' },
    { name: 'purchase', type: 'decimal' },
    { name: 'updated_by', type: 'text' },
    {
      name: 'last_updated_on',
      type: 'text',
      sql: `to_char(e.updated_at AT TIME ZONE ${literal(timezone)}, 'YYYY-MM-DD')`,
    },
    ...kind.attributes.filter((a) => a.entry !== 'none').map((a) => ({ name: a.column, type: a.type })),
    ...kind.ranges.flatMap((r) => [
      { name: `${r.column}_from`, type: r.type },
      { name: `${r.column}_to`, type: r.type },
    ]),
  ]
}

/** Normal forms of non-ASCII text values, computed by the database itself. */
export async function databaseForms(
  client: Pick<IndexClient, 'query'>,
  values: readonly string[],
): Promise<Map<string, TextForms>> {
  const forms = new Map<string, TextForms>()
  if (values.length === 0) return forms
  const rows = await client.query<{ value: string; norm: string; lower: string }>(
    'SELECT value, optics_norm(value) AS norm, lower(value) AS lower FROM unnest($1::text[]) AS value',
    [values],
  )
  for (const row of rows) forms.set(row.value, { norm: row.norm, lower: row.lower })
  return forms
}

/** The column of a matview range's coverage: `coalesce(point, from)` and `coalesce(point, to)` as one value. */
export const coverageColumn = (range: Range): string => `${range.column}~covered`

/**
 * Reads a table through COPY, in whatever order the database sends it, then puts the rows in the natural order
 * of `order` (columns ascending, NULLs last, as PostgreSQL's ORDER BY) and then the ids (the unique tiebreak).
 * Sorting here, by radix passes over the values' ranks, is faster than the database's ordered scan.
 */
async function readTable(
  client: IndexClient,
  source: string,
  specs: readonly ColumnSpec[],
  idNames: readonly string[],
  order: readonly string[],
): Promise<{ rows: number; columns: Map<string, Column>; ids: Uint32Array[]; tie: Pick<Table, 'tie' | 'rowByTie'> }> {
  const builders = specs.map((spec) => new ColumnBuilder(spec.name, spec.type))
  const idCount = idNames.length
  let idArrays = idNames.map(() => new Float64Array(1024))
  let rows = 0
  const parser = new CopyTextParser((fields) => {
    if (rows === (idArrays[0] as Float64Array).length) {
      idArrays = idArrays.map((array) => {
        const grown = new Float64Array(array.length * 2)
        grown.set(array)
        return grown
      })
    }
    for (let index = 0; index < idCount; index++) (idArrays[index] as Float64Array)[rows] = Number(fields[index])
    for (let index = 0; index < builders.length; index++) {
      ;(builders[index] as ColumnBuilder).push(fields[idCount + index] ?? null)
    }
    rows++
  })
  const select = [...idNames, ...specs.map((spec) => spec.sql ?? spec.name)].join(', ')
  for await (const chunk of client.copyOut(`SELECT ${select} FROM ${source}`)) parser.push(chunk)
  parser.end()
  const unordered = builders.map((builder) => builder.build())
  const ids = idArrays.map((array) => idsOf(array.subarray(0, rows)))

  // Tiebreak order first, then stable passes from the last order column to the first.
  const byTie = sortByIds(rows, ids)
  let natural = byTie
  const byName = new Map(unordered.map((column) => [column.name, column]))
  for (let index = order.length - 1; index >= 0; index--) {
    const column = byName.get(order[index] as string) as Column
    natural = countingPass(natural, rowRanks(column), (column.ranks()[NULL_CODE] as number) + 1)
  }
  const position = new Uint32Array(rows)
  for (let index = 0; index < rows; index++) position[natural[index] as number] = index
  const rowByTie = sharedUint32(rows)
  for (let rank = 0; rank < rows; rank++) rowByTie[rank] = position[byTie[rank] as number] as number

  const columns = new Map<string, Column>()
  const nonAscii = new Set<string>()
  for (const column of unordered) {
    columns.set(column.name, column.permuted(natural))
    for (const value of column.nonAsciiValues()) nonAscii.add(value)
  }
  const forms = await databaseForms(client, [...nonAscii])
  for (const column of columns.values()) if (column.type === 'text') column.setForms(forms)
  const orderedIds = ids.map((id) => {
    const ordered = sharedUint32(rows)
    for (let index = 0; index < rows; index++) ordered[index] = id[natural[index] as number] as number
    return ordered
  })
  return { rows, columns, ids: orderedIds, tie: tieOf(rowByTie) }
}

/** What a row covers of an optional range: its own value where it has one, else its zone (see {@link coverageColumn}). */
export function coverageText(point: string | null, from: string | null, to: string | null): string {
  return point !== null ? `${point}\t${point}` : `${from ?? ''}\t${to ?? ''}`
}

/** Adds, per range a SKU may or may not carry, the column of what a row covers (see {@link coverageColumn}). */
function addCoverageColumns(kind: Kind, rows: number, columns: Map<string, Column>): void {
  for (const range of kind.ranges) {
    if (range.sku !== 'optional') continue
    const [point, from, to] = ['', '_from', '_to'].map(
      (suffix) => columns.get(`${range.column}${suffix}`) as Column,
    ) as [Column, Column, Column]
    const builder = new ColumnBuilder(coverageColumn(range), 'text')
    const text = (column: Column, row: number) => {
      const code = column.codes[row] as number
      return code === NULL_CODE ? null : (column.values[code] as string)
    }
    for (let row = 0; row < rows; row++) builder.push(coverageText(text(point, row), text(from, row), text(to, row)))
    columns.set(coverageColumn(range), builder.build())
  }
}

/** Builds, at load, the postings and n-gram indexes of the columns filters read, so no request pays for them. */
export function prepare(kind: Kind, columns: ReadonlyMap<string, Column>, byPriceList: boolean): void {
  for (const _ of preparing(kind, columns, byPriceList));
}

/** {@link prepare} a column at a time: it pauses after each. */
export function* preparing(kind: Kind, columns: ReadonlyMap<string, Column>, byPriceList: boolean): Generator<void> {
  for (const filter of kind.filters) {
    const names =
      filter.match === 'covers'
        ? byPriceList || filter.range.sku === 'none'
          ? [`${filter.range.column}_from`, `${filter.range.column}_to`]
          : [filter.range.sku === 'required' ? filter.range.column : coverageColumn(filter.range)]
        : [filter.attribute.column]
    for (const name of names) {
      const column = columns.get(name)
      if (!column) continue
      if (column.type === 'text' && filter.match === 'substring') prepareTextColumn(column)
      else void column.postings
      yield
    }
  }
}

export const matviewOrder = (kind: Kind) => kind.order.map((field) => field.column)
export const priceOrder = (kind: Kind) => kind.order.flatMap((field) => (field.entryColumn ? [field.entryColumn] : []))

/** Reads the kind's matview. Run inside a snapshot that also read `matviewVersion` and `refreshedGeneration`. */
export async function loadMatviewTable(
  client: IndexClient,
  kind: Kind,
  versions: { readonly matviewVersion: number; readonly refreshedGeneration: number },
): Promise<MatviewTable> {
  const table = await readTable(
    client,
    `${kind.matview} m`,
    matviewColumnSpecs(kind),
    ['sku_id', 'price_id'],
    matviewOrder(kind),
  )
  addCoverageColumns(kind, table.rows, table.columns)
  return matviewTable(kind, { ...table, ...table.tie }, versions)
}

export function matviewTable(
  kind: Kind,
  table: IdentifiedTable,
  versions: { readonly matviewVersion: number; readonly refreshedGeneration: number },
  prepared = true,
): MatviewTable {
  if (prepared) prepare(kind, table.columns, false)
  return {
    rows: table.rows,
    columns: table.columns,
    ids: table.ids,
    tie: table.tie,
    rowByTie: table.rowByTie,
    matviewVersion: versions.matviewVersion,
    refreshedGeneration: versions.refreshedGeneration,
    priceIds: table.ids[1] as Uint32Array,
  }
}

/** Reads the kind's price list. Run inside the snapshot that read `dataGeneration`. */
export async function loadPriceTable(
  client: IndexClient,
  kind: Kind,
  dataGeneration: number,
  columns: readonly ColumnSpec[],
): Promise<PriceTable> {
  const table = await readTable(client, `${kind.priceTable} e`, columns, ['id'], priceOrder(kind))
  return priceTable(kind, { ...table, ...table.tie }, dataGeneration)
}

/** The table as a price table; `prepared`: its filters' postings built now (at a read), else on first use. */
export function priceTable(kind: Kind, table: IdentifiedTable, dataGeneration: number, prepared = true): PriceTable {
  if (prepared) prepare(kind, table.columns, true)
  return {
    rows: table.rows,
    columns: table.columns,
    ids: table.ids,
    tie: table.tie,
    rowByTie: table.rowByTie,
    dataGeneration,
    entryIds: table.ids[0] as Uint32Array,
  }
}

/** The row of the entry with id `id`, or -1: a binary search over the rows in id order. */
export function rowOfEntry(prices: PriceTable, id: number): number {
  const { entryIds, rowByTie } = prices
  let low = 0
  let high = prices.rows
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((entryIds[rowByTie[middle] as number] as number) < id) low = middle + 1
    else high = middle
  }
  const row = rowByTie[low] as number
  return low < prices.rows && entryIds[row] === id ? row : -1
}
