import { GLASS_PRICE_FILTERS, type GlassPriceFilter } from '../../domain/glass-price-fields.js'
import type { GlassPriceListItem, SortColumn, SortDirection } from '../../glass-prices/glass-price-schemas.js'
import { buildPage, type Page, type PageRequest } from '../../http/page.js'
import { columnOf, decimalOf, NotIndexable } from './conditions.js'
import { type KeySpec, keysOf, sortedPermutation } from './kept-orders.js'
import type { PriceTable } from './load.js'
import { type Condition, compareCondition, matchRows, sortedWindow, textCondition } from './matching.js'
import { walk } from './search.js'
import type { Column } from './table.js'

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
