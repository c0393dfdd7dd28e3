import { type Kysely, sql } from 'kysely'

/**
 * The price tables' indexes chosen for writes (docs/architecture.md, "Indexes chosen for writes"). The in-memory
 * search index answers the substring searches, price bands and sorts of the price lists; SQL answers them only
 * while it loads or when it is off, by scanning a price table (tens of thousands of rows per kind, a few hundred
 * milliseconds at the largest). So each price table loses its trigram GIN indexes and its `price` and `purchase`
 * B-trees, and is kept half empty (fillfactor 50, rewritten here once): no index covers a price any more, so a
 * price update is a HOT update, its new row version written on the same page and no index touched. The matviews
 * keep their indexes: they are rebuilt off the write path, and a search over a million SKUs needs them.
 *
 * Frozen: the tables and indexes are named as this migration found them.
 */
const priceTables: readonly (readonly [table: string, trigramColumns: readonly string[]])[] = [
  ['accessories_price', ['category', 'model']],
  ['sunglasses_price', ['manufacturer', 'brand', 'color', 'model', 'lenses_type']],
  ['glasses_price', ['manufacturer', 'brand', 'model']],
  [
    'lenses_price',
    ['manufacturer', 'brand', 'type', 'lens_class', 'material', 'geometry', 'cover', 'technology', 'color'],
  ],
  ['contact_lenses_price', ['manufacturer', 'name', 'color']],
  [
    'extras_price',
    [
      'frame_manufacturer',
      'frame_brand',
      'frame_model',
      'frame_type',
      'frame_material',
      'frame_target_group',
      'frame_color',
    ],
  ],
  [
    'semifinished_lenses_price',
    ['manufacturer', 'brand', 'type', 'lenses_class', 'material', 'geometry', 'cover', 'technology', 'color'],
  ],
]

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [table, columns] of priceTables) {
    const indexes = [`${table}_price`, `${table}_purchase`, ...columns.map((column) => `${table}_${column}_trgm`)]
    await sql.raw(`DROP INDEX IF EXISTS ${indexes.join(', ')}`).execute(db)
    await sql.raw(`ALTER TABLE ${table} SET (fillfactor = 50)`).execute(db)
    // Rewritten, so the rows already there leave each page the room the fillfactor asks for.
    await sql.raw(`CLUSTER ${table} USING ${table}_pkey`).execute(db)
    await sql.raw(`ALTER TABLE ${table} SET WITHOUT CLUSTER`).execute(db)
  }
}
