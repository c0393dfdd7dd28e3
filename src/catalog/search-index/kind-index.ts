import { compareDecimal, type DecimalValue, parseDecimal } from '../../domain/decimal.js'
import { GLASS_PRICE_FILTERS, type GlassPriceFilter } from '../../domain/glass-price-fields.js'
import type { GlassPriceListItem, SortColumn, SortDirection } from '../../glass-prices/glass-price-schemas.js'
import { buildPage, type Page, type PageRequest } from '../../http/page.js'
import { FACET_VALUES, type Facets, facetFields, type NumericFacet, type TextFacet } from '../facets.js'
import type { Filter, ItemField, Kind, Range, ValueType } from '../kind.js'
import { glasses } from '../kinds.js'
import {
  activeFilters,
  type ExactFilters,
  type FilterValues,
  resolveSort,
  type SearchRequest,
} from '../search-query.js'
import { type FieldValues, indexedForSimilarity, suggestionText, trigramPostings } from '../suggest.js'
import {
  type Condition,
  codeCondition,
  compareCondition,
  matchRows,
  normSortKey,
  orNull,
  prepareTextColumn,
  type SortKey,
  sortedWindow,
  sortKey,
  substringCandidates,
  textCondition,
  type ValueCondition,
  withRowFlags,
} from './matching.js'
import { type IdentifiedTable, mergeRows, newNonAsciiValues, type RowChanges } from './merge.js'
import type { IndexClient } from './search-index.js'
import {
  type Column,
  ColumnBuilder,
  countingPass,
  Lazy,
  NULL_CODE,
  rowRanks,
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
  readonly priceIds: Float64Array
}

export interface PriceTable extends IdentifiedTable {
  readonly dataGeneration: number
  /** Row → entry id (`ids[0]`). */
  readonly entryIds: Float64Array
}

/** The columns of `<kind>_mv` the index keeps (besides sku_id, which only orders ties). */
function matviewColumnSpecs(kind: Kind): ColumnSpec[] {
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
 * The markup of a glass price list entry as a sort key, in SQL over the entry `e`: (price − purchase) / purchase ×
 * 100 to 22 decimals (distinct markups of prices with 2 decimals below 10^8 differ by more than 10^-18, so the order
 * is exact), and 10^15, above any markup, where the purchase is 0: those sort last, first descending. The listing's
 * SQL orders by it, and the index keeps it as a column, so both compare the same values.
 */
export const MARKUP_SORT_SQL = 'coalesce(((e.price - e.purchase) * 100)::numeric(40, 22) / nullif(e.purchase, 0), 1e15)'

/**
 * The columns of `<kind>_price` the index keeps (besides id): the entry, and who changed it last and on which
 * business day (`timezone`) for the listing; the glass price list's, its markup's sort key too.
 */
function priceColumnSpecs(kind: Kind, timezone: string): ColumnSpec[] {
  return [
    ...(kind === glasses ? [{ name: 'markup', type: 'decimal' as const, sql: MARKUP_SORT_SQL }] : []),
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
const coverageColumn = (range: Range): string => `${range.column}~covered`

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
): Promise<{ rows: number; columns: Map<string, Column>; ids: Float64Array[]; tie: Pick<Table, 'tie' | 'rowByTie'> }> {
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
  const ids = idArrays.map((array) => array.subarray(0, rows))
  for (const id of ids) {
    for (let row = 0; row < rows; row++) {
      const value = id[row] as number
      if (!(Number.isInteger(value) && value >= 0 && value < 2 ** 32)) throw new Error('an id out of the index range')
    }
  }

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
  const rowByTie = new Uint32Array(rows)
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
    const ordered = new Float64Array(rows)
    for (let index = 0; index < rows; index++) ordered[index] = id[natural[index] as number] as number
    return ordered
  })
  return { rows, columns, ids: orderedIds, tie: tieOf(rowByTie) }
}

