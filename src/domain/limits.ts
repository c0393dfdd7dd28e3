/*
 * The limits of what the catalogue stores, in one place: validation of JSON bodies, the CSV/XLSX import, the bulk
 * price change, the request schemas (and so OpenAPI) and the tables' DDL read them from here.
 */

/**
 * The largest price or purchase price, as decimal text: what `numeric(12,2)` with its CHECK holds. Prices are
 * never negative and have at most two decimals.
 */
export const MAX_PRICE = '99999999.99'

/** The most characters (not UTF-16 units) of a key or other text value. */
export const MAX_TEXT_LENGTH = 255

/** A decimal's whole digits grouped by spaces as people read a price (`99 999 999.99`), for messages. */
export function groupedDecimal(text: string): string {
  const [whole = '', fraction] = text.split('.')
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ' ')
  return fraction === undefined ? grouped : `${grouped}.${fraction}`
}
