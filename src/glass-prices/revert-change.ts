import { type Kysely, sql } from 'kysely'
import { bigintId, type Tables } from '../db/tables.js'
import { inTransaction } from '../db/transaction.js'
import { message } from '../domain/messages.js'
import { conflict, entryNotFound } from '../http/problem.js'
import type { RevertConflict, RevertResult } from './glass-price-schemas.js'
import { finishChange, lockGlassPriceEntries, lockGlassPriceList, openChange } from './price-history.js'
import { reportJobProgress } from './write-jobs.js'

/*
 * The revert of a change of the glass price list (SPEC §6): it restores the old values of the entries that still
 * hold the change's new values, reports the others as conflicts, and is itself a change (price-history.ts records
 * it). A bulk change, which writes one price field per entry and no key, is reverted by two set statements at the
 * cost of its floor; every other change through a plan of its entries, their keys and their conflicts. Restored
 * keys are written in their one form (`optics_key_text`, see domain/key-text.ts), as every other door writes them.
 * It never re-applies arithmetic (an inverse percentage does not give the old prices back); it restores the
 * recorded values.
 */

const CONFLICT_LIST_LIMIT = 100

/**
 * Reverts a change: restores the recorded old values of every entry that still holds the change's new values
 * (re-creates a deleted entry under its id, deletes a created one), and reports the others as conflicts. The
 * revert is itself a change (`action` REVERT, `reverts` = the change), and the change is marked reverted, so a
 * second revert of it is a 409 rather than a silent re-apply. When every entry conflicts, nothing is written
 * and the answer is a 409 listing them. Opens its own transaction unless `db` is one.
 */
