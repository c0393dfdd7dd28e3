import { type Kysely, sql } from 'kysely'

/**
 * A log of which price-list entries and SKUs each write changed, per kind and data generation, so that a reader
 * holding the data at generation G (the in-memory search index) can bring it to a later generation by reading only
 * the rows that changed since, instead of everything.
 *
 * - `catalog_change(kind, generation, source, id)`: `source` is `p` for an entry of `<kind>_price`, `s` for a SKU of
 *   `<kind>_sku`. One statement-level trigger per table and event (transition tables allow one event per trigger)
 *   records the ids its statement inserted, updated or deleted, under the generation that statement's stale
 *   trigger has just bumped: the stale trigger is named `…_catalog_stale`, these `…_catalog_track_…`, and
 *   PostgreSQL fires the triggers of one event in the alphabetical order of their names.
 * - `catalog_state.changes_from`: the log holds every change of the kind after this generation (NULL: it holds
 *   nothing usable). A reader behind it reloads in full. A TRUNCATE, or a statement changing more than 100,000
 *   rows, records no ids and moves `changes_from` to its own generation; pruning old rows moves it too.
 *
 * Frozen: the tables are named here as this migration found them; a later kind brings its triggers in its own
 * migration.
 */
const tables: readonly (readonly [kind: string, table: string])[] = [
  ['accessories', 'accessories'],
  ['sunglasses', 'sunglasses'],
  ['glasses', 'glasses'],
  ['lenses', 'lenses'],
  ['contact-lenses', 'contact_lenses'],
  ['extras', 'extras'],
  ['semifinished-lenses', 'semifinished_lenses'],
]

/** Each event's trigger, with the transition tables it may have. */
const triggerEvents = [
  ['INSERT', 'REFERENCING NEW TABLE AS new_rows'],
  ['UPDATE', 'REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows'],
  ['DELETE', 'REFERENCING OLD TABLE AS old_rows'],
  ['TRUNCATE', ''],
] as const

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE catalog_change (
      kind text NOT NULL,
      generation bigint NOT NULL,
      source "char" NOT NULL,
      id bigint NOT NULL,
      logged_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db)
  await sql`CREATE INDEX catalog_change_kind_generation ON catalog_change (kind, generation)`.execute(db)
  await sql`ALTER TABLE catalog_state ADD COLUMN changes_from bigint`.execute(db)

  // TG_ARGV: kind, source. The transition tables are `new_rows` and/or `old_rows`, as the trigger's event has them.
  await sql`
    CREATE FUNCTION catalog_track_change() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    DECLARE
      changed bigint;
    BEGIN
      IF TG_OP = 'TRUNCATE' THEN
        UPDATE catalog_state SET changes_from = data_generation WHERE kind = TG_ARGV[0];
        RETURN NULL;
      END IF;
      IF TG_OP = 'INSERT' THEN
        SELECT count(*) INTO changed FROM new_rows;
      ELSE
        SELECT count(*) INTO changed FROM old_rows;
      END IF;
      IF changed > 100000 THEN
        UPDATE catalog_state SET changes_from = data_generation WHERE kind = TG_ARGV[0];
      ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO catalog_change (kind, generation, source, id)
        SELECT TG_ARGV[0], s.data_generation, TG_ARGV[1]::"char", r.id FROM new_rows r, catalog_state s
        WHERE s.kind = TG_ARGV[0];
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO catalog_change (kind, generation, source, id)
        SELECT TG_ARGV[0], s.data_generation, TG_ARGV[1]::"char", r.id FROM old_rows r, catalog_state s
        WHERE s.kind = TG_ARGV[0];
      ELSE
        INSERT INTO catalog_change (kind, generation, source, id)
        SELECT TG_ARGV[0], s.data_generation, TG_ARGV[1]::"char", r.id
        FROM (SELECT id FROM old_rows UNION SELECT id FROM new_rows) r, catalog_state s
        WHERE s.kind = TG_ARGV[0];
      END IF;
      RETURN NULL;
    END
    $$`.execute(db)

  for (const [kind, table] of tables) {
    for (const [suffix, source] of [
      ['price', 'p'],
      ['sku', 's'],
    ] as const) {
      const target = `${table}_${suffix}`
      for (const [event, transitions] of triggerEvents) {
        await sql
          .raw(
            `CREATE TRIGGER ${target}_catalog_track_${event.toLowerCase()} AFTER ${event} ON ${target} ${transitions}
             FOR EACH STATEMENT EXECUTE FUNCTION catalog_track_change('${kind}', '${source}')`,
          )
          .execute(db)
      }
    }
    await sql`UPDATE catalog_state SET changes_from = data_generation WHERE kind = ${kind}`.execute(db)
  }
}
