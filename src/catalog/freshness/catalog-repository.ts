import { type Kysely, sql } from 'kysely'
import type { Tables } from '../../db/tables.js'
import { inTransaction } from '../../db/transaction.js'
import type { Kind } from '../kinds/kind.js'
import { kindQueries } from '../kinds/kind-tables.js'
import { dataGeneration, pruneChangeLog, recordMatviewRefresh } from './catalog-state.js'

/*
 * Writing a kind's price list and nomenclature by API field names, and refreshing its matview. Row-at-a-time
 * inserts are for small writes (tests, single entries); bulk loads go through COPY (transfer/).
 */

/** A price-list entry by API names: attributes, `<range>From`/`<range>To`, `price`, `purchase`. */
export type EntryInput = Readonly<Record<string, string | number | null | undefined>>
/** A SKU by API names: `barcode`, attributes and concrete range values (`diameter`, `sphere`, …). */
export type SkuInput = Readonly<Record<string, string | number | null | undefined>>

/** API name → column of the price-list table, for every column an entry can be written with. */
export function entryFieldColumns(kind: Kind): [string, string][] {
  return [
    ...kind.attributes.filter((a) => a.entry !== 'none').map((a): [string, string] => [a.name, a.column]),
    ...kind.ranges.flatMap((r): [string, string][] => [
      [`${r.name}From`, `${r.column}_from`],
      [`${r.name}To`, `${r.column}_to`],
    ]),
    ['price', 'price'],
    ['purchase', 'purchase'],
  ]
}

/** API name → column of the nomenclature table. */
export function skuFieldColumns(kind: Kind): [string, string][] {
  return [
    ['barcode', 'barcode'],
    ...kind.attributes.map((a): [string, string] => [a.name, a.column]),
    ...kind.ranges.filter((r) => r.sku !== 'none').map((r): [string, string] => [r.name, r.column]),
  ]
}

function toRow(fields: [string, string][], input: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const row: Record<string, unknown> = {}
  for (const [name, column] of fields) {
    const value = input[name]
    row[column] = value === undefined || value === '' ? null : typeof value === 'number' ? String(value) : value
  }
  return row
}

/** Inserts price-list entries; returns their ids in input order. */
export async function insertPriceEntries(
  db: Kysely<Tables>,
  kind: Kind,
  entries: readonly EntryInput[],
  user = 'system',
): Promise<number[]> {
  if (entries.length === 0) return []
  const fields = entryFieldColumns(kind)
  const rows = entries.map((entry) => ({ ...toRow(fields, entry), updated_by: user }))
  const inserted = await kindQueries(db).insertInto(kind.priceTable).values(rows).returning('id').execute()
  return inserted.map((row) => Number(row.id))
}

/** Inserts SKUs; returns their ids in input order. */
export async function insertSkus(db: Kysely<Tables>, kind: Kind, skus: readonly SkuInput[]): Promise<number[]> {
  if (skus.length === 0) return []
  const fields = skuFieldColumns(kind)
  const inserted = await kindQueries(db)
    .insertInto(kind.skuTable)
    .values(skus.map((sku) => toRow(fields, sku)))
    .returning('id')
    .execute()
  return inserted.map((row) => Number(row.id))
}

/**
 * Recomputes a kind's matview and records the data generation it now shows (catalog-state.ts), so the
 * background refresher knows it is fresh. `concurrently` keeps it readable meanwhile (the usual case); the plain
 * form is faster and is what bulk loads use before the service reads.
 */
export async function refreshMatview(db: Kysely<Tables>, kind: Kind, options: { concurrently?: boolean } = {}) {
  // One transaction, so the matview's new content and its new version become visible together.
  await inTransaction(db, async (trx) => {
    // Read before the refresh starts: the refresh then shows at least this generation's data.
    const generation = await dataGeneration(trx, kind)
    const started = performance.now()
    const concurrently = options.concurrently ? sql`CONCURRENTLY ` : sql``
    await sql`REFRESH MATERIALIZED VIEW ${concurrently}${sql.table(kind.matview)}`.execute(trx)
    await recordMatviewRefresh(trx, kind, generation, performance.now() - started)
    await pruneChangeLog(trx, kind)
  })
}
