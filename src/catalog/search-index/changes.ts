import type { Kind } from '../kinds/kind.js'
import { carryEntryRows } from './entry-rows.js'
import type { IndexClient } from './index-database.js'
import { carryOrders } from './kept-orders.js'
import {
  type ColumnSpec,
  coverageColumn,
  coverageText,
  databaseForms,
  type MatviewTable,
  matviewColumnSpecs,
  matviewOrder,
  matviewTable,
  type PriceTable,
  priceOrder,
  priceTable,
  rowOfEntry,
} from './load.js'
import { type IdentifiedTable, type MergedTable, mergeRows, newNonAsciiValues, type RowChanges } from './merge.js'
import { type FieldOf, RowPatch } from './patch.js'
import { idsOf } from './table.js'
import { CopyTextParser } from './text.js'

/*
 * Bringing a kind's tables to a later data version by the rows the change log names alone (see merge.ts): those
 * rows are dropped and read again as they are now, and what requests use (kept orders, the SKU → entry pairing)
 * is carried over.
 */

/** The ids the change log holds for a kind's source (`p` entries, `s` SKUs) after generation `after`, up to `upTo`. */
export async function changedIds(
  client: IndexClient,
  kind: Kind,
  source: 'p' | 's',
  after: number,
  upTo: number,
): Promise<number[]> {
  const rows = await client.query<{ id: string | number }>(
    `SELECT DISTINCT id FROM catalog_change WHERE kind = $1 AND source = $2 AND generation > $3 AND generation <= $4`,
    [kind.path, source, after, upTo],
  )
  return rows.map((row) => Number(row.id))
}

/** An SQL array literal of integer ids. */
const idArray = (ids: readonly number[]) => `'{${ids.map((id) => String(Math.trunc(id))).join(',')}}'::bigint[]`

/** Reads rows through COPY as they come: per column its values, per id column its ids. */
async function readRows(
  client: IndexClient,
  select: string,
  specs: readonly ColumnSpec[],
  idCount: number,
): Promise<Omit<RowChanges, 'removed'>> {
  const values = specs.map((): (string | null)[] => [])
  const ids = Array.from({ length: idCount }, (): number[] => [])
  const parser = new CopyTextParser((fields) => {
    for (let index = 0; index < idCount; index++) (ids[index] as number[]).push(Number(fields[index]))
    for (let index = 0; index < specs.length; index++)
      (values[index] as (string | null)[]).push(fields[idCount + index] ?? null)
  })
  for await (const chunk of client.copyOut(select)) parser.push(chunk)
  parser.end()
  return {
    rows: (ids[0] as number[]).length,
    values: new Map(specs.map((spec, index) => [spec.name, values[index] as (string | null)[]])),
    ids: ids.map((list) => idsOf(list)),
  }
}

/** `changes` merged into `table`, with the normal forms of new non-ASCII values from the database. */
async function merged(client: IndexClient, table: IdentifiedTable, changes: RowChanges, order: readonly string[]) {
  const forms = await databaseForms(client, newNonAsciiValues(table, changes))
  return mergeRows(table, changes, order, forms)
}

/**
 * The price table brought to `dataGeneration` by the entries the change log names (`ids`): those rows are
 * dropped and read again as they are now (a deleted entry is not read). Run inside the snapshot that read
 * `dataGeneration`, with the table's columns (`specs`, as it was loaded). Keeps the SKU → entry pairing of `matview`
 * up to date.
 */
export async function applyPriceChanges(
  client: IndexClient,
  kind: Kind,
  prices: PriceTable,
  ids: readonly number[],
  dataGeneration: number,
  specs: readonly ColumnSpec[],
  matview: MatviewTable | undefined,
): Promise<PriceTable> {
  const removed = new Uint8Array(prices.rows)
  for (const id of ids) {
    const row = rowOfEntry(prices, id)
    if (row >= 0) removed[row] = 1
  }
  const added = await readRows(
    client,
    `SELECT e.id, ${specs.map((spec) => spec.sql ?? spec.name).join(', ')} FROM ${kind.priceTable} e WHERE e.id = ANY(${idArray(ids)})`,
    specs,
    1,
  )
  const table = await merged(client, prices, { removed, ...added }, priceOrder(kind))
  return nextPriceTable(kind, prices, table, dataGeneration, matview)
}

/** The price table after a merge or a patch, with what requests used carried over from `prices`. */
function nextPriceTable(
  kind: Kind,
  prices: PriceTable,
  table: MergedTable,
  dataGeneration: number,
  matview: MatviewTable | undefined,
): PriceTable {
  const next = priceTable(kind, table, dataGeneration, false)
  carryOrders(prices, next, table.oldToNew, table.addedRows)
  if (matview) carryEntryRows({ matview, prices }, { matview, prices: next }, { prices: table.oldToNew })
  return next
}

/**
 * The matview table brought to a later refresh by the SKUs whose rows may have changed: those the change log names,
 * and those priced (before or now) by an entry it names. Their rows are dropped and read again as they are now.
 * Run inside the snapshot that read `versions`.
 */
