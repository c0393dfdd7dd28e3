import { quoteIdent, type RawClient } from './database.js'

/*
 * Bulk loading: a large COPY into an empty table is several times faster when the table's secondary indexes are
 * built once afterwards instead of growing row by row. Both steps run in the loader's transaction, so a failed
 * load leaves every index as it was.
 */

/**
 * Drops the indexes of `tables` (in the current schema) that no constraint owns (trigram, sort, the entry key)
 * and returns the statements that create them again; primary keys and UNIQUE constraints stay.
 */
export async function dropSecondaryIndexes(client: RawClient, tables: readonly string[]): Promise<string[]> {
  const rows = await client.query<{ name: string; definition: string }>(
    `SELECT i.indexname AS name, i.indexdef AS definition
       FROM pg_indexes i
      WHERE i.schemaname = current_schema() AND i.tablename = ANY($1)
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname
                          AND c.connamespace = (SELECT oid FROM pg_namespace WHERE nspname = current_schema()))
      ORDER BY i.indexname`,
    [tables],
  )
  for (const row of rows) await client.query(`DROP INDEX ${quoteIdent(row.name)}`)
  return rows.map((row) => row.definition)
}

/** Builds again the indexes {@link dropSecondaryIndexes} dropped, with more sort memory than a query gets. */
export async function createIndexes(client: RawClient, definitions: readonly string[]): Promise<void> {
  if (definitions.length === 0) return
  await client.query("SET LOCAL maintenance_work_mem = '128MB'")
  for (const definition of definitions) await client.query(definition)
}
