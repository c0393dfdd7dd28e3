import { type Expression, type Kysely, type RawBuilder, type SelectQueryBuilder, type SqlBool, sql } from 'kysely'
import type { Tables } from '../../db/tables.js'
import { message } from '../../domain/messages.js'
import type { PageRequest, SortOrder } from '../../http/page.js'
import { invalidField } from '../../http/problem.js'
import { dataVersionSql, searchReads } from '../freshness/catalog-state.js'
import type { Filter, ItemField, Kind } from '../kinds/kind.js'
import { coveredRangeSql } from '../kinds/kind-schema.js'
import { kindQueries } from '../kinds/kind-tables.js'

/*
 * The search of one kind, from its descriptor: one query shape for the seven kinds and both modes.
 *
 * Matview mode (`byPriceList=false`) reads `<kind>_mv`: one row per priced SKU (per zone for zoned kinds).
 * Price-list mode (`byPriceList=true`) reads `<kind>_price`: item fields an entry lacks are NULL, and a filter on
 * an attribute only SKUs carry keeps the entries that price at least one SKU having it.
 */

/** Filter values as validated: text, or a decimal as a JSON number or numeric string; null/absent = no filter. */
export type FilterValues = Readonly<Record<string, string | number | null | undefined>>

/**
 * The text filters (by name) compared whole rather than as substrings: equal normal forms (`optics_norm` of the
 * key text), so a brand picked from a list does not also select every brand containing it. Beyond the contract.
 */
export type ExactFilters = readonly string[]

export interface SearchRequest {
  readonly byPriceList: boolean
  readonly filters: FilterValues
  readonly exact?: ExactFilters
  readonly page: PageRequest
}

/** A filter a request sets: its value, and for a text filter whether it is compared whole. */
export interface ActiveFilter {
  readonly filter: Filter
  readonly value: string | number
  readonly exact: boolean
}

type Row = Record<string, unknown>

/** Escapes LIKE metacharacters, so `%` and `_` in a filter are literal characters. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (match) => `\\${match}`)
}

/**
 * The condition "`column` contains `value`", normalised as the trigram index is (case, `ё`, trimming); `%` and `_`
 * in `value` are literal. `value` is trimmed here; an empty one matches every non-NULL value, so callers skip it.
 */
export function containsSql(column: RawBuilder<unknown>, value: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`optics_norm(${column}) LIKE '%' || optics_norm(${escapeLike(value.trim())}) || '%'`
}

/** The condition "`column` equals `value`" on their normal forms (trimmed, lower case, `ё` as `е`). */
export function equalsTextSql(column: RawBuilder<unknown>, value: string): RawBuilder<SqlBool> {
  return sql<SqlBool>`optics_norm(${column}) = optics_norm(${value})`
}

/** A text filter's condition: whole (`exact`) or a substring. */
export function textMatchSql(column: RawBuilder<unknown>, value: string, exact: boolean): RawBuilder<SqlBool> {
  return exact ? equalsTextSql(column, value) : containsSql(column, value)
}

const decimalSql = (value: string | number) => sql`${String(value).trim()}::numeric`

/** The active filters of a request: text trimmed and non-empty (exact where `exact` names it), numbers present. */
export function activeFilters(kind: Kind, values: FilterValues, exact: ExactFilters = []): ActiveFilter[] {
  const active: ActiveFilter[] = []
  for (const filter of kind.filters) {
    const value = values[filter.name]
    if (value === null || value === undefined) continue
    if (filter.match === 'substring') {
      const textValue = String(value).trim()
      if (textValue !== '') active.push({ filter, value: textValue, exact: exact.includes(filter.name) })
    } else if (String(value).trim() !== '') {
      active.push({ filter, value, exact: false })
    }
  }
  return active
}