export async function revertChange(db: Kysely<Tables>, changeIdText: string, user: string): Promise<RevertResult> {
  return inTransaction(db, async (trx) => {
    reportJobProgress('selecting', 0)
    await lockGlassPriceList(trx)
    const changeId = Number(changeIdText)
    const original = await trx
      .selectFrom('glass_price_change')
      .selectAll()
      .where('id', '=', bigintId(changeIdText))
      .forUpdate()
      .executeTakeFirst()
    if (!original) throw entryNotFound(message('change.notFound', { id: changeIdText }))
    if (original.reverted_by !== null) {
      throw conflict(
        'already-reverted',
        message('change.alreadyReverted', { id: changeId, revertedBy: String(original.reverted_by) }),
        {
          revertedBy: Number(original.reverted_by),
        },
      )
    }

    // The price list is locked against writes first: the statements below then never wait while holding other
    // locks, and what the plan reads stays true until they write.
    await lockGlassPriceEntries(trx)
    if (original.action === 'BULK_CHANGE') return revertBulkChange(trx, changeId, original.changed_count, user)

    await sql`
      CREATE TEMP TABLE glass_price_revert_plan ON COMMIT DROP AS
      WITH per_entry AS (
        SELECT r.entry_id,
               bool_and(r.old_value IS NULL) AS was_create,
               bool_and(r.new_value IS NULL) AS was_delete,
               bool_and(CASE r.field
                 WHEN 'manufacturer' THEN e.manufacturer = r.new_value
                 WHEN 'brand' THEN e.brand = r.new_value
                 WHEN 'model' THEN e.model = r.new_value
                 WHEN 'price' THEN e.price = r.new_value::numeric
                 WHEN 'purchase' THEN e.purchase = r.new_value::numeric
               END) AS holds_new,
               bool_or(e.id IS NOT NULL) AS present,
               -- Keys recorded before they had one form (migration 0007) come back in it.
               optics_key_text(max(r.old_value) FILTER (WHERE r.field = 'manufacturer')) AS old_manufacturer,
               optics_key_text(max(r.old_value) FILTER (WHERE r.field = 'brand')) AS old_brand,
               optics_key_text(max(r.old_value) FILTER (WHERE r.field = 'model')) AS old_model,
               max(r.old_value) FILTER (WHERE r.field = 'price') AS old_price,
               max(r.old_value) FILTER (WHERE r.field = 'purchase') AS old_purchase,
               -- The entry's keys now (one entry per group: the join is on its id).
               max(e.manufacturer) AS manufacturer, max(e.brand) AS brand, max(e.model) AS model
        FROM glass_price_change_row r
        LEFT JOIN glasses_price e ON e.id = r.entry_id
        WHERE r.change_id = ${changeId}
        GROUP BY r.entry_id
      ), planned AS (
        SELECT p.entry_id, p.was_create, p.was_delete, p.holds_new, p.present, p.old_manufacturer, p.old_brand,
               p.old_model, p.old_price, p.old_purchase,
               coalesce(p.old_manufacturer, p.manufacturer) AS key_manufacturer,
               coalesce(p.old_brand, p.brand) AS key_brand,
               coalesce(p.old_model, p.model) AS key_model
        FROM per_entry p
      )
      SELECT p.*,
        -- A deleted entry whose key an entry this revert removes holds now (a replacing import's) comes back
        -- after that removal.
        p.was_delete AND NOT p.present AND EXISTS (
          SELECT 1 FROM glasses_price d JOIN planned r ON r.entry_id = d.id AND r.was_create AND r.holds_new
          WHERE optics_norm(d.manufacturer) = optics_norm(p.key_manufacturer)
            AND optics_norm(d.brand) = optics_norm(p.key_brand)
            AND optics_norm(d.model) = optics_norm(p.key_model)) AS after_removal,
        CASE
          WHEN p.was_delete THEN
            CASE WHEN p.present THEN 'EXISTS'
                 WHEN EXISTS (
                   SELECT 1 FROM glasses_price d
                   WHERE optics_norm(d.manufacturer) = optics_norm(p.key_manufacturer)
                     AND optics_norm(d.brand) = optics_norm(p.key_brand)
                     AND optics_norm(d.model) = optics_norm(p.key_model)
                     AND NOT EXISTS (
                       SELECT 1 FROM planned r WHERE r.entry_id = d.id AND r.was_create AND r.holds_new)) THEN 'DUPLICATE'
            END
          WHEN NOT p.present THEN 'DELETED'
          WHEN NOT p.holds_new THEN 'CHANGED'
          WHEN NOT p.was_create
               AND (p.old_manufacturer IS NOT NULL OR p.old_brand IS NOT NULL OR p.old_model IS NOT NULL)
               AND EXISTS (
                 SELECT 1 FROM glasses_price d
                 WHERE d.id <> p.entry_id
                   AND optics_norm(d.manufacturer) = optics_norm(p.key_manufacturer)
                   AND optics_norm(d.brand) = optics_norm(p.key_brand)
                   AND optics_norm(d.model) = optics_norm(p.key_model)) THEN 'DUPLICATE'
        END AS conflict
      FROM planned p`.execute(trx)

    type Counted = 'recreate' | 'recreateAfterRemoval' | 'restore' | 'remove' | 'conflicting'
    const counts = await sql<Record<Counted, number | string>>`
      SELECT count(*) FILTER (WHERE conflict IS NULL AND was_delete) AS recreate,
             count(*) FILTER (WHERE conflict IS NULL AND was_delete AND after_removal) AS "recreateAfterRemoval",
             count(*) FILTER (WHERE conflict IS NULL AND NOT was_delete AND NOT was_create) AS restore,
             count(*) FILTER (WHERE conflict IS NULL AND was_create) AS remove,
             count(*) FILTER (WHERE conflict IS NOT NULL) AS conflicting
      FROM glass_price_revert_plan`.execute(trx)
    const count = (name: Counted) => Number(counts.rows[0]?.[name] ?? 0)
    const restorable = count('recreate') + count('restore') + count('remove')
    const conflicting = count('conflicting')
    reportJobProgress('writing', 0, restorable)
    const conflictRows = await sql<{ entry_id: number | string; conflict: RevertConflict['reason'] }>`
      SELECT entry_id, conflict FROM glass_price_revert_plan WHERE conflict IS NOT NULL
      ORDER BY entry_id LIMIT ${CONFLICT_LIST_LIMIT}`.execute(trx)
    const conflicts = conflictRows.rows.map((row) => ({ entryId: Number(row.entry_id), reason: row.conflict }))

    if (restorable === 0 && conflicting > 0) {
      throw conflict('revert-conflicts', message('change.revertConflicts', { id: changeId }), {
        conflictCount: conflicting,
        conflicts,
      })
    }

    const revertId = await openRevert(trx, changeId, user)
    // Re-creations first: an insert may wait on a concurrent insert of the same key, and must not hold the
    // kind's catalog-state lock (taken by the first write statement) while it waits. A statement with nothing
    // to do is skipped: even an empty write marks the matview stale.
    const recreate = (afterRemoval: boolean) => sql`
      INSERT INTO glasses_price (id, manufacturer, brand, model, price, purchase, updated_by)
      SELECT entry_id, old_manufacturer, old_brand, old_model, old_price::numeric, old_purchase::numeric, ${user}
      FROM glass_price_revert_plan
      WHERE was_delete AND conflict IS NULL AND after_removal = ${afterRemoval}`
    if (count('recreate') > count('recreateAfterRemoval')) await recreate(false).execute(trx)
    if (count('restore') > 0) {
      await sql`
      UPDATE glasses_price e SET
        manufacturer = coalesce(p.old_manufacturer, e.manufacturer),
        brand = coalesce(p.old_brand, e.brand),
        model = coalesce(p.old_model, e.model),
        price = coalesce(p.old_price::numeric, e.price),
        purchase = coalesce(p.old_purchase::numeric, e.purchase),
        updated_at = now(), updated_by = ${user}, version = e.version + 1
      FROM glass_price_revert_plan p
      WHERE e.id = p.entry_id AND NOT p.was_create AND NOT p.was_delete AND p.conflict IS NULL`.execute(trx)
    }
    if (count('remove') > 0) {
      await sql`
      DELETE FROM glasses_price e USING glass_price_revert_plan p
      WHERE e.id = p.entry_id AND p.was_create AND p.conflict IS NULL`.execute(trx)
    }
    // Their keys were held by the entries just removed, which this transaction has locked: no waiting here.
    if (count('recreateAfterRemoval') > 0) await recreate(true).execute(trx)
    // The history rows are the change's own, turned round; the plan is joined only to leave out conflicting entries.
    const restored =
      conflicting === 0
        ? sql``
        : sql`AND r.entry_id IN (SELECT entry_id FROM glass_price_revert_plan WHERE conflict IS NULL)`
    await sql`
      INSERT INTO glass_price_change_row (change_id, entry_id, field, old_value, new_value)
      SELECT ${revertId}, r.entry_id, r.field, r.new_value,
        CASE WHEN r.field IN ('manufacturer', 'brand', 'model') THEN optics_key_text(r.old_value) ELSE r.old_value END
      FROM glass_price_change_row r
      WHERE r.change_id = ${changeId} ${restored}`.execute(trx)
    await sql`DROP TABLE glass_price_revert_plan`.execute(trx)

    return finishRevert(trx, changeId, revertId, restorable, conflicts, conflicting)
  })
}

