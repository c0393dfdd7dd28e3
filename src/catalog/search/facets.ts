import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely'
import type { Tables } from '../../db/tables.js'
import type { ResultCache } from '../../paged-reads/result-cache.js'
import { dataVersionSql, readDataVersion, searchReads } from '../freshness/catalog-state.js'
import type { ItemField, Kind } from '../kinds/kind.js'
import {
  FACET_VALUES,
  type Facets,
  type FacetValue,
  facetFields,
  type NumericFacet,
  type TextFacet,
} from './facet-fields.js'
import type { SearchIndexAnswers } from './index-answers.js'
import { readPrescription } from './prescription.js'
import {
  activeFilters,
  type ExactFilters,
  entryCondition,
  type FilterValues,
  fieldSql,
  matviewCondition,
  searchCountKey,
} from './search-query.js'

/*
 * Facets: what the drop-down lists of a search form show for the current filters. For each text field, its
 * distinct values with how many items have each, counted under every filter except the field's own (so the
 * brand list still offers the other brands once a brand is typed); for each numeric field, its least and
 * greatest value under all the filters. One scan serves every field whose own filter is not set (GROUPING SETS);
 * a field with its own filter set gets a query without it. Results are cached per data version, like totals.
 */

const where = (conditions: readonly RawBuilder<SqlBool>[]) =>
  conditions.length > 0 ? sql`WHERE ${sql.join(conditions, sql` AND `)}` : sql``

/**
 * The top values of some text fields under `conditions`, in one scan: `GROUP BY GROUPING SETS ((a), (b), …)`,
 * ranked within each field. Rows: the field's index, value, count, and the number of distinct values.
 */
function textFacetSql(
  fields: readonly RawBuilder<unknown>[],
  from: RawBuilder<unknown>,
  conditions: readonly RawBuilder<SqlBool>[],
): RawBuilder<{ grouping: number; value: string; count: number | string; distinct: number | string }> {
  const sets = sql.join(fields.map((field) => sql`(${field})`))
  const value = sql`coalesce(${sql.join(fields)})`
  const grouping = sql`GROUPING(${sql.join(fields)})`
  return sql`
    SELECT grouping, value, count, distinct_values AS "distinct" FROM (
      SELECT ${grouping} AS grouping, ${value} AS value, count(*) AS count,
             count(*) OVER (PARTITION BY ${grouping}) AS distinct_values,
             row_number() OVER (PARTITION BY ${grouping} ORDER BY count(*) DESC, ${value}) AS rank
      FROM ${from} ${where(conditions)}
      GROUP BY GROUPING SETS (${sets})
      HAVING ${value} IS NOT NULL
    ) ranked
    WHERE rank <= ${sql.lit(FACET_VALUES)}
    ORDER BY grouping, rank`
}

/**
 * The field a row of {@link textFacetSql} counts: `GROUPING(a, b, …)` has a 1 bit for every field its set does
 * not group by, the first field being the highest bit.
 */
function groupedField(grouping: number, fields: number): number {
  const missing = 2 ** fields - 1 - grouping
  return fields - 1 - Math.log2(missing)
}

/** The facets of a search body; validated as the search validates it (prescription included). */
export async function searchFacets(
  db: Kysely<Tables>,
  kind: Kind,
  request: { readonly byPriceList: boolean; readonly filters: FilterValues; readonly exact?: ExactFilters },
  cache?: ResultCache,
  index?: SearchIndexAnswers,
): Promise<Facets> {
  const filters = readPrescription(kind, request.filters)
  const { byPriceList, exact } = request
  const indexed = await index?.facets(kind, byPriceList, filters, exact)
  if (indexed) return indexed
  const key = JSON.stringify(['facets', searchCountKey(kind, { byPriceList, filters, exact })])
  const compute = async () => computeFacets(db, kind, byPriceList, filters, exact)
  if (!cache?.enabled) return (await compute()).value
  return cache.getOrCompute(key, await readDataVersion(db, kind, searchReads(byPriceList)), compute)
}

async function computeFacets(
  db: Kysely<Tables>,
  kind: Kind,
  byPriceList: boolean,
  filters: FilterValues,
  exactFilters: ExactFilters | undefined,
): Promise<{ value: Facets; version: string | null }> {
  const active = activeFilters(kind, filters, exactFilters).map(({ filter, value, exact }) => ({
    filter,
    condition: byPriceList ? entryCondition(kind, filter, value, exact) : matviewCondition(filter, value, exact),
  }))
  const from = byPriceList ? sql`${sql.table(kind.priceTable)} AS e` : sql`${sql.table(kind.matview)} AS m`
  const version = dataVersionSql(kind, searchReads(byPriceList))
  const fields = facetFields(kind, byPriceList)
  const all = active.map((a) => a.condition)
  const versions = new Set<string | null>()

  // Totals and numeric bounds under every filter.
  const numeric: Record<string, NumericFacet> = {}
  const bounds = fields.numeric.flatMap((field, index) => {
    const expression = fieldSql(field, byPriceList) as RawBuilder<unknown>
    return [sql`min(${expression}) AS ${sql.ref(`min${index}`)}`, sql`max(${expression}) AS ${sql.ref(`max${index}`)}`]
  })
  const { rows: totals } = await sql<Record<string, unknown>>`
    SELECT count(*) AS total, ${sql.join([...bounds, sql`${version} AS version`])}
    FROM ${from} ${where(all)}`.execute(db)
  const summary = totals[0] ?? {}
  versions.add((summary.version as string | null) ?? null)
  const asNumber = (value: unknown) => (value === null || value === undefined ? null : Number(value))
  fields.numeric.forEach((field, index) => {
    numeric[field.name] = { min: asNumber(summary[`min${index}`]), max: asNumber(summary[`max${index}`]) }
  })

  // Text fields: those whose own filter is not set share one scan; each other one is counted without its filter.
  const text: Record<string, TextFacet> = {}
  const ownFilter = (field: ItemField) => active.find((a) => a.filter.name === field.name)
  const groups: { fields: ItemField[]; conditions: RawBuilder<SqlBool>[] }[] = []
  const shared = fields.text.filter((field) => !ownFilter(field))
  if (shared.length > 0) groups.push({ fields: shared, conditions: all })
  for (const field of fields.text.filter(ownFilter)) {
    const own = ownFilter(field)
    groups.push({ fields: [field], conditions: active.filter((a) => a !== own).map((a) => a.condition) })
  }
  for (const group of groups) {
    for (const field of group.fields) text[field.name] = { values: [], distinct: 0 }
    const expressions = group.fields.map((field) => fieldSql(field, byPriceList) as RawBuilder<unknown>)
    const { rows } = await sql<{
      grouping: number
      value: string
      count: number | string
      distinct: number | string
      version: string | null
    }>`
      SELECT f.*, ${version} AS version FROM (${textFacetSql(expressions, from, group.conditions)}) f`.execute(db)
    for (const row of rows) {
      versions.add(row.version)
      const field = group.fields[groupedField(Number(row.grouping), group.fields.length)]
      const facet = text[field?.name ?? ''] as { values: FacetValue[]; distinct: number } | undefined
      if (!facet) continue
      facet.values.push({ value: row.value, count: Number(row.count) })
      facet.distinct = Number(row.distinct)
    }
  }
  // Cached only when every statement read the same version (the data did not move meanwhile).
  const [only] = versions
  return {
    value: { total: Number(summary.total ?? 0), text, numeric },
    version: versions.size === 1 ? (only ?? null) : null,
  }
}