export async function applyMatviewChanges(
  client: IndexClient,
  kind: Kind,
  matview: MatviewTable,
  changed: { readonly entries: readonly number[]; readonly skus: readonly number[] },
  versions: { readonly matviewVersion: number; readonly refreshedGeneration: number },
  prices: PriceTable | undefined,
): Promise<MatviewTable> {
  const skus = new Set(changed.skus)
  const entries = new Set(changed.entries)
  const [skuIds, priceIds] = matview.ids as [Uint32Array, Uint32Array]
  for (let row = 0; row < matview.rows; row++) {
    if (entries.has(priceIds[row] as number)) skus.add(skuIds[row] as number)
  }
  const specs = matviewColumnSpecs(kind)
  const added = await readRows(
    client,
    // Both lookups go through the matview's indexes (sku_id, price_id); an OR of them would scan it.
    `WITH affected AS (
       SELECT unnest(${idArray([...skus])}) AS sku_id
       UNION SELECT sku_id FROM ${kind.matview} WHERE price_id = ANY(${idArray([...entries])})
     )
     SELECT m.sku_id, m.price_id, ${specs.map((spec) => `m.${spec.sql ?? spec.name}`).join(', ')}
     FROM affected a JOIN ${kind.matview} m ON m.sku_id = a.sku_id`,
    specs,
    2,
  )
  for (const sku of added.ids[0] as Uint32Array) skus.add(sku)
  const removed = new Uint8Array(matview.rows)
  for (let row = 0; row < matview.rows; row++) if (skus.has(skuIds[row] as number)) removed[row] = 1
  const values = new Map(added.values)
  for (const range of kind.ranges) {
    if (range.sku !== 'optional') continue
    const [point, from, to] = ['', '_from', '_to'].map((suffix) => values.get(`${range.column}${suffix}`) ?? []) as [
      (string | null)[],
      (string | null)[],
      (string | null)[],
    ]
    values.set(
      coverageColumn(range),
      point.map((own, row) => coverageText(own, from[row] ?? null, to[row] ?? null)),
    )
  }
  const table = await merged(client, matview, { removed, rows: added.rows, values, ids: added.ids }, matviewOrder(kind))
  return nextMatviewTable(kind, matview, table, versions, prices)
}

/** The matview table after a merge or a patch, with what requests used carried over from `matview`. */
function nextMatviewTable(
  kind: Kind,
  matview: MatviewTable,
  table: MergedTable,
  versions: { readonly matviewVersion: number; readonly refreshedGeneration: number },
  prices: PriceTable | undefined,
): MatviewTable {
  const next = matviewTable(kind, table, versions, false)
  carryOrders(matview, next, table.oldToNew, table.addedRows)
  if (prices) carryEntryRows({ matview, prices }, { matview: next, prices }, { matview: table.oldToNew })
  return next
}

/**
 * Every row of `source` read again and compared with `table` as it comes (patch.ts): the table with the values
 * that changed, or undefined where a row came, went or moved (then it must be read anew). A count first spares
 * the read where rows came or went.
 */
async function patched(
  client: IndexClient,
  table: IdentifiedTable,
  source: string,
  select: string,
  idCount: number,
  fields: ReadonlyMap<string, FieldOf>,
  order: readonly string[],
): Promise<MergedTable | undefined> {
  const [counted] = await client.query<{ rows: string | number }>(`SELECT count(*) AS rows FROM ${source}`)
  if (Number(counted?.rows) !== table.rows) return undefined
  const patch = new RowPatch(table, idCount, fields, order)
  const parser = new CopyTextParser((row) => patch.push(row))
  for await (const chunk of client.copyOut(`SELECT ${select} FROM ${source}`)) parser.push(chunk)
  parser.end()
  if (patch.refused) return undefined
  return patch.finish(await databaseForms(client, patch.newNonAsciiValues()))
}

/** Per column of specs read after `idCount` ids, its field. */
const fieldsOf = (specs: readonly ColumnSpec[], idCount: number) =>
  new Map<string, FieldOf>(specs.map((spec, index) => [spec.name, idCount + index]))

/**
 * The price table brought to `dataGeneration` by reading every entry again, where most changed but none came, went
 * or moved (a bulk change, its revert, an upload of the whole list): undefined otherwise. Run inside the snapshot
 * that read `dataGeneration`, with the table's columns (`specs`, as it was loaded).
 */
export async function patchPriceTable(
  client: IndexClient,
  kind: Kind,
  prices: PriceTable,
  dataGeneration: number,
  specs: readonly ColumnSpec[],
  matview: MatviewTable | undefined,
): Promise<PriceTable | undefined> {
  const select = ['e.id', ...specs.map((spec) => spec.sql ?? spec.name)].join(', ')
  const source = `${kind.priceTable} e`
  const table = await patched(client, prices, source, select, 1, fieldsOf(specs, 1), priceOrder(kind))
  return table && nextPriceTable(kind, prices, table, dataGeneration, matview)
}

/** The matview table brought to a later refresh the same way ({@link patchPriceTable}). */
export async function patchMatviewTable(
  client: IndexClient,
  kind: Kind,
  matview: MatviewTable,
  versions: { readonly matviewVersion: number; readonly refreshedGeneration: number },
  prices: PriceTable | undefined,
): Promise<MatviewTable | undefined> {
  const specs = matviewColumnSpecs(kind)
  const fields = fieldsOf(specs, 2)
  for (const range of kind.ranges) {
    if (range.sku !== 'optional') continue
    const [point, from, to] = ['', '_from', '_to'].map((suffix) => fields.get(`${range.column}${suffix}`) as number)
    fields.set(coverageColumn(range), (row) =>
      coverageText(row[point as number] ?? null, row[from as number] ?? null, row[to as number] ?? null),
    )
  }
  const select = ['m.sku_id', 'm.price_id', ...specs.map((spec) => `m.${spec.sql ?? spec.name}`)].join(', ')
  const table = await patched(client, matview, `${kind.matview} m`, select, 2, fields, matviewOrder(kind))
  return table && nextMatviewTable(kind, matview, table, versions, prices)
}
