import type { ColumnType, Generated } from 'kysely'

/** `numeric` money or measure: read as an exact decimal string, written from a string or a number. */
export type Decimal = ColumnType<string, string | number, string | number>

/**
 * The glass frame price list, which is also the price list of the `glasses` kind. Every kind's price-list table
 * has this shape (id, key columns, optional ranges, price, purchase, updated_at, updated_by, version); the other
 * six are reached through their kind descriptor, so only this one is typed here.
 */
export interface GlassesPriceTable {
  id: Generated<number>
  manufacturer: string
  brand: string
  model: string
  price: Decimal
  purchase: Decimal
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>
  updated_by: string
  version: ColumnType<number, number | undefined, number>
}

export interface DB {
  glasses_price: GlassesPriceTable
}
