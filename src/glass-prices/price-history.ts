import { type Kysely, type Selectable, sql } from 'kysely'
import { lockForTransaction } from '../db/advisory-lock.js'
import { bigintId, type GlassesPriceTable, type Tables } from '../db/tables.js'
import { inTransaction } from '../db/transaction.js'
import { messageText } from '../domain/messages.js'
import { buildPage, type Page, type PageRequest, resolveTotal } from '../http/page.js'
import { conflict, entryNotFound } from '../http/problem.js'
import {
  CHANGE_FIELDS,
  type ChangeAction,
  type ChangeField,
  type EntryHistoryItem,
  type PriceChange,
  type RevertConflict,
  type RevertResult,
} from './glass-price-schemas.js'
import { reportJobProgress } from './write-jobs.js'

/*
 * The history of the glass price list (SPEC §6). Every write records, in its own transaction, a change (batch:
 * who, when, what was asked) and one row per entry and field it changed (old → new, as the column's text, so
 * money stays exact). A create has only new values, a delete only old ones.
 *
 * A revert restores the old values of the entries that still hold the change's new values, reports the others
 * as conflicts, and is itself a change. Restored keys are written in their one form (`optics_key_text`, see
 * domain/key-text.ts), as every other door writes them. It never re-applies arithmetic (an inverse percentage does not give the
 * old prices back); it restores the recorded values.
 */

export type EntryRow = Selectable<GlassesPriceTable>

export interface ChangeRow {
  readonly entryId: number
  readonly field: ChangeField
  readonly oldValue: string | null
  readonly newValue: string | null
}

/**
 * Serialises the changes that span many entries (bulk change, revert) of the glass price list, also across
 * instances. `db` must be a transaction; the lock is held until it ends.
 */
export function lockGlassPriceList(db: Kysely<Tables>): Promise<void> {
  return lockForTransaction(db, 'optics.price-list', 'glasses_price')
}

/**
 * Holds every entry of the glass price list against writes until the transaction ends, for a change that spans many
 * of them (bulk change, revert): one lock for the table instead of one per row, which at a whole list cost a pass
 * that wrote every row (and its WAL) before the change itself. Reads go on; a single entry's write waits, as it
 * waited for its row before. `db` must be a transaction.
 */
export async function lockGlassPriceEntries(db: Kysely<Tables>): Promise<void> {
  await sql`LOCK TABLE glasses_price IN EXCLUSIVE MODE`.execute(db)
}

/** The rows that turn `before` into `after` (either may be absent: a create, a delete). */
export function entryChangeRows(before: EntryRow | undefined, after: EntryRow | undefined): ChangeRow[] {
  const entryId = Number((after ?? before)?.id)
  const rows: ChangeRow[] = []
  for (const field of CHANGE_FIELDS) {
    const oldValue = before ? String(before[field]) : null
    const newValue = after ? String(after[field]) : null
    if (oldValue !== newValue) rows.push({ entryId, field, oldValue, newValue })
  }
  return rows
}

export interface NewChange {
  readonly action: ChangeAction
  readonly user: string
  readonly parameters?: Readonly<Record<string, unknown>>
  readonly reverts?: number
}

