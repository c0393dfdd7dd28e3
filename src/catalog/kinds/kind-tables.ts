import type { ColumnType, Generated, Kysely } from 'kysely'
import type { Decimal, Tables } from '../../db/tables.js'
import type { KindSpec, ValueType } from './kind.js'
import type { KindSpecs } from './kinds.js'

/*
 * The seven kinds' tables as Kysely types, derived from the descriptors (kinds.ts) as kind-schema.ts derives their
 * DDL: the price list (`<table>_price`), the nomenclature (`<table>_sku`) and the matview (`<table>_mv`).
 */

/** `refractionIndex` → `refraction_index`, as `snakeCase` names a column. */
type SnakeCase<Name extends string> = Name extends `${infer First}${infer Rest}`
  ? `${First extends Lowercase<First> ? First : `_${Lowercase<First>}`}${SnakeCase<Rest>}`
  : ''

/** A value of a column: numeric columns read as exact decimal strings, integers as numbers. */
type Value<Type extends ValueType> = Type extends 'text' ? string : Type extends 'integer' ? number : Decimal

type Attributes<S extends KindSpec> = S['attributes']
type Ranges<S extends KindSpec> = NonNullable<S['ranges']>
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>
type Defaulted<T> = ColumnType<T, T | undefined, T>

/** A kind's price list: its entry keys (wildcards may be NULL), every range's bounds, prices and bookkeeping. */
export type PriceTable<S extends KindSpec> = {
  id: Generated<number>
  price: Decimal
  purchase: Decimal
  updated_at: Timestamp
  updated_by: string
  version: Defaulted<number>
} & {
  [Name in keyof Attributes<S> & string as Attributes<S>[Name]['entry'] extends 'key' | 'wildcard'
    ? SnakeCase<Name>
    : never]: Attributes<S>[Name]['entry'] extends 'key'
    ? Value<Attributes<S>[Name]['type']>
    : Value<Attributes<S>[Name]['type']> | null
} & {
  [Name in keyof Ranges<S> & string as `${SnakeCase<Name>}_${'from' | 'to'}`]: Value<Ranges<S>[Name]['type']> | null
}

/** A kind's nomenclature: a SKU's barcode, every attribute (keys required) and the ranges a SKU carries. */
export type SkuTable<S extends KindSpec> = {
  id: Generated<number>
  barcode: string
} & {
  [Name in keyof Attributes<S> & string as SnakeCase<Name>]: Attributes<S>[Name]['entry'] extends 'key'
    ? Value<Attributes<S>[Name]['type']>
    : Value<Attributes<S>[Name]['type']> | null
} & {
  [Name in keyof Ranges<S> & string as Ranges<S>[Name]['sku'] extends 'none'
    ? never
    : SnakeCase<Name>]: Ranges<S>[Name]['sku'] extends 'required'
    ? Value<Ranges<S>[Name]['type']>
    : Value<Ranges<S>[Name]['type']> | null
}

/** A kind's matview (read only): a priced SKU with its entry's bounds and the retail price. */
export type MatviewTable<S extends KindSpec> = Omit<SkuTable<S>, 'id' | 'barcode'> & {
  sku_id: number
  price_id: number
  retail_price: Decimal
} & {
  [Name in keyof Ranges<S> & string as `${SnakeCase<Name>}_${'from' | 'to'}`]: Value<Ranges<S>[Name]['type']> | null
}

/** Every kind's tables, by name. */
export type CatalogTables = { [S in KindSpecs as `${S['table']}_price`]: PriceTable<S> } & {
  [S in KindSpecs as `${S['table']}_sku`]: SkuTable<S>
} & { [S in KindSpecs as `${S['table']}_mv`]: MatviewTable<S> }

/** Tables named at run time by a descriptor (`kind.priceTable`): their columns are known to the code by name only. */
type DescribedTables = Record<string, Record<string, unknown>>

/** The query builder of code that reaches a kind through its descriptor, and of code that names a kind's table. */
export type KindQueries = Kysely<Tables & CatalogTables & DescribedTables>

/**
 * The one boundary between the service's typed tables and those a descriptor names at run time: the same
 * connection (or transaction), with every kind's tables typed from the descriptors, and any other name allowed
 * (its columns unknown until read). Only the types change; the queries are the same.
 */
export function kindQueries(db: Kysely<Tables>): KindQueries {
  return db.withTables<CatalogTables & DescribedTables>()
}
