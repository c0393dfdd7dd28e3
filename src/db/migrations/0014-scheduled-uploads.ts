import { type Kysely, sql } from 'kysely'

/**
 * Scheduled uploads: a price-list upload asked with an effective date-time waits in `scheduled_price_change` as an
 * `upload`, its file's bytes in `file` (bounded by the upload limit), so it survives restarts and any instance can
 * apply it; `parameters` holds its file name, size, format, mode and conflict choice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE scheduled_price_change DROP CONSTRAINT scheduled_price_change_operation_check`.execute(db)
  await sql`
    ALTER TABLE scheduled_price_change
    ADD CONSTRAINT scheduled_price_change_operation_check CHECK (operation IN ('bulk-change', 'upload')),
    ADD COLUMN file bytea`.execute(db)
}