/** Starts a change (batch) in the caller's transaction; returns its id. Rows follow, then {@link finishChange}. */
export async function openChange(db: Kysely<Tables>, change: NewChange): Promise<number> {
  const row = await db
    .insertInto('glass_price_change')
    .values({
      action: change.action,
      created_by: change.user,
      parameters: sql<string>`${JSON.stringify(change.parameters ?? {})}::jsonb`,
      reverts: change.reverts ?? null,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return Number(row.id)
}

/** Stores how many entries the change wrote. */
export async function finishChange(db: Kysely<Tables>, changeId: number, changedCount: number): Promise<void> {
  await db.updateTable('glass_price_change').set({ changed_count: changedCount }).where('id', '=', changeId).execute()
}

/** Records a change and its rows in the caller's transaction; returns the change id. */
export async function recordChange(db: Kysely<Tables>, change: NewChange, rows: readonly ChangeRow[]): Promise<number> {
  const changeId = await openChange(db, change)
  if (rows.length > 0) {
    await db
      .insertInto('glass_price_change_row')
      .values(
        rows.map((row) => ({
          change_id: changeId,
          entry_id: row.entryId,
          field: row.field,
          old_value: row.oldValue,
          new_value: row.newValue,
        })),
      )
      .execute()
  }
  await finishChange(db, changeId, new Set(rows.map((row) => row.entryId)).size)
  return changeId
}

const moneyFields = new Set<string>(['price', 'purchase'])

/** A recorded value as JSON shows it: prices as numbers (display only), text as text. */
function displayValue(field: string, value: string | null): string | number | null {
  if (value === null) return null
  return moneyFields.has(field) ? Number(value) : value
}

const fieldOrder = (field: string) => CHANGE_FIELDS.indexOf(field as ChangeField)

/**
 * One entry's history, newest first, a page of changes; undefined when the entry has no history at all.
 * `entryId` is decimal text (an id validated as a positive bigint).
 */
export async function entryHistory(
  db: Kysely<Tables>,
  entryId: string,
  page: PageRequest,
): Promise<Page<EntryHistoryItem>> {
  const id = bigintId(entryId)
  const changes = await db
    .selectFrom('glass_price_change as c')
    .select(['c.id', 'c.action', 'c.created_at', 'c.created_by'])
    .where('c.id', 'in', (qb) =>
      qb.selectFrom('glass_price_change_row as r').select('r.change_id').where('r.entry_id', '=', id),
    )
    .orderBy('c.id', 'desc')
    .limit(page.size)
    .offset(page.page * page.size)
    .execute()
  const ids = changes.map((change) => Number(change.id))
  const rows =
    ids.length === 0
      ? []
      : await db
          .selectFrom('glass_price_change_row')
          .select(['change_id', 'field', 'old_value', 'new_value'])
          .where('entry_id', '=', id)
          .where('change_id', 'in', ids)
          .execute()
  const content = changes.map(
    (change): EntryHistoryItem => ({
      batch: Number(change.id),
      action: change.action as ChangeAction,
      changedAt: change.created_at.toISOString(),
      user: change.created_by,
      changes: rows
        .filter((row) => Number(row.change_id) === Number(change.id))
        .sort((a, b) => fieldOrder(a.field) - fieldOrder(b.field))
        .map((row) => ({
          field: row.field,
          oldValue: displayValue(row.field, row.old_value),
          newValue: displayValue(row.field, row.new_value),
        })),
    }),
  )
  const total = await resolveTotal(page, content.length, async () => {
    const result = await db
      .selectFrom('glass_price_change_row')
      .select(sql<number | string>`count(DISTINCT change_id)`.as('count'))
      .where('entry_id', '=', id)
      .executeTakeFirstOrThrow()
    return Number(result.count)
  })
  return buildPage(content, page, total)
}

/** Whether any change ever touched the entry (its history exists even after a delete). */
export async function hasHistory(db: Kysely<Tables>, entryId: string): Promise<boolean> {
  const row = await db
    .selectFrom('glass_price_change_row')
    .select('change_id')
    .where('entry_id', '=', bigintId(entryId))
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

function toPriceChange(row: Selectable<Tables['glass_price_change']>): PriceChange {
  return {
    id: Number(row.id),
    action: row.action as ChangeAction,
    createdAt: row.created_at.toISOString(),
    user: row.created_by,
    changedCount: Number(row.changed_count),
    parameters: row.parameters ?? {},
    reverts: row.reverts === null ? null : Number(row.reverts),
    revertedBy: row.reverted_by === null ? null : Number(row.reverted_by),
  }
}

/** The changes of the glass price list, newest first, as a page. */
export async function listChanges(db: Kysely<Tables>, page: PageRequest): Promise<Page<PriceChange>> {
  const rows = await db
    .selectFrom('glass_price_change')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(page.size)
    .offset(page.page * page.size)
    .execute()
  const total = await resolveTotal(page, rows.length, async () => {
    const result = await db
      .selectFrom('glass_price_change')
      .select(sql<number | string>`count(*)`.as('count'))
      .executeTakeFirstOrThrow()
    return Number(result.count)
  })
  return buildPage(rows.map(toPriceChange), page, total)
}

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
    if (!original) throw entryNotFound(messageText('change.notFound', { id: changeIdText }))
    if (original.reverted_by !== null) {
      throw conflict(
        'already-reverted',
        messageText('change.alreadyReverted', { id: changeId, revertedBy: String(original.reverted_by) }),
        {
          revertedBy: Number(original.reverted_by),
        },
      )
    }

    // The price list is locked against writes first: the statements below then never wait while holding other
    // locks, and what the plan reads stays true until they write.
    await lockGlassPriceEntries(trx)

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
      throw conflict('revert-conflicts', messageText('change.revertConflicts', { id: changeId }), {
        conflictCount: conflicting,
        conflicts,
      })
    }

    const revertId = await openChange(trx, {
      action: 'REVERT',
      user,
      parameters: { batch: changeId },
      reverts: changeId,
    })
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

    await finishChange(trx, revertId, restorable)
    await trx.updateTable('glass_price_change').set({ reverted_by: revertId }).where('id', '=', changeId).execute()
    reportJobProgress('writing', restorable, restorable)
    return { batch: revertId, reverted: changeId, restoredCount: restorable, conflictCount: conflicting, conflicts }
  })
}