/** `low IS NULL OR low <= v` and `high IS NULL OR high >= v`: inside an inclusive range whose NULL bound is open. */
function insideSql(low: RawBuilder<unknown>, high: RawBuilder<unknown>, value: string | number): RawBuilder<SqlBool> {
  const v = decimalSql(value)
  return sql<SqlBool>`((${low} IS NULL OR ${low} <= ${v}) AND (${high} IS NULL OR ${high} >= ${v}))`
}

/** The condition of one filter on a matview row `m` (`exact`: a text filter compared whole). */
export function matviewCondition(filter: Filter, value: string | number, exact = false): RawBuilder<SqlBool> {
  if (filter.match === 'substring') {
    return textMatchSql(sql.ref(`m.${filter.attribute.column}`), String(value), exact)
  }
  if (filter.match === 'equals') return sql<SqlBool>`${sql.ref(`m.${filter.attribute.column}`)} = ${decimalSql(value)}`
  const { range } = filter
  const point = sql.ref(`m.${range.column}`)
  const from = sql.ref(`m.${range.column}_from`)
  const to = sql.ref(`m.${range.column}_to`)
  // A SKU's own value decides where it has one (a concrete diameter, a stock lens's sphere); else its zone does.
  if (range.sku === 'required') return sql<SqlBool>`${point} = ${decimalSql(value)}`
  if (filter.prescription) {
    // Containment in one range expression, which a GiST index serves (migration 0005).
    const cast = range.type === 'integer' ? sql`::integer` : sql`::numeric`
    return sql<SqlBool>`${sql.raw(coveredRangeSql(range, 'm.'))} @> ${String(value).trim()}${cast}`
  }
  if (range.sku === 'optional')
    return insideSql(sql`coalesce(${point}, ${from})`, sql`coalesce(${point}, ${to})`, value)
  return insideSql(from, to, value)
}

/** The condition of one filter on a price-list entry `e` (`exact`: a text filter compared whole). */
export function entryCondition(kind: Kind, filter: Filter, value: string | number, exact = false): RawBuilder<SqlBool> {
  if (filter.match === 'covers') {
    const { column } = filter.range
    return insideSql(sql.ref(`e.${column}_from`), sql.ref(`e.${column}_to`), value)
  }
  const { attribute } = filter
  if (attribute.entry === 'none') {
    // The entry has no such value: keep it if it prices a SKU that has it.
    return sql<SqlBool>`EXISTS (SELECT 1 FROM ${sql.table(kind.matview)} m WHERE m.price_id = e.id AND ${matviewCondition(filter, value, exact)})`
  }
  const column = sql.ref(`e.${attribute.column}`)
  const match =
    filter.match === 'substring'
      ? textMatchSql(column, String(value), exact)
      : sql<SqlBool>`${column} = ${decimalSql(value)}`
  return attribute.entry === 'wildcard' ? sql<SqlBool>`(${column} IS NULL OR ${match})` : match
}

/** The expression of an item field in the chosen mode; NULL where a price-list entry lacks it. */
export function fieldSql(field: ItemField, byPriceList: boolean): RawBuilder<unknown> | null {
  if (!byPriceList) return sql.ref(`m.${field.column}`)
  return field.entryColumn ? sql.ref(`e.${field.entryColumn}`) : null
}

/** Checks sort properties against the kind's item fields; an unknown one is a 400 naming the allowed ones. */
export function resolveSort(kind: Kind, sort: readonly SortOrder[]): { field: ItemField; order: SortOrder }[] {
  return sort.map((order) => {
    const field = kind.itemFields.find((candidate) => candidate.name === order.property)
    if (!field) {
      throw invalidField(
        'sort',
        message('validation.sort', {
          property: order.property,
          allowed: kind.itemFields.map((f) => f.name).join(', '),
        }),
      )
    }
    return { field, order }
  })
}

/** The column, on every row of a page and on the count, naming the data version the statement read. */
export const DATA_VERSION = '_dataVersion'

export interface SearchQueries {
  readonly page: SelectQueryBuilder<any, any, Row>
  readonly count: SelectQueryBuilder<any, any, { count: number | string; [DATA_VERSION]: string | null }>
}

