import type { Kind } from '../kinds/kind.js'
import { indexedForSimilarity, trigramPostings } from '../search/suggestion-ranking.js'
import type { IndexedSearch } from './conditions.js'
import { entryRowsOf } from './entry-rows.js'
import { warmingFacets } from './facet-counts.js'
import { fieldValueCounts } from './field-values.js'
import { type PriceTableReader, preparing } from './load.js'
import { searchTables } from './search.js'

/**
 * Builds, once per load of a kind read or restored in full, what requests would otherwise build on first use: the
 * postings of the filters' columns and the offsets of every other one (facets count through them), the SKU → entry
 * pairing, the orders of the commonest sorts (retail price both ways), the similarity postings of large suggestion
 * fields, what facets read (co-occurrence counts, the codes of large fields in rank order), and what a reader of the
 * price table builds (`reader`: the glass price listing's orders). The tables already answer meanwhile: it gives
 * way to requests between its steps (each a column's postings or n-gram index, an order, ...), and a request
 * meanwhile builds what it needs itself. It stops early once `held` says the tables were replaced (a later load),
 * since what it would build then serves no one.
 */
export async function warmTablesAnswering(
  kind: Kind,
  tables: IndexedSearch,
  reader?: PriceTableReader,
  held: () => boolean = () => true,
): Promise<void> {
  for (const _ of warming(kind, tables, reader)) {
    await new Promise((resolve) => setImmediate(resolve))
    if (!held()) return
  }
}

function* warming(kind: Kind, tables: IndexedSearch, reader?: PriceTableReader): Generator<void> {
  yield* preparing(kind, tables.matview.columns, false)
  yield* preparing(kind, tables.prices.columns, true)
  for (const table of [tables.matview, tables.prices]) {
    for (const column of table.columns.values()) {
      // What facets count by; the rows of the filters' columns are built above.
      void column.offsets
      yield
    }
  }
  void entryRowsOf(tables.matview, tables.prices)
  yield
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
      yield
    }
    for (const field of kind.valueFields) {
      if (field.type !== 'text') continue
      const values = fieldValueCounts(tables, field, byPriceList)
      if (values && indexedForSimilarity(values)) trigramPostings(values)
      yield
    }
  }
  yield* warmingFacets(kind, tables)
  if (reader) yield* reader.warming(tables.prices)
}
