import type { GlassPriceFilter, GlassPriceTextFilter } from '../../glass-prices/glass-price-filter.js'
import type { GlassPriceListItem, SortColumn, SortDirection } from '../../glass-prices/glass-price-schemas.js'
import { buildPage, type Page, type PageRequest } from '../../http/page.js'
import { columnOf, decimalOf } from './conditions.js'
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
 * normalised text byte-wise, or the values themselves (text byte-wise, numbers by value).
 */
const listingKeys: Readonly<Record<SortColumn, { readonly columns: readonly string[]; readonly norm: boolean }>> = {
  ID: { columns: [], norm: false },
  PARAMETERS: { columns: ['manufacturer', 'brand', 'model'], norm: true },
  MANUFACTURER: { columns: ['manufacturer'], norm: true },
  BRAND: { columns: ['brand'], norm: true },
  MODEL: { columns: ['model'], norm: true },
  PRICE: { columns: ['price'], norm: false },
  PURCHASE: { columns: ['purchase'], norm: false },
  UPDATED_ON: { columns: ['last_updated_on'], norm: false },
  USER: { columns: ['updated_by'], norm: false },
  MARKUP: { columns: ['markup'], norm: false },
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
  // The text filters by name (a type-only import keeps the index below the price list; the type checks the names).
  const textFilters: readonly GlassPriceTextFilter[] = ['manufacturer', 'brand', 'model']
  for (const name of textFilters) {
    const value = filter[name]
    if (value !== undefined) {
      conditions.push(textCondition(columnOf(prices, name), norm(value), filter.exact?.includes(name) ?? false))
    }
  }
  const bound = (column: string, value: string | undefined, test: (comparison: number) => boolean) => {
    if (value !== undefined) conditions.push(compareCondition(columnOf(prices, column), decimalOf(value), test))
  }
  bound('price', filter.priceFrom, (c) => c >= 0)
  bound('price', filter.priceTo, (c) => c <= 0)
  bound('purchase', filter.purchaseFrom, (c) => c >= 0)
  bound('purchase', filter.purchaseTo, (c) => c <= 0)
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