/** Records the revert of `changeId` as a change of its own; returns its id. */
function openRevert(trx: Kysely<Tables>, changeId: number, user: string): Promise<number> {
  return openChange(trx, { action: 'REVERT', user, parameters: { batch: changeId }, reverts: changeId })
}

/** Stores how many entries the revert restored, marks the change reverted by it, and answers. */
async function finishRevert(
  trx: Kysely<Tables>,
  changeId: number,
  revertId: number,
  restored: number,
  conflicts: RevertConflict[],
  conflictCount: number,
): Promise<RevertResult> {
  await finishChange(trx, revertId, restored)
  await trx.updateTable('glass_price_change').set({ reverted_by: revertId }).where('id', '=', changeId).execute()
  reportJobProgress('writing', restored, restored)
  return { batch: revertId, reverted: changeId, restoredCount: restored, conflictCount, conflicts }
}

/**
 * The revert of a bulk change, at the cost of its bare statements. A bulk change writes one price field per entry
 * (its rows are keyed by change, entry and field), both values recorded, and no key: so an entry conflicts only by a
 * later change of that field (CHANGED) or by its deletion (DELETED), and no plan of keys is needed. Two statements:
 * the revert's history rows first, one per entry that still holds the change's new value, then the update that
 * applies exactly those rows. The history is inserted in entry order: its index by entry takes the rows in one
 * sweep instead of at random (at a whole list, 9 s instead of 14). The conflicts are looked for only when some
 * entries were left.
 */