/** What identifies a search's total: kind, mode and the active filters (not the page or the order). */
export function searchCountKey(kind: Kind, request: Pick<SearchRequest, 'byPriceList' | 'filters' | 'exact'>): string {
  const filters = activeFilters(kind, request.filters, request.exact).map(({ filter, value, exact }) =>
    exact ? [filter.name, String(value), 'exact'] : [filter.name, String(value)],
  )
  return JSON.stringify(['search', kind.path, request.byPriceList, filters])
}

/**
 * Builds the page query and the count query of a search. The page is ordered by the requested sort, else by the
 * kind's natural order, and always ends with a unique tiebreak so pages never overlap or skip.
 *
 * `fenced`: the filtered rows are selected in a subquery the planner cannot flatten (`OFFSET 0`), then sorted.
 * `walk`: the filters look at no more than that many rows, the first in the page's order (see counted-page.ts).
 * For a search known to match few rows: otherwise the planner, misjudging a substring filter's selectivity, may
 * walk the sort's index and filter row by row, reading most of the table when the matches sort last (seconds at
 * a million rows instead of milliseconds).
 */
export function buildSearchQuery(
  tables: Kysely<Tables>,
  kind: Kind,
  request: SearchRequest,
  options: { readonly fenced?: boolean; readonly walk?: number } = {},
): SearchQueries {
  const db = kindQueries(tables)
  const { byPriceList } = request
  const conditions = activeFilters(kind, request.filters, request.exact).map(({ filter, value, exact }) =>
    byPriceList ? entryCondition(kind, filter, value, exact) : matviewCondition(filter, value, exact),
  )
  const from = byPriceList ? `${kind.priceTable} as e` : `${kind.matview} as m`
  const withFilters = <Q extends { where(condition: Expression<SqlBool>): Q }>(query: Q): Q =>
    conditions.reduce((q, condition) => q.where(condition), query)

  // A price-list search may look into the matview too (filters on SKU-only attributes).
  const version = dataVersionSql(kind, searchReads(byPriceList)).as(DATA_VERSION)
  const selections = [
    ...kind.itemFields.map((field) => (fieldSql(field, byPriceList) ?? sql`NULL`).as(field.name)),
    version,
  ]

  const sorted = resolveSort(kind, request.page.sort)
  const orderBy: RawBuilder<unknown>[] = []
  const ordering = sorted.length > 0 ? sorted : kind.order.map((field) => ({ field, order: undefined }))
  for (const { field, order } of ordering) {
    const expression = fieldSql(field, byPriceList)
    if (!expression) continue
    const key = order?.ignoreCase && field.type === 'text' ? sql`lower(${expression})` : expression
    orderBy.push(order?.direction === 'desc' ? sql`${key} DESC` : key)
  }
  if (byPriceList) orderBy.push(sql.ref('e.id'))
  else orderBy.push(sql.ref('m.sku_id'), sql.ref('m.price_id'))

  const { page, size } = request.page
  const alias = byPriceList ? 'e' : 'm'
  const ordered = <Q extends { orderBy(expression: Expression<unknown>): Q }>(query: Q): Q =>
    orderBy.reduce((q, expression) => q.orderBy(expression), query)
  const source = options.fenced
    ? db.selectFrom(withFilters(db.selectFrom(from).selectAll(alias)).offset(0).as(alias)).select(selections)
    : options.walk !== undefined
      ? withFilters(
          db
            .selectFrom(ordered(db.selectFrom(from).selectAll(alias)).limit(Math.max(1, options.walk)).as(alias))
            .select(selections),
        )
      : withFilters(db.selectFrom(from).select(selections))
  const pageQuery = ordered(source as SelectQueryBuilder<any, any, Row>)
    .limit(size)
    .offset(page * size)

  const countQuery = withFilters(db.selectFrom(from).select([sql<number | string>`count(*)`.as('count'), version]))
  return { page: pageQuery, count: countQuery }
}
