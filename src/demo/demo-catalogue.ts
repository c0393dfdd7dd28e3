import type { FastifyBaseLogger } from 'fastify'
import { sql } from 'kysely'
import { entryFieldColumns, refreshMatview, skuFieldColumns } from '../catalog/freshness/catalog-repository.js'
import type { Kind } from '../catalog/kinds/kind.js'
import { kinds as allKinds } from '../catalog/kinds/kinds.js'
import { copyText, copyTextChunks } from '../db/copy-text.js'
import type { Database, RawClient } from '../db/database.js'
import { createIndexes, dropSecondaryIndexes } from '../db/indexes.js'
import { type DemoRow, generateCatalogue } from './demo-generator.js'
import { recipeOf } from './demo-recipes.js'

/*
 * Loading the demo catalogue: per kind, one transaction that streams the generated SKUs into the nomenclature
 * through COPY and then the price list (kept as CSV text meanwhile: entries are far fewer than SKUs), then one
 * plain refresh of the kind's matview and ANALYZE. The matview and its indexes are built once, at the end.
 */

/** The seed of the catalogue the service loads on first start and `seed` loads without `--seed`. */
export const DEMO_SEED = 1

export interface SeedProgress {
  readonly kind: Kind
  /** SKUs generated so far (including those not yet flushed to the database). */
  readonly skus: number
  /** The SKUs this kind will have. */
  readonly total: number
  readonly phase: 'load' | 'refresh' | 'done'
}

export interface SeedOptions {
  readonly scale: number
  /** The kinds to load; default all seven. */
  readonly kinds?: readonly Kind[]
  readonly seed?: number
  /** Empty the kind's tables first (TRUNCATE … CASCADE); without it a kind that holds data is an error. */
  readonly replace?: boolean
  readonly onProgress?: (progress: SeedProgress) => void
}

export interface SeedResult {
  readonly kind: string
  readonly entries: number
  readonly skus: number
  readonly milliseconds: number
  /** Of which: generating and copying the rows, then building the matview and analysing. */
  readonly loadMilliseconds: number
  readonly matviewMilliseconds: number
}

/** A kind that already holds data, met by `seed` without `replace`. */
export class CatalogueNotEmptyError extends Error {
  override name = 'CatalogueNotEmptyError'
}

/** Whether a kind's price list and nomenclature are both empty. */
export async function isKindEmpty(db: Database, kind: Kind): Promise<boolean> {
  const { rows } = await sql<{ filled: boolean }>`
    SELECT EXISTS (SELECT 1 FROM ${sql.table(kind.priceTable)}) OR EXISTS (SELECT 1 FROM ${sql.table(kind.skuTable)})
      AS filled`.execute(db.primary)
  return !rows[0]?.filled
}

/**
 * Loads the generated demo catalogue of each kind (about `scale` SKUs per kind, entries proportionally fewer)
 * through COPY, then refreshes each matview (not concurrently: nothing reads it meanwhile that could not wait)
 * and analyses the tables. Deterministic: the same seed and scale give the same rows and ids.
 * Throws {@link CatalogueNotEmptyError} for a kind holding data unless `replace` is set.
 */
