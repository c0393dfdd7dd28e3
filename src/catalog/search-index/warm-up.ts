import type { Kind } from '../kinds/kind.js'
import { indexedForSimilarity, trigramPostings } from '../search/suggestion-ranking.js'
import type { IndexedSearch } from './conditions.js'
import { entryRowsOf } from './entry-rows.js'
import { fieldValueCounts } from './field-values.js'
import { type PriceTableReader, prepare } from './load.js'
import { searchTables } from './search.js'

/**
 * Builds, once per load, what requests would otherwise build on first use: the postings of every column (facets
 * count through them), the SKU → entry pairing, the orders of the commonest sorts (retail price both ways), the
 * similarity postings of large suggestion fields, and what a reader of the price table builds (`reader`: the glass
 * price listing's orders).
 */
export function warmTables(kind: Kind, tables: IndexedSearch, reader?: PriceTableReader): void {
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
  reader?.warm(tables.prices)
}