/** What a row covers of an optional range: its own value where it has one, else its zone (see {@link coverageColumn}). */
function coverageText(point: string | null, from: string | null, to: string | null): string {
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
function prepare(kind: Kind, columns: ReadonlyMap<string, Column>, byPriceList: boolean): void {
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
    }
  }
}

const matviewOrder = (kind: Kind) => kind.order.map((field) => field.column)
const priceOrder = (kind: Kind) => kind.order.flatMap((field) => (field.entryColumn ? [field.entryColumn] : []))

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

function matviewTable(
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
    priceIds: table.ids[1] as Float64Array,
  }
}

/** Reads the kind's price list. Run inside the snapshot that read `dataGeneration`. */
export async function loadPriceTable(
  client: IndexClient,
  kind: Kind,
  dataGeneration: number,
  timezone: string,
): Promise<PriceTable> {
  const table = await readTable(
    client,
    `${kind.priceTable} e`,
    priceColumnSpecs(kind, timezone),
    ['id'],
    priceOrder(kind),
  )
  return priceTable(kind, { ...table, ...table.tie }, dataGeneration)
}

/** The table as a price table; `prepared`: its filters' postings built now (at a read), else on first use. */
function priceTable(kind: Kind, table: IdentifiedTable, dataGeneration: number, prepared = true): PriceTable {
  if (prepared) prepare(kind, table.columns, true)
  return {
    rows: table.rows,
    columns: table.columns,
    ids: table.ids,
    tie: table.tie,
    rowByTie: table.rowByTie,
    dataGeneration,
    entryIds: table.ids[0] as Float64Array,
  }
}

