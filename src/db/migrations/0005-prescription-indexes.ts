import { type Kysely, sql } from 'kysely'
import { kinds } from '../../catalog/kinds.js'
import { coveredRangeSql } from '../../catalog/search-query.js'

/**
 * A GiST index per matview over the ranges a prescription filter looks into (a lens's sphere, cylinder and
 * addition zones; a contact lens's cylinder and axis), so "which goods cover −2.75 / −1.25 / +2.00" is an index
 * lookup at a million SKUs rather than a scan. The expressions are the search's own (`coveredRangeSql`). Ranges
 * every SKU carries as a value (a contact lens's dioptre) already have a btree on that value.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const kind of kinds) {
    const ranges = kind.filters.flatMap((filter) =>
      filter.prescription && filter.match === 'covers' && filter.range.sku !== 'required' ? [filter.range] : [],
    )
    if (ranges.length === 0) continue
    const expressions = ranges.map((range) => `(${coveredRangeSql(range)})`).join(', ')
    await sql
      .raw(`CREATE INDEX ${kind.matview}_prescription ON ${kind.matview} USING gist (${expressions})`)
      .execute(db)
  }
}
