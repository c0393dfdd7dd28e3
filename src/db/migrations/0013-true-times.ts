import { type Kysely, sql } from 'kysely'

/**
 * Times as the clock reads them, and the progress of jobs.
 *
 * `now()` is the start of its transaction, so a job's `finished_at` and a change's `created_at` written inside a
 * long write said when it began. A job now records when its work started (`started_at`) and its `progress` (phase,
 * rows done, rows in all) as it runs; the service writes its end with `clock_timestamp()`. A change's
 * `created_at` is set again as its transaction commits (a deferred constraint trigger, which runs at COMMIT), so
 * the change log tells when a change took effect.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE write_job ADD COLUMN started_at timestamptz, ADD COLUMN progress jsonb`.execute(db)
  await sql`
    CREATE FUNCTION glass_price_change_committed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE glass_price_change SET created_at = clock_timestamp() WHERE id = NEW.id;
      RETURN NULL;
    END
    $$`.execute(db)
  await sql`
    CREATE CONSTRAINT TRIGGER glass_price_change_committed
      AFTER INSERT ON glass_price_change
      DEFERRABLE INITIALLY DEFERRED
      FOR EACH ROW EXECUTE FUNCTION glass_price_change_committed()`.execute(db)
}
