import { type Kysely, Migrator, sql } from 'kysely'
import { migrations } from './migrations/index.js'

/**
 * Applies every pending migration; throws with the failing migration's name if one fails.
 *
 * The bookkeeping tables live in the connection's current schema, named explicitly: otherwise Kysely looks for
 * them in every schema of the database and takes another schema's (a parallel test suite's) for its own.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    migrationTableName: 'schema_migration',
    migrationLockTableName: 'schema_migration_lock',
    migrationTableSchema: rows[0]?.schema ?? 'public',
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')
    throw new Error(`migration ${failed?.migrationName ?? '(unknown)'} failed: ${(error as Error).message ?? error}`)
  }
  return (results ?? []).map((result) => result.migrationName)
}
