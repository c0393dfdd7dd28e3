import { type Kysely, type Migration, Migrator, sql } from 'kysely'
import { migrations } from './migrations/index.js'
import type { Tables } from './tables.js'

/**
 * Applies every pending migration; throws with the failing migration's name if one fails.
 *
 * The bookkeeping tables live in the connection's current schema, named explicitly: otherwise Kysely looks for
 * them in every schema of the database and takes another schema's (a parallel test suite's) for its own.
 * `registry` is the service's own; the schema drift test passes another to build a database to compare with.
 */
export async function migrateToLatest(
  db: Kysely<Tables>,
  registry: Readonly<Record<string, Migration>> = migrations,
): Promise<string[]> {
  const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)
  const schema = rows[0]?.schema ?? 'public'
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => registry },
    migrationTableName: 'schema_migration',
    migrationLockTableName: 'schema_migration_lock',
    migrationTableSchema: schema,
  })
  for (let attempt = 1; ; attempt++) {
    const { error, results } = await migrator.migrateToLatest()
    if (!error) return (results ?? []).map((result) => result.migrationName)
    // Kysely's check for its bookkeeping tables reads the catalog of every schema; a schema another session drops
    // meanwhile fails that read ("schema … does not exist", or "column … of relation … does not exist" for a
    // table dropped under it) before anything is migrated. Reading again succeeds.
    const failed = results?.find((result) => result.status === 'Error')
    if (attempt < 8 && !failed && isOtherSchemaVanished(error, schema)) {
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt))
      continue
    }
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${(error as Error).message ?? error}`)
  }
}

function isOtherSchemaVanished(error: unknown, ownSchema: string): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown }
  // 3F000: no such schema; 42P01: no such table; 42703: no such column.
  return (
    (code === '3F000' || code === '42P01' || code === '42703') &&
    typeof message === 'string' &&
    !message.includes(`"${ownSchema}"`)
  )
}
