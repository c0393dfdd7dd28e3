import {
  type FilterSortColumn,
  GLASS_PRICE_FILTER_SORTS,
  GLASS_PRICE_FILTERS,
  type GlassPriceFilter,
} from '../../domain/glass-price-fields.js'
import type { GlassPriceListItem, SortColumn, SortDirection } from '../../glass-prices/glass-price-schemas.js'
import { buildPage, type Page, type PageRequest } from '../../http/page.js'
import type { Kind } from '../kinds/kind.js'
import { columnOf, decimalOf, entryConditions, type IndexedSearch, NotIndexable } from './conditions.js'
import type { KeySpec } from './kept-orders.js'
import { type Condition, compareCondition, matchRows, textCondition } from './matching.js'
import { sortedPage } from './search.js'
import type { Column } from './table.js'

/** The glass price listing's request, as glass-price-filter.ts and the repository read it. */
export interface IndexedListing {
  readonly filter: GlassPriceFilter
  readonly page: PageRequest
  readonly sortColumn: SortColumn
  readonly sortDirection: SortDirection
}

/**
 * What a listing reads: the kind's price table, and for a filter on the SKUs' attribute the kind (its filter of
 * that name) and its matview of the same snapshot.
 */
export interface ListingTables extends Pick<IndexedSearch, 'prices'>, Partial<Pick<IndexedSearch, 'matview'>> {
  readonly kind?: Kind
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
    GLASS_PRICE_FILTER_SORTS.map((sort) => [sort.key, { columns: [sort.column], norm: sort.text }]),
  ) as Record<FilterSortColumn, { columns: string[]; norm: boolean }>),
}

/**
 * A page of the glass price listing from the kind's price table, as `buildListingQueries` computes it: substring
 * (or exact) and inclusive bound filters (on the SKUs' attribute: the entries pricing a matching matview row),
 * ordered by the sort column's value (PARAMETERS: the normalised keys byte-wise) and the id, every key in the
 * requested direction.
 */
export function listingTable(
  tables: ListingTables,
  request: IndexedListing,
  norm: (text: string) => string,
): Page<GlassPriceListItem> {
  const { prices, kind } = tables
  const { filter } = request
  const conditions: Condition[] = []
  // Every described filter (domain/glass-price-fields.ts); one whose match this does not know leaves it to SQL.
  for (const field of GLASS_PRICE_FILTERS as readonly (typeof GLASS_PRICE_FILTERS)[number][]) {
    switch (field.match) {
      case 'text': {
        const value = filter[field.name]
        if (value === undefined) break
        const exact = filter.exact?.includes(field.name) ?? false
        const { source } = field
        if (source.from === 'entry') {
          conditions.push(textCondition(columnOf(prices, source.column), norm(value), exact))
        } else {
          const skuFilter = kind?.filters.find((candidate) => candidate.name === source.filter)
          if (!skuFilter || !tables.matview) throw new NotIndexable(`no matview filter ${source.filter}`)
          conditions.push(...entryConditions(prices, tables.matview, skuFilter, value, norm, exact))
        }
        break
      }
      case 'band': {
        const column = columnOf(prices, field.source.column)
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
  const window = from >= total ? new Uint32Array(0) : sortedPage(prices, matches, specs, from, to, descending)
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
