import { type Expression, type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import { lockForTransaction } from '../db/advisory-lock.js'
import { bigintId, type GlassesPriceTable, type Tables } from '../db/tables.js'
import { inTransaction } from '../db/transaction.js'
import { message } from '../domain/messages.js'
import { buildPage, type Page, type PageRequest, resolveTotal } from '../http/page.js'
import { badRequest, conflict, entryNotFound, type FieldError, listFieldErrors } from '../http/problem.js'
import {
  CHANGE_FIELDS,
  type ChangeAction,
  type ChangeEntry,
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

/** Which changes the change log lists: every filter optional, all of them together. */
export interface ChangeLogFilter {
  /** A case-insensitive substring of who made it. */
  readonly user?: string
  /** Days of the business time zone (YYYY-MM-DD), inclusive. */
  readonly from?: string
  readonly to?: string
  readonly actions?: readonly ChangeAction[]
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/

/** Whether `text` is a calendar day as YYYY-MM-DD (2026-02-30 is not). */
function isDay(text: string): boolean {
  const match = DAY.exec(text)
  if (!match) return false
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number]
  const date = new Date(Date.UTC(year, month - 1, day))
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/**
 * Reads the change log's query (blank values are no filter); a day that is not one, or `from` after `to`, is a 400
 * naming the field.
 */
export function parseChangeLogFilter(query: {
  readonly user?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly action?: readonly ChangeAction[] | undefined
}): ChangeLogFilter {
  const errors: FieldError[] = []
  const filter: { user?: string; from?: string; to?: string; actions?: readonly ChangeAction[] } = {}
  const user = query.user?.trim()
  if (user) filter.user = user
  for (const name of ['from', 'to'] as const) {
    const value = query[name]?.trim()
    if (!value) continue
    if (isDay(value)) filter[name] = value
    else errors.push({ field: name, message: message('validation.day') })
  }
  if (filter.from && filter.to && filter.from > filter.to) {
    errors.push({ field: 'from', message: message('validation.notGreaterThan', { other: 'to' }) })
  }
  if (query.action && query.action.length > 0) filter.actions = [...new Set(query.action)]
  if (errors.length > 0) {
    throw badRequest(message('validation.invalidFilters', { errors: listFieldErrors(errors) }), errors)
  }
  return filter
}

/**
 * The changes of the glass price list, newest first, as a page; narrowed by `filter`, its days counted in
 * `timezone` (the business time zone).
 */
export async function listChanges(
  db: Kysely<Tables>,
  page: PageRequest,
  filter: ChangeLogFilter = {},
  timezone = 'UTC',
): Promise<Page<PriceChange>> {
  const where = <Q extends { where(condition: Expression<SqlBool>): Q }>(query: Q): Q => {
    let narrowed = query
    if (filter.user !== undefined) {
      narrowed = narrowed.where(sql<SqlBool>`strpos(lower(created_by), lower(${filter.user})) > 0`)
    }
    if (filter.from !== undefined) {
      narrowed = narrowed.where(sql<SqlBool>`created_at >= (${filter.from}::date::timestamp AT TIME ZONE ${timezone})`)
    }
    if (filter.to !== undefined) {
      narrowed = narrowed.where(
        sql<SqlBool>`created_at < ((${filter.to}::date + 1)::timestamp AT TIME ZONE ${timezone})`,
      )
    }
    if (filter.actions !== undefined) {
      narrowed = narrowed.where(sql<SqlBool>`action IN (${sql.join(filter.actions)})`)
    }
    return narrowed
  }
  const rows = await where(db.selectFrom('glass_price_change').selectAll())
    .orderBy('id', 'desc')
    .limit(page.size)
    .offset(page.page * page.size)
    .execute()
  const total = await resolveTotal(page, rows.length, async () => {
    const result = await where(
      db.selectFrom('glass_price_change').select(sql<number | string>`count(*)`.as('count')),
    ).executeTakeFirstOrThrow()
    return Number(result.count)
  })
  return buildPage(rows.map(toPriceChange), page, total)
}

/**
 * The entries a change touched, by id, a page of them: each entry's key (as it is now, or as last recorded once
 * deleted), whether it still exists, and what the change wrote, field by field old → new. 404 when there is no
 * such change. `changeIdText` is decimal text (an id validated as a positive bigint).
 */
export async function changeEntries(
  db: Kysely<Tables>,
  changeIdText: string,
  page: PageRequest,
): Promise<Page<ChangeEntry>> {
  const changeId = bigintId(changeIdText)
  const change = await db.selectFrom('glass_price_change').select('id').where('id', '=', changeId).executeTakeFirst()
  if (!change) throw entryNotFound(message('change.notFound', { id: changeIdText }))
  const entries = await db
    .selectFrom('glass_price_change_row')
    .select('entry_id')
    .distinct()
    .where('change_id', '=', changeId)
    .orderBy('entry_id')
    .limit(page.size)
    .offset(page.page * page.size)
    .execute()
  const ids = entries.map((row) => row.entry_id)
  const rows =
    ids.length === 0
      ? []
      : await db
          .selectFrom('glass_price_change_row')
          .select(['entry_id', 'field', 'old_value', 'new_value'])
          .where('change_id', '=', changeId)
          .where('entry_id', 'in', ids)
          .execute()
  const present =
    ids.length === 0
      ? []
      : await db
          .selectFrom('glasses_price')
          .select(['id', 'manufacturer', 'brand', 'model'])
          .where('id', 'in', ids)
          .execute()
  // The last recorded key of each entry deleted since.
  const gone = ids.filter((id) => !present.some((row) => Number(row.id) === Number(id)))
  const recorded =
    gone.length === 0
      ? []
      : await db
          .selectFrom('glass_price_change_row')
          .distinctOn(['entry_id', 'field'])
          .select(['entry_id', 'field', sql<string>`coalesce(new_value, old_value)`.as('value')])
          .where('entry_id', 'in', gone)
          .where('field', 'in', ['manufacturer', 'brand', 'model'])
          .where(sql<SqlBool>`coalesce(new_value, old_value) IS NOT NULL`)
          .orderBy('entry_id')
          .orderBy('field')
          .orderBy('change_id', 'desc')
          .execute()
  const now = new Map(present.map((row) => [Number(row.id), row]))
  const content = ids.map((rawId): ChangeEntry => {
    const entryId = Number(rawId)
    const current = now.get(entryId)
    const key = (field: 'manufacturer' | 'brand' | 'model') =>
      current?.[field] ?? recorded.find((row) => Number(row.entry_id) === entryId && row.field === field)?.value ?? ''
    return {
      entryId,
      manufacturer: key('manufacturer'),
      brand: key('brand'),
      model: key('model'),
      exists: current !== undefined,
      changes: rows
        .filter((row) => Number(row.entry_id) === entryId)
        .sort((a, b) => fieldOrder(a.field) - fieldOrder(b.field))
        .map((row) => ({
          field: row.field as ChangeField,
          oldValue: displayValue(row.field, row.old_value),
          newValue: displayValue(row.field, row.new_value),
        })),
    }
  })
  const total = await resolveTotal(page, content.length, async () => {
    const result = await db
      .selectFrom('glass_price_change_row')
      .select(sql<number | string>`count(DISTINCT entry_id)`.as('count'))
      .where('change_id', '=', changeId)
      .executeTakeFirstOrThrow()
    return Number(result.count)
  })
  return buildPage(content, page, total)
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
