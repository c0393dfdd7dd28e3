import { listingTable } from './glass-listing.js'
import type { PriceTableReader } from './load.js'

/*
 * The glass price listing as a reader of a kind's price table (load.ts, PriceTableReader): the markup column it
 * sorts by, and its commonest orders built at load. The index is given it, with the kind whose table it reads.
 */

/**
 * The markup of a glass price list entry as a sort key, in SQL over the entry `e`: (price − purchase) / purchase ×
 * 100 to 22 decimals (distinct markups of prices with 2 decimals below 10^8 differ by more than 10^-18, so the order
 * is exact), and 10^15, above any markup, where the purchase is 0: those sort last, first descending. The listing's
 * SQL orders by it, and the index keeps it as a column, so both compare the same values.
 */
export const MARKUP_SORT_SQL = 'coalesce(((e.price - e.purchase) * 100)::numeric(40, 22) / nullif(e.purchase, 0), 1e15)'

/** The glass price listing over the price table of the kind at `kind` (its path). */
export function glassListingReader(kind: string): PriceTableReader {
  return {
    kind,
    columns: [{ name: 'markup', type: 'decimal', sql: MARKUP_SORT_SQL }],
    *warming(prices) {
      for (const sortColumn of ['ID', 'PARAMETERS', 'PRICE', 'PURCHASE'] as const) {
        for (const sortDirection of ['ASC', 'DESC'] as const) {
          listingTable(
            { prices },
            { filter: {}, page: { page: 0, size: 1, sort: [] }, sortColumn, sortDirection },
            (t) => t,
          )
          yield
        }
      }
    },
  }
}
