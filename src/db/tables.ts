import type { ColumnType, Generated } from 'kysely'

/**
 * A requested id of a `bigint` column, as its decimal text, where a query compares the column with it. The column
 * reads as a number (ids stay far below 2^53), but a request may name any bigint, which a number would round to
 * another id: the text is bound as the parameter and PostgreSQL compares it as a bigint. The one cast gives it the
 * column's type for Kysely.
 */
export function bigintId(text: string): number {
  return text as unknown as number
}

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

/** One per glass price list change (create, update, delete, bulk change, revert): who, when, with what. */
export interface GlassPriceChangeTable {
  id: Generated<number>
  action: string
  created_at: ColumnType<Date, Date | string | undefined, Date | string>
  created_by: string
  /** jsonb: the parameters as the caller gave them (normalised), e.g. a bulk change's filters and rule. */
  parameters: ColumnType<Record<string, unknown>, string, string>
  changed_count: ColumnType<number, number | undefined, number>
  reverts: number | null
  reverted_by: number | null
}

/** One per entry and field a change touched; values as the column's text (`'1500.00'`), NULL = no entry. */
export interface GlassPriceChangeRowTable {
  change_id: number
  entry_id: number
  field: 'manufacturer' | 'brand' | 'model' | 'price' | 'purchase'
  old_value: string | null
  new_value: string | null
}

/** Per kind (`kind.path`): the generation of its data (bumped by every write) and the one its matview shows. */
export interface CatalogStateTable {
  kind: string
  data_generation: ColumnType<number, number | undefined, number>
  changed_at: Date | null
  refreshed_generation: ColumnType<number, number | undefined, number>
  refreshed_at: Date | null
  refresh_ms: number | null
  /** Bumped by every refresh, in its transaction: one value per content of the matview. */
  matview_version: ColumnType<number, number | undefined, number>
  /** The change log (`catalog_change`) holds every change of the kind after this generation; NULL: none usable. */
  changes_from: ColumnType<number | null, number | null | undefined, number | null>
}

/** Which entries (`p`) and SKUs (`s`) of a kind each data generation changed (migration 0006). */
export interface CatalogChangeTable {
  kind: string
  generation: number
  source: 'p' | 's'
  id: number
  logged_at: ColumnType<Date, Date | undefined, Date>
}

/** Every table the service's code names by its type, with its columns' types: the type of Kysely's `db`. */
export interface Tables {
  catalog_change: CatalogChangeTable
  glasses_price: GlassesPriceTable
  glass_price_change: GlassPriceChangeTable
  glass_price_change_row: GlassPriceChangeRowTable
  catalog_state: CatalogStateTable
}
