import { type Kysely, sql } from 'kysely'

/**
 * Per kind, a counter that every matview refresh bumps in the refresh's own transaction: together with the data
 * generation it names exactly one state of what a search reads, so results can be cached under it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE catalog_state ADD COLUMN matview_version bigint NOT NULL DEFAULT 0`.execute(db)
}
