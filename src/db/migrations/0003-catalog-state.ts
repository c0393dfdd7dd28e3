import { type Kysely, sql } from 'kysely'
import { catalogStateSql } from '../../catalog/catalog-state.js'
import { kinds } from '../../catalog/kinds.js'

/** Per kind: the data generation that every write bumps (by trigger) and the generation its matview shows. */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of catalogStateSql(kinds)) await sql.raw(statement).execute(db)
}
