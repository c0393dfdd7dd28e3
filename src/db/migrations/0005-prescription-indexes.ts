import { type Kysely, sql } from 'kysely'

/**
 * A GiST index per matview over the ranges a prescription filter looks into (a lens's sphere, cylinder and
 * addition zones; a contact lens's cylinder and axis), so "which goods cover −2.75 / −1.25 / +2.00" is an index
 * lookup at a million SKUs rather than a scan. The expressions are the search's own (`coveredRangeSql`). Ranges
 * every SKU carries as a value (a contact lens's dioptre) already have a btree on that value.
 *
 * Frozen: the statements are what catalog/kind-schema.ts `prescriptionIndexSql` gave when this migration was
 * released, written out.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db)
}

const statements: readonly string[] = [
  `CREATE INDEX lenses_mv_prescription ON lenses_mv USING gist ((numrange(coalesce(sphere, sphere_from), coalesce(sphere, sphere_to), '[]')), (numrange(coalesce(cylinder, cylinder_from), coalesce(cylinder, cylinder_to), '[]')), (numrange(coalesce(add, add_from), coalesce(add, add_to), '[]')))`,
  `CREATE INDEX contact_lenses_mv_prescription ON contact_lenses_mv USING gist ((numrange(coalesce(cylinder, cylinder_from), coalesce(cylinder, cylinder_to), '[]')), (int4range(coalesce(axis, axis_from), coalesce(axis, axis_to), '[]')))`,
]
