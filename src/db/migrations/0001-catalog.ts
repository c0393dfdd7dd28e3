import { type Kysely, sql } from 'kysely'
import { createKindSql, normFunctionSql } from '../../catalog/kind-schema.js'
import { kinds } from '../../catalog/kinds.js'

/** The seven kinds: price lists, nomenclature, matviews and their indexes, all derived from the descriptors. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`.execute(db)
  await sql.raw(normFunctionSql).execute(db)
  for (const kind of kinds) {
    for (const statement of createKindSql(kind)) await sql.raw(statement).execute(db)
  }
}