export async function seedCatalogue(db: Database, options: SeedOptions): Promise<SeedResult[]> {
  const results: SeedResult[] = []
  for (const kind of options.kinds ?? allKinds) {
    const started = performance.now()
    const recipe = recipeOf(kind)
    const report = (skus: number, phase: SeedProgress['phase']) =>
      options.onProgress?.({ kind, skus, total: options.scale, phase })

    const counts = await db.rawTransaction(async (client) => {
      if (options.replace) {
        await client.query(`TRUNCATE ${kind.priceTable}, ${kind.skuTable} RESTART IDENTITY CASCADE`)
      } else {
        const [row] = await client.query<{ filled: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM ${kind.priceTable}) OR EXISTS (SELECT 1 FROM ${kind.skuTable}) AS filled`,
        )
        if (row?.filled) {
          throw new CatalogueNotEmptyError(`${kind.path} already holds data; seed --replace replaces it`)
        }
      }
      // A big load builds the secondary indexes once afterwards: much faster than growing them row by row.
      const indexes =
        options.scale >= BULK_SCALE ? await dropSecondaryIndexes(client, [kind.priceTable, kind.skuTable]) : []
      const loaded = await loadKind(client, kind, recipe, options, report)
      await createIndexes(client, indexes)
      return loaded
    })

    const loaded = performance.now()
    report(counts.skus, 'refresh')
    await refreshMatview(db.primary, kind)
    await sql`ANALYZE ${sql.table(kind.priceTable)}`.execute(db.primary)
    await sql`ANALYZE ${sql.table(kind.skuTable)}`.execute(db.primary)
    await sql`ANALYZE ${sql.table(kind.matview)}`.execute(db.primary)
    report(counts.skus, 'done')
    const finished = performance.now()
    results.push({
      kind: kind.path,
      ...counts,
      milliseconds: Math.round(finished - started),
      loadMilliseconds: Math.round(loaded - started),
      matviewMilliseconds: Math.round(finished - loaded),
    })
  }
  return results
}

/** From this scale on, a kind's secondary indexes are dropped for the load and built again after it. */
const BULK_SCALE = 50_000

async function loadKind(
  client: RawClient,
  kind: Kind,
  recipe: Parameters<typeof generateCatalogue>[0],
  options: SeedOptions,
  report: (skus: number, phase: SeedProgress['phase']) => void,
): Promise<{ entries: number; skus: number }> {
  const entryFields = entryFieldColumns(kind)
  const skuFields = skuFieldColumns(kind)
  const entryChunks: string[] = []
  let pendingEntries: DemoRow[] = []
  let skus = 0
  let lastReport = 0

  function* skuRows(): Generator<(string | number | null)[]> {
    for (const product of generateCatalogue(recipe, { seed: options.seed ?? DEMO_SEED, scale: options.scale })) {
      pendingEntries.push(...product.entries)
      if (pendingEntries.length >= 2000) {
        entryChunks.push(copyText(pendingEntries.map((entry) => entryFields.map(([name]) => entry[name] ?? null))))
        pendingEntries = []
      }
      for (const sku of product.skus) {
        skus++
        yield skuFields.map(([name]) => sku[name] ?? null)
      }
      if (skus - lastReport >= 5000) {
        lastReport = skus
        report(skus, 'load')
      }
    }
  }

  report(0, 'load')
  await client.copyRows(
    kind.skuTable,
    skuFields.map(([, column]) => column),
    copyTextChunks(skuRows()),
  )
  if (pendingEntries.length > 0) {
    entryChunks.push(copyText(pendingEntries.map((entry) => entryFields.map(([name]) => entry[name] ?? null))))
  }
  const entries = await client.copyRows(
    kind.priceTable,
    entryFields.map(([, column]) => column),
    (async function* () {
      yield* entryChunks
    })(),
  )
  report(skus, 'load')
  return { entries, skus }
}

export interface DemoOptions {
  readonly mode: 'auto' | 'true' | 'false'
  readonly scale: number
  readonly log: FastifyBaseLogger
}

/**
 * Fills the database with the demo catalogue when `mode` asks for it: `auto` only an embedded database whose
 * seven kinds are all empty (a first start), `true` every empty kind on either database, `false` never.
 * Never touches a kind that holds data.
 */
export async function ensureDemoCatalogue(db: Database, options: DemoOptions): Promise<void> {
  if (options.mode === 'false' || options.scale === 0) return
  if (options.mode === 'auto' && db.driver !== 'pglite') return
  const empty: Kind[] = []
  for (const kind of allKinds) if (await isKindEmpty(db, kind)) empty.push(kind)
  if (empty.length === 0 || (options.mode === 'auto' && empty.length < allKinds.length)) return

  options.log.info({ scale: options.scale, kinds: empty.length }, 'loading the demo catalogue')
  const started = performance.now()
  const results = await seedCatalogue(db, { kinds: empty, scale: options.scale })
  options.log.info(
    {
      skus: results.reduce((sum, r) => sum + r.skus, 0),
      entries: results.reduce((sum, r) => sum + r.entries, 0),
      milliseconds: Math.round(performance.now() - started),
    },
    'demo catalogue loaded',
  )
}
