import { compareDecimal, type DecimalValue, parseDecimal } from '../../domain/decimal.js'
import type { Filter, ItemField, Kind } from '../kinds/kind.js'
import { activeFilters, type ExactFilters, type FilterValues } from '../search/search-query.js'
import { entryRowsOf } from './entry-rows.js'
import { coverageColumn, type MatviewTable, type PriceTable } from './load.js'
import {
  type Condition,
  codeCondition,
  compareCondition,
  matchRows,
  orNull,
  textCondition,
  type ValueCondition,
} from './matching.js'
import { scratchBytes, scratchUint32 } from './scratch.js'
import { type Column, NULL_CODE, type Table } from './table.js'

/*
 * A search's filters as conditions on the index's tables, as search-query.ts writes them in SQL: on the matview
 * (`matviewCondition`) or on the price list (`entryCondition`, looking into the matview for an attribute only SKUs
 * carry).
 */

/** Thrown (and caught by the caller) where the index cannot say exactly what SQL would: SQL answers instead. */
export class NotIndexable extends Error {
  override name = 'NotIndexable'
}

export const decimalOf = (value: string | number) => {
  const parsed = parseDecimal(value)
  if (!parsed) throw new NotIndexable('not a decimal')
  return parsed
}

export function columnOf(table: Table, name: string): Column {
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
export function matviewConditions(
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

/** The conditions of one filter on a price table, as `entryCondition` writes them. */
export function entryConditions(
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
    const hit = scratchBytes(prices.rows)
    const entries = scratchUint32(Math.min(rows.length, prices.rows))
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
export function fieldColumn(table: Table, field: ItemField, byPriceList: boolean): Column | undefined {
  if (!byPriceList) return columnOf(table, field.column)
  return field.entryColumn ? columnOf(table, field.entryColumn) : undefined
}

export interface IndexedSearch {
  readonly matview: MatviewTable
  readonly prices: PriceTable
}

/** The conditions of each active filter of a search, in the tables of its mode. */
export function filterConditions(
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