/** The row of the entry with id `id`, or -1: a binary search over the rows in id order. */
function rowOfEntry(prices: PriceTable, id: number): number {
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

/** The ids the change log holds for a kind's source (`p` entries, `s` SKUs) after generation `after`, up to `upTo`. */
export async function changedIds(
  client: IndexClient,
  kind: Kind,
  source: 'p' | 's',
  after: number,
  upTo: number,
): Promise<number[]> {
  const rows = await client.query<{ id: string | number }>(
    `SELECT DISTINCT id FROM catalog_change WHERE kind = $1 AND source = $2 AND generation > $3 AND generation <= $4`,
    [kind.path, source, after, upTo],
  )
  return rows.map((row) => Number(row.id))
}

/** An SQL array literal of integer ids. */
const idArray = (ids: readonly number[]) => `'{${ids.map((id) => String(Math.trunc(id))).join(',')}}'::bigint[]`

/** Reads rows through COPY as they come: per column its values, per id column its ids. */
async function readRows(
  client: IndexClient,
  select: string,
  specs: readonly ColumnSpec[],
  idCount: number,
): Promise<Omit<RowChanges, 'removed'>> {
  const values = specs.map((): (string | null)[] => [])
  const ids = Array.from({ length: idCount }, (): number[] => [])
  const parser = new CopyTextParser((fields) => {
    for (let index = 0; index < idCount; index++) (ids[index] as number[]).push(Number(fields[index]))
    for (let index = 0; index < specs.length; index++)
      (values[index] as (string | null)[]).push(fields[idCount + index] ?? null)
  })
  for await (const chunk of client.copyOut(select)) parser.push(chunk)
  parser.end()
  return {
    rows: (ids[0] as number[]).length,
    values: new Map(specs.map((spec, index) => [spec.name, values[index] as (string | null)[]])),
    ids: ids.map((list) => Float64Array.from(list)),
  }
}

/** `changes` merged into `table`, with the normal forms of new non-ASCII values from the database. */
async function merged(client: IndexClient, table: IdentifiedTable, changes: RowChanges, order: readonly string[]) {
  const forms = await databaseForms(client, newNonAsciiValues(table, changes))
  return mergeRows(table, changes, order, forms)
}

/**
 * The price table brought to `dataGeneration` by the entries the change log names (`ids`): those rows are
 * dropped and read again as they are now (a deleted entry is not read). Run inside the snapshot that read
 * `dataGeneration`. Keeps the SKU → entry pairing of `matview` up to date.
 */
export async function applyPriceChanges(
  client: IndexClient,
  kind: Kind,
  prices: PriceTable,
  ids: readonly number[],
  dataGeneration: number,
  timezone: string,
  matview: MatviewTable | undefined,
): Promise<PriceTable> {
  const removed = new Uint8Array(prices.rows)
  for (const id of ids) {
    const row = rowOfEntry(prices, id)
    if (row >= 0) removed[row] = 1
  }
  const specs = priceColumnSpecs(kind, timezone)
  const added = await readRows(
    client,
    `SELECT e.id, ${specs.map((spec) => spec.sql ?? spec.name).join(', ')} FROM ${kind.priceTable} e WHERE e.id = ANY(${idArray(ids)})`,
    specs,
    1,
  )
  const table = await merged(client, prices, { removed, ...added }, priceOrder(kind))
  const next = priceTable(kind, table, dataGeneration, false)
  carryOrders(prices, next, table.oldToNew, table.addedRows)
  if (matview) carryEntryRows({ matview, prices }, { matview, prices: next }, { prices: table.oldToNew })
  return next
}

/**
 * The matview table brought to a later refresh by the SKUs whose rows may have changed: those the change log names,
 * and those priced (before or now) by an entry it names. Their rows are dropped and read again as they are now.
 * Run inside the snapshot that read `versions`.
 */
export async function applyMatviewChanges(
  client: IndexClient,
  kind: Kind,
  matview: MatviewTable,
  changed: { readonly entries: readonly number[]; readonly skus: readonly number[] },
  versions: { readonly matviewVersion: number; readonly refreshedGeneration: number },
  prices: PriceTable | undefined,
): Promise<MatviewTable> {
  const skus = new Set(changed.skus)
  const entries = new Set(changed.entries)
  const [skuIds, priceIds] = matview.ids as [Float64Array, Float64Array]
  for (let row = 0; row < matview.rows; row++) {
    if (entries.has(priceIds[row] as number)) skus.add(skuIds[row] as number)
  }
  const specs = matviewColumnSpecs(kind)
  const added = await readRows(
    client,
    // Both lookups go through the matview's indexes (sku_id, price_id); an OR of them would scan it.
    `WITH affected AS (
       SELECT unnest(${idArray([...skus])}) AS sku_id
       UNION SELECT sku_id FROM ${kind.matview} WHERE price_id = ANY(${idArray([...entries])})
     )
     SELECT m.sku_id, m.price_id, ${specs.map((spec) => `m.${spec.sql ?? spec.name}`).join(', ')}
     FROM affected a JOIN ${kind.matview} m ON m.sku_id = a.sku_id`,
    specs,
    2,
  )
  for (const sku of added.ids[0] as Float64Array) skus.add(sku)
  const removed = new Uint8Array(matview.rows)
  for (let row = 0; row < matview.rows; row++) if (skus.has(skuIds[row] as number)) removed[row] = 1
  const values = new Map(added.values)
  for (const range of kind.ranges) {
    if (range.sku !== 'optional') continue
    const [point, from, to] = ['', '_from', '_to'].map((suffix) => values.get(`${range.column}${suffix}`) ?? []) as [
      (string | null)[],
      (string | null)[],
      (string | null)[],
    ]
    values.set(
      coverageColumn(range),
      point.map((own, row) => coverageText(own, from[row] ?? null, to[row] ?? null)),
    )
  }
  const table = await merged(client, matview, { removed, rows: added.rows, values, ids: added.ids }, matviewOrder(kind))
  const next = matviewTable(kind, table, versions, false)
  carryOrders(matview, next, table.oldToNew, table.addedRows)
  if (prices) carryEntryRows({ matview, prices }, { matview: next, prices }, { matview: table.oldToNew })
  return next
}

/** Thrown (and caught by the caller) where the index cannot say exactly what SQL would: SQL answers instead. */
export class NotIndexable extends Error {
  override name = 'NotIndexable'
}

const decimalOf = (value: string | number) => {
  const parsed = parseDecimal(value)
  if (!parsed) throw new NotIndexable('not a decimal')
  return parsed
}

function columnOf(table: Table, name: string): Column {
  const column = table.columns.get(name)
  if (!column) throw new Error(`the index has no column ${name}`)
  return column
}

/** `low IS NULL OR low <= v` and `high IS NULL OR high >= v` on two columns. */
function insideConditions(table: Table, column: string, value: string | number): ValueCondition[] {
  const decimal = decimalOf(value)
  return [
    compareCondition(columnOf(table, `${column}_from`), decimal, (c) => c <= 0, true),
    compareCondition(columnOf(table, `${column}_to`), decimal, (c) => c >= 0, true),
  ]
}

/** The conditions of one filter on a matview table, as `matviewCondition` writes them. */
function matviewConditions(
  table: Table,
  filter: Filter,
  value: string | number,
  norm: (text: string) => string,
  exact = false,
): Condition[] {
  if (filter.match === 'substring') {
    return [textCondition(columnOf(table, filter.attribute.column), norm(String(value)), exact)]
  }
  if (filter.match === 'equals') {
    return [compareCondition(columnOf(table, filter.attribute.column), decimalOf(value), (c) => c === 0)]
  }
  const { range } = filter
  if (range.sku === 'required') {
    return [compareCondition(columnOf(table, range.column), decimalOf(value), (c) => c === 0)]
  }
  if (range.sku === 'none') return insideConditions(table, range.column, value)
  // The SKU's own value where it has one, else its zone: `low ≤ value ≤ high` on the coverage column.
  const decimal = decimalOf(value)
  const column = columnOf(table, coverageColumn(range))
  const covers = column.memo('coverage', () =>
    column.values.map((text) => text.split('\t').map((bound) => (bound === '' ? undefined : parseDecimal(bound)))),
  )
  return [
    codeCondition(column, (code) => {
      if (code === NULL_CODE) return false
      const [low, high] = covers[code] as (DecimalValue | undefined)[]
      return (!low || compareDecimal(low, decimal) <= 0) && (!high || compareDecimal(high, decimal) >= 0)
    }),
  ]
}

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
function carryEntryRows(
  from: IndexedSearch,
  to: IndexedSearch,
  moved: { readonly matview?: Int32Array; readonly prices?: Int32Array },
): void {
  const kept = entryRowsKept.get(from.matview)
  if (kept?.prices !== from.prices || !kept.rows.ready) return
  const before = kept.rows.get()
  keepEntryRows(to.matview, to.prices, () => {
    const rows = new Int32Array(to.matview.rows).fill(-1)
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
function entryRowsOf(matview: MatviewTable, prices: PriceTable): Int32Array {
  const kept = entryRowsKept.get(matview)
  if (kept?.prices === prices) return kept.rows.get()
  keepEntryRows(matview, prices, () => {
    const rows = new Int32Array(matview.rows)
    for (let row = 0; row < matview.rows; row++) rows[row] = rowOfEntry(prices, matview.priceIds[row] as number)
    return rows
  })
  return entryRowsOf(matview, prices)
}

/** The conditions of one filter on a price table, as `entryCondition` writes them. */
function entryConditions(
  prices: PriceTable,
  matview: MatviewTable,
  filter: Filter,
  value: string | number,
  norm: (text: string) => string,
  exact = false,
): Condition[] {
  if (filter.match === 'covers') return insideConditions(prices, filter.range.column, value)
  const { attribute } = filter
  if (attribute.entry === 'none') {
    // Entries that price at least one matview row matching the filter.
    const rows = matchRows(matview, matviewConditions(matview, filter, value, norm, exact), true)
    const entryRows = entryRowsOf(matview, prices)
    const hit = new Uint8Array(prices.rows)
    const entries = new Uint32Array(Math.min(rows.length, prices.rows))
    let found = 0
    for (let index = 0; index < rows.length; index++) {
      const entry = entryRows[rows[index] as number] as number
      if (entry < 0 || hit[entry]) continue
      hit[entry] = 1
      entries[found++] = entry
    }
    return [{ kind: 'rows', rows: entries.subarray(0, found).sort(), member: hit }]
  }
  const column = columnOf(prices, attribute.column)
  const condition =
    filter.match === 'substring'
      ? textCondition(column, norm(String(value)), exact)
      : compareCondition(column, decimalOf(value), (c) => c === 0)
  return [attribute.entry === 'wildcard' ? orNull(condition) : condition]
}

/** The column an item field reads in a mode, or undefined where an entry lacks it (NULL). */
function fieldColumn(table: Table, field: ItemField, byPriceList: boolean): Column | undefined {
  if (!byPriceList) return columnOf(table, field.column)
  return field.entryColumn ? columnOf(table, field.entryColumn) : undefined
}

export interface IndexedSearch {
  readonly matview: MatviewTable
  readonly prices: PriceTable
}

/** The conditions of each active filter of a search, in the tables of its mode. */
function filterConditions(
  kind: Kind,
  tables: IndexedSearch,
  byPriceList: boolean,
  filters: FilterValues,
  norm: (text: string) => string,
  exactFilters?: ExactFilters,
): { filter: Filter; conditions: Condition[] }[] {
  return activeFilters(kind, filters, exactFilters).map(({ filter, value, exact }) => ({
    filter,
    conditions: byPriceList
      ? entryConditions(tables.prices, tables.matview, filter, value, norm, exact)
      : matviewConditions(tables.matview, filter, value, norm, exact),
  }))
}

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
    const to = from + size
    if (matches && matches.length <= table.rows / 8)
      window = sortedWindow(table, matches, keysOf(table, specs), from, to)
    else {
      // Many matches: walk the rows in the requested order (kept per table and order) until the page is full.
      const order = sortedPermutation(table, specs)
      window = matches ? walk(order, matches, table.rows, from, to) : order.subarray(from, Math.min(to, order.length))
    }
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

/** The matches at positions `from` … `to` - 1 of `order` (every row of the table, in some order). */
function walk(order: Uint32Array, matches: Uint32Array, rows: number, from: number, to: number): Uint32Array {
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

/** At most this many orders are kept per table (4 bytes a row each). */
/** One key of a sort: a column's values ascending or descending (NULLs last, first), maybe of lower or normal form. */
interface KeySpec {
  readonly column: string
  readonly descending: boolean
  /** By `lower(value)`. */
  readonly ignoreCase: boolean
  /** By `optics_norm(value) COLLATE "C"`. */
  readonly norm: boolean
}

function keysOf(table: Table, specs: readonly KeySpec[]): SortKey[] {
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

// The contract's listing orders both ways and the retail price both ways, with room for a few more (the listing's
// other orders are computed again once pushed out).
const KEPT_ORDERS = 12
const keptOrders = new WeakMap<Table, Map<string, KeptOrder>>()

const orderName = (specs: readonly KeySpec[], tieDescending: boolean) =>
  JSON.stringify([specs.map((spec) => [spec.column, spec.descending, spec.ignoreCase, spec.norm]), tieDescending])

/** The table's rows ordered by `specs` then the tiebreak (descending with `tieDescending`), kept per table. */
function sortedPermutation(table: Table, specs: readonly KeySpec[], tieDescending = false): Uint32Array {
  const name = orderName(specs, tieDescending)
  const kept = keptOrders.get(table)
  const found = kept?.get(name)
  if (kept && found) {
    kept.delete(name)
    kept.set(name, found)
    return found.rows.get()
  }
  let order: Uint32Array = tieDescending ? table.rowByTie.slice().reverse() : table.rowByTie
  const rank = new Uint32Array(table.rows)
  const keys = keysOf(table, specs)
  for (let index = keys.length - 1; index >= 0; index--) {
    const { codes, ranks, range } = keys[index] as SortKey
    for (let row = 0; row < table.rows; row++) rank[row] = ranks[codes[row] as number] as number
    order = countingPass(order, rank, range)
  }
  if (order === table.rowByTie) order = order.slice()
  const rows = order
  keep(table, { specs, tieDescending, rows: Lazy.of(rows) })
  return order
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
function carryOrders(old: Table, next: Table, oldToNew: Int32Array, added: Uint32Array): void {
  const kept = keptOrders.get(old)
  if (!kept) return
  // Only orders in use (computed) are carried: one never asked for since the last write is dropped, so no chain of
  // versions builds up behind orders nobody reads.
  for (const { specs, tieDescending, rows } of kept.values()) {
    if (!rows.ready) continue
    const before = rows.get()
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
  const order = new Uint32Array(next.rows)
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
  let kept = cooccurrences.get(by)
  if (!kept) {
    kept = new WeakMap()
    cooccurrences.set(by, kept)
  }
  let counts = kept.get(of)
  if (!counts) {
    counts = new Uint32Array(by.distinct * of.distinct)
    const [left, right, width] = [by.codes, of.codes, of.distinct]
    for (let row = 0; row < table.rows; row++) {
      const cell = (left[row] as number) * width + (right[row] as number)
      counts[cell] = (counts[cell] as number) + 1
    }
    kept.set(of, counts)
  }
  return counts
}

/** Code → how many of `rows` carry it (all rows when undefined). */
function tally(column: Column, rows: Uint32Array | undefined): Uint32Array {
  const counts = new Uint32Array(column.distinct)
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

/**
 * The `k` codes with the highest counts, ties by ascending rank (`ORDER BY count DESC, value`), and how many codes
 * are present at all. Thresholds are found by selection, so only about `k` codes are ever sorted.
 */
function topCodes(counts: Uint32Array, ranks: Uint32Array, k: number): { codes: number[]; distinct: number } {
  const order = (a: number, b: number) =>
    (counts[b] as number) - (counts[a] as number) || (ranks[a] as number) - (ranks[b] as number)
  const presentCounts = new Uint32Array(counts.length)
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
  for (let code = 1; code < counts.length; code++) {
    const count = counts[code] as number
    if (count > threshold) chosen.push(code)
    else if (count === threshold) tied.push(code)
  }
  const wanted = k - chosen.length
  if (tied.length > wanted) {
    const last = selectKth(
      Uint32Array.from(tied, (code) => ranks[code] as number),
      wanted - 1,
    )
    for (const code of tied) if ((ranks[code] as number) <= last) chosen.push(code)
  } else chosen.push(...tied)
  return { codes: chosen.sort(order).slice(0, k), distinct }
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
      const ordered = column.memo('codes by rank', () => {
        const ranks = column.ranks()
        return Uint32Array.from({ length: column.distinct - 1 }, (_, index) => index + 1).sort(
          (a, b) => (ranks[a] as number) - (ranks[b] as number),
        )
      })
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
    const { codes, distinct } = topCodes(counts, column.ranks(), FACET_VALUES)
    text[field.name] = {
      values: codes.map((code) => ({ value: column.values[code] as string, count: counts[code] as number })),
      distinct,
    }
  }
  return { total: all ? all.length : table.rows, text, numeric }
}

/**
 * Every value of an item field's dictionary with how many rows carry it (0 for a value no row carries any more,
 * and for NULL), or undefined where there is none: value `i` is the column's code `i`. The list of normalised
 * texts is kept with the dictionary, so the similarity postings of suggestions outlive writes that change counts
 * alone.
 */
export function fieldValueCounts(
  tables: IndexedSearch,
  field: ItemField,
  byPriceList: boolean,
): FieldValues | undefined {
  const table: Table = byPriceList ? tables.prices : tables.matview
  const column = fieldColumn(table, field, byPriceList)
  if (!column) return undefined
  // Kept with the column: the same list serves every keystroke until the data changes.
  return column.rowMemo('suggestion values', (): FieldValues => {
    const { norms } = column
    // Where a suggestion text equals the normal form (nearly always), the same string serves both.
    const texts = column.memo('suggestion texts', () =>
      column.values.map((value, code) => {
        if (code === NULL_CODE) return ''
        const text = suggestionText(value)
        return text === norms[code] ? (norms[code] as string) : text
      }),
    )
    // A substring of a suggestion text is one of its normal form too where the two agree: the column's n-gram
    // index finds the candidates, and the few values whose forms differ are always looked at.
    const differing = column.memo('suggestion texts differing', () => {
      const codes: number[] = []
      for (let code = 1; code < texts.length; code++) if (texts[code] !== norms[code]) codes.push(code)
      return codes
    })
    const counts = new Uint32Array(column.distinct)
    for (let code = 1; code < column.distinct; code++) counts[code] = column.count(code)
    return {
      values: column.values,
      normalised: texts,
      counts,
      candidates: (query) => {
        const codes = substringCandidates(column, query)?.codes
        return codes && differing.length > 0 ? [...codes, ...differing] : codes
      },
    }
  })
}

/** The glass price listing's request, as glass-price-filter.ts and the repository read it. */
export interface IndexedListing {
  readonly filter: GlassPriceFilter
  readonly page: PageRequest
  readonly sortColumn: SortColumn
  readonly sortDirection: SortDirection
}

/**
 * The columns of each listing order before the id, as `orderExpressions` of the repository sorts them: the keys'
 * normalised text byte-wise, or the values themselves (text byte-wise, numbers by value). A filter's sort (see
 * domain/glass-price-fields.ts) orders by its column alone, text normalised.
 */
const listingKeys: Readonly<Record<SortColumn, { readonly columns: readonly string[]; readonly norm: boolean }>> = {
  ID: { columns: [], norm: false },
  PARAMETERS: { columns: ['manufacturer', 'brand', 'model'], norm: true },
  UPDATED_ON: { columns: ['last_updated_on'], norm: false },
  USER: { columns: ['updated_by'], norm: false },
  MARKUP: { columns: ['markup'], norm: false },
  ...(Object.fromEntries(
    GLASS_PRICE_FILTERS.flatMap((field) =>
      field.sort ? [[field.sort.key, { columns: [field.source.column], norm: field.match === 'text' }]] : [],
    ),
  ) as Record<NonNullable<(typeof GLASS_PRICE_FILTERS)[number]['sort']>['key'], { columns: string[]; norm: boolean }>),
}

/**
 * A page of the glass price listing from the price table, as `buildListingQueries` computes it: substring (or
 * exact) and inclusive bound filters, ordered by the sort column's value (PARAMETERS: the normalised keys byte-wise) and the
 * id, every key in the requested direction.
 */
export function listingTable(
  prices: PriceTable,
  request: IndexedListing,
  norm: (text: string) => string,
): Page<GlassPriceListItem> {
  const { filter } = request
  const conditions: Condition[] = []
  // Every described filter (domain/glass-price-fields.ts); one whose match this does not know leaves it to SQL.
  for (const field of GLASS_PRICE_FILTERS as readonly (typeof GLASS_PRICE_FILTERS)[number][]) {
    const column = columnOf(prices, field.source.column)
    switch (field.match) {
      case 'text': {
        const value = filter[field.name]
        if (value !== undefined) {
          conditions.push(textCondition(column, norm(value), filter.exact?.includes(field.name) ?? false))
        }
        break
      }
      case 'band': {
        const [from, to] = [filter[field.from.parameter], filter[field.to.parameter]]
        if (from !== undefined) conditions.push(compareCondition(column, decimalOf(from), (c) => c >= 0))
        if (to !== undefined) conditions.push(compareCondition(column, decimalOf(to), (c) => c <= 0))
        break
      }
      default:
        throw new NotIndexable(`no listing filter matching ${(field as { match: string }).match}`)
    }
  }
  const matches = conditions.length > 0 ? matchRows(prices, conditions, true) : undefined
  const total = matches ? matches.length : prices.rows

  const descending = request.sortDirection === 'DESC'
  const { columns, norm: byNorm } = listingKeys[request.sortColumn]
  const specs = columns.map((column): KeySpec => ({ column, descending, ignoreCase: false, norm: byNorm }))
  const { page, size } = request.page
  const from = page * size
  const to = from + size
  let window: Uint32Array
  if (from >= total) window = new Uint32Array(0)
  else if (matches && matches.length <= prices.rows / 8) {
    window = sortedWindow(prices, matches, keysOf(prices, specs), from, to, descending)
  } else {
    const order = sortedPermutation(prices, specs, descending)
    window = matches ? walk(order, matches, prices.rows, from, to) : order.subarray(from, Math.min(to, order.length))
  }
  const column = (name: string) => columnOf(prices, name)
  const [manufacturer, brand, model, lastUpdatedOn, price, purchase, user] = [
    'manufacturer',
    'brand',
    'model',
    'last_updated_on',
    'price',
    'purchase',
    'updated_by',
  ].map(column) as Column[]
  const value = (of: Column, row: number) => of.json[of.codes[row] as number]
  const content: GlassPriceListItem[] = []
  for (let index = 0; index < window.length; index++) {
    const row = window[index] as number
    content.push({
      id: prices.entryIds[row] as number,
      manufacturer: value(manufacturer as Column, row) as string,
      brand: value(brand as Column, row) as string,
      model: value(model as Column, row) as string,
      lastUpdatedOn: value(lastUpdatedOn as Column, row) as string,
      price: value(price as Column, row) as number,
      purchase: value(purchase as Column, row) as number,
      user: value(user as Column, row) as string,
    })
  }
  return buildPage(content, request.page, total)
}

/**
 * Builds, once per load, what requests would otherwise build on first use: the postings of every column (facets
 * count through them), the SKU → entry pairing, the orders of the commonest sorts (retail price both ways; every
 * listing order of the glass price list) and the similarity postings of large suggestion fields.
 */
export function warmTables(kind: Kind, tables: IndexedSearch, timezoneListing: boolean): void {
  prepare(kind, tables.matview.columns, false)
  prepare(kind, tables.prices.columns, true)
  for (const table of [tables.matview, tables.prices]) for (const column of table.columns.values()) void column.postings
  void entryRowsOf(tables.matview, tables.prices)
  for (const byPriceList of [false, true]) {
    for (const direction of ['asc', 'desc'] as const) {
      searchTables(
        kind,
        tables,
        {
          byPriceList,
          filters: {},
          page: { page: 0, size: 1, sort: [{ property: 'retailPrice', direction, ignoreCase: false }] },
        },
        (text) => text,
      )
    }
    for (const field of kind.valueFields) {
      if (field.type !== 'text') continue
      const values = fieldValueCounts(tables, field, byPriceList)
      if (values && indexedForSimilarity(values)) trigramPostings(values)
    }
  }
  if (!timezoneListing) return
  for (const sortColumn of ['ID', 'PARAMETERS', 'PRICE', 'PURCHASE'] as const) {
    for (const sortDirection of ['ASC', 'DESC'] as const) {
      listingTable(
        tables.prices,
        { filter: {}, page: { page: 0, size: 1, sort: [] }, sortColumn, sortDirection },
        (t) => t,
      )
    }
  }
}
