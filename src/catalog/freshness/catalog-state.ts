import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Tables } from '../../db/tables.js'
import type { Kind } from '../kinds/kind.js'

/*
 * How fresh each kind's matview is. Every statement that writes a kind's price list or nomenclature, by any path
 * (API, COPY import, CLI, plain SQL), bumps the kind's data generation through a statement-level trigger; a
 * refresh records the generation it was started from. Stale = data generation > refreshed generation.
 *
 * The bump is an UPDATE of the kind's one `catalog_state` row, so it becomes visible exactly when the writing
 * transaction commits: a refresh that read generation G and then started sees at least G's data. (A sequence
 * would be cheaper but is visible before commit, and a refresh could then record data it never saw.) The price:
 * writers of one kind queue on that row from the end of their write statement to their commit.
 *
 * The table, the trigger function and each kind's row and triggers are created by the kind's schema
 * (kind-schema.ts: `catalogStateSql`, `catalogStateKindSql`, `changeLogKindSql`).
 */

export interface CatalogState {
  /** The kind's path (`contact-lenses`). */
  readonly kind: string
  readonly dataGeneration: number
  readonly changedAt: Date | null
  readonly refreshedGeneration: number
  readonly refreshedAt: Date | null
  /** How long the last refresh took, in milliseconds. */
  readonly refreshMs: number | null
  readonly stale: boolean
}

/** The state of every kind, in no particular order. */
export async function readCatalogStates(db: Kysely<Tables>): Promise<CatalogState[]> {
  const rows = await db.selectFrom('catalog_state').selectAll().execute()
  return rows.map((row) => ({
    kind: row.kind,
    dataGeneration: Number(row.data_generation),
    changedAt: row.changed_at,
    refreshedGeneration: Number(row.refreshed_generation),
    refreshedAt: row.refreshed_at,
    refreshMs: row.refresh_ms,
    stale: Number(row.data_generation) > Number(row.refreshed_generation),
  }))
}

/**
 * The kind's current data generation: it changes (grows) with every committed write to the kind's price list or
 * nomenclature, whatever wrote it. A cache of price-list search results keyed by it is never stale. Matview
 * results depend on {@link matviewGeneration} instead, which lags behind until the next refresh.
 */
export async function dataGeneration(db: Kysely<Tables>, kind: Kind): Promise<number> {
  const row = await db
    .selectFrom('catalog_state')
    .select('data_generation')
    .where('kind', '=', kind.path)
    .executeTakeFirst()
  return Number(row?.data_generation ?? 0)
}

/** The data generation the kind's matview was last refreshed from (what a matview search shows). */
export async function matviewGeneration(db: Kysely<Tables>, kind: Kind): Promise<number> {
  const row = await db
    .selectFrom('catalog_state')
    .select('refreshed_generation')
    .where('kind', '=', kind.path)
    .executeTakeFirst()
  return Number(row?.refreshed_generation ?? 0)
}

/**
 * Records that the kind's matview now shows (at least) data generation `generation`. The generation must have
 * been read BEFORE the refresh started; never lowers what an overlapping refresh recorded.
 */
export async function recordMatviewRefresh(
  db: Kysely<Tables>,
  kind: Kind,
  generation: number,
  durationMs: number,
): Promise<void> {
  await db
    .updateTable('catalog_state')
    .set({
      refreshed_generation: sql<number>`greatest(refreshed_generation, ${generation})`,
      matview_version: sql<number>`matview_version + 1`,
      refreshed_at: sql<Date>`clock_timestamp()`,
      refresh_ms: Math.round(durationMs),
    })
    .where('kind', '=', kind.path)
    .execute()
}

/** What a query reads of a kind: its tables (price list, nomenclature) and/or its matview. */
export type KindReads = 'tables' | 'matview' | 'both'

/**
 * A scalar subquery naming the state of what a query reads: the data generation for the tables, the matview
 * version for the matview (each refresh bumps it in its own transaction). Selected in the same statement as the
 * result, it names exactly the snapshot the result was computed in; two statements that see the same version see
 * the same data, so a result can be cached under it (`result-cache.ts`) and is never served once the data moves.
 */
export function dataVersionSql(kind: Kind, reads: KindReads): RawBuilder<string> {
  const parts =
    reads === 'tables'
      ? sql`data_generation::text`
      : reads === 'matview'
        ? sql`'m' || matview_version::text`
        : sql`data_generation::text || '.' || matview_version::text`
  return sql<string>`(SELECT ${parts} FROM catalog_state WHERE kind = ${kind.path})`
}

/** What a search reads: the price list and nomenclature with the matview in price-list mode, else the matview. */
export const searchReads = (byPriceList: boolean): KindReads => (byPriceList ? 'both' : 'matview')

/** The version of what a query reads, now: the key a cached result must have been computed at to be served. */
export async function readDataVersion(db: Kysely<Tables>, kind: Kind, reads: KindReads): Promise<string | null> {
  const { rows } = await sql<{ version: string | null }>`SELECT ${dataVersionSql(kind, reads)} AS version`.execute(db)
  return rows[0]?.version ?? null
}

/** How long the change log keeps a write's ids: long enough for every instance to have caught up since. */
const CHANGE_LOG_RETENTION_SECONDS = 600

/**
 * Drops the kind's change-log rows older than the retention, moving `changes_from` past them (a reader still
 * behind those generations reloads in full). The refresher runs it with every refresh.
 */
export async function pruneChangeLog(db: Kysely<Tables>, kind: Kind): Promise<void> {
  await sql`
    WITH gone AS (
      DELETE FROM catalog_change
      WHERE kind = ${kind.path} AND logged_at < now() - make_interval(secs => ${CHANGE_LOG_RETENTION_SECONDS})
      RETURNING generation
    )
    UPDATE catalog_state SET changes_from = greatest(changes_from, (SELECT max(generation) FROM gone))
    WHERE kind = ${kind.path} AND EXISTS (SELECT 1 FROM gone)`.execute(db)
}