async function revertBulkChange(
  trx: Kysely<Tables>,
  changeId: number,
  changed: number,
  user: string,
): Promise<RevertResult> {
  const revertId = await openRevert(trx, changeId, user)
  // The entries the change wrote: what a job's progress shows as its total.
  reportJobProgress('writing', 0, changed)
  const held = sql`CASE r.field WHEN 'price' THEN e.price WHEN 'purchase' THEN e.purchase END = r.new_value::numeric`
  const { rows } = await sql<{ restored: number | string; recorded: number | string }>`
    WITH history AS (
      INSERT INTO glass_price_change_row (change_id, entry_id, field, old_value, new_value)
      SELECT ${revertId}, r.entry_id, r.field, r.new_value, r.old_value
      FROM glass_price_change_row r JOIN glasses_price e ON e.id = r.entry_id
      WHERE r.change_id = ${changeId} AND ${held}
      ORDER BY r.entry_id
      RETURNING 1
    )
    SELECT (SELECT count(*) FROM history) AS restored,
      (SELECT count(*) FROM glass_price_change_row WHERE change_id = ${changeId}) AS recorded`.execute(trx)
  const restored = Number(rows[0]?.restored ?? 0)
  // A bulk change records one row per entry it changed: those it does not restore are its conflicts.
  const conflictCount = Number(rows[0]?.recorded ?? 0) - restored
  let conflicts: RevertConflict[] = []
  if (conflictCount > 0) {
    const left = await sql<{ entry_id: number | string; conflict: RevertConflict['reason'] }>`
      SELECT r.entry_id, CASE WHEN e.id IS NULL THEN 'DELETED' ELSE 'CHANGED' END AS conflict
      FROM glass_price_change_row r LEFT JOIN glasses_price e ON e.id = r.entry_id
      WHERE r.change_id = ${changeId} AND NOT EXISTS (
        SELECT 1 FROM glass_price_change_row h WHERE h.change_id = ${revertId} AND h.entry_id = r.entry_id)
      ORDER BY r.entry_id LIMIT ${CONFLICT_LIST_LIMIT}`.execute(trx)
    conflicts = left.rows.map((row) => ({ entryId: Number(row.entry_id), reason: row.conflict }))
    if (restored === 0) {
      throw conflict('revert-conflicts', message('change.revertConflicts', { id: changeId }), {
        conflictCount,
        conflicts,
      })
    }
  }
  // No write statement when nothing is restored (an empty change): even an empty UPDATE marks the matview stale.
  if (restored === 0) return finishRevert(trx, changeId, revertId, 0, conflicts, conflictCount)
  // The revert's own history rows say what to write: each restored entry's field back to its old value.
  await sql`
    UPDATE glasses_price e SET
      price = CASE r.field WHEN 'price' THEN r.new_value::numeric ELSE e.price END,
      purchase = CASE r.field WHEN 'purchase' THEN r.new_value::numeric ELSE e.purchase END,
      updated_at = now(), updated_by = ${user}, version = e.version + 1
    FROM glass_price_change_row r
    WHERE r.change_id = ${revertId} AND e.id = r.entry_id`.execute(trx)
  return finishRevert(trx, changeId, revertId, restored, conflicts, conflictCount)
}
