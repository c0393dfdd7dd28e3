import { type Expression, type Kysely, type Selectable, type SqlBool, sql } from 'kysely'
import { lockForTransaction } from '../db/advisory-lock.js'
import { bigintId, type GlassesPriceTable, type Tables } from '../db/tables.js'
import { message } from '../domain/messages.js'
import { buildPage, type Page, type PageRequest, resolveTotal } from '../http/page.js'
import { badRequest, entryNotFound, type FieldError, listFieldErrors } from '../http/problem.js'
import {
  CHANGE_FIELDS,
  type ChangeAction,
  type ChangeEntry,
  type ChangeField,
  type EntryHistoryItem,
  type PriceChange,
} from './glass-price-schemas.js'

/*
 * The history of the glass price list (SPEC §6). Every write records, in its own transaction, a change (batch:
 * who, when, what was asked) and one row per entry and field it changed (old → new, as the column's text, so
 * money stays exact). A create has only new values, a delete only old ones.
 *
 * A revert (revert-change.ts) is itself a change, recorded here like any other.
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
