import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely'
import type { Tables } from '../db/tables.js'
import { inTransaction } from '../db/transaction.js'
import { checkDecimal, compareDecimal, type DecimalValue } from '../domain/decimal.js'
import { MAX_PRICE } from '../domain/limits.js'
import { isMessage, type Message, message } from '../domain/messages.js'
import { roundingRule } from '../domain/roundings.js'
import { badRequest, conflict, type FieldError, invalidField, listFieldErrors, unprocessable } from '../http/problem.js'
import { type GlassPriceFilter, glassPriceFilterConditions, glassPriceWhereSql } from './glass-price-filter.js'
import {
  type BulkChangeBody,
  type BulkChangePreview,
  type PreviewRow,
  type PreviewTotals,
  type PriceType,
  ROUNDING_DIRECTIONS,
  ROUNDINGS,
  type Rounding,
} from './glass-price-schemas.js'
import { finishChange, lockGlassPriceEntries, lockGlassPriceList, openChange } from './price-history.js'
import { reportJobProgress } from './write-jobs.js'

/*
 * The bulk price change (SPEC §5), exactly:
 *
 *   selected = entries matching the listing's filters AND base price within [priceFrom, priceTo] (inclusive)
 *   raw      = base × multiplier + (difference ?? 0),  multiplier = coefficient ?? (1 + percent / 100) ?? 1
 *   new      = f((raw − ending) / step) × step + ending
 *   step, ending = the rounding's (domain/roundings.ts): 1 | 10 | 100, 0 (WHOLE, TENS, HUNDREDS) or 100, 90 | 99 | 0
 *                  (ENDS_90, ENDS_99, ENDS_00)
 *   f        = floor(x + ½) (NEAREST: halves up) | ceil(x) (UP: the next step or ending at or above raw)
 *
 * For the contract's steps and NEAREST this is round_half_up(raw / step) × step, as SPEC §5 writes it. All
 * arithmetic is PostgreSQL `numeric`, in set-based statements. One transaction: the price list's advisory lock serialises bulk
 * changes (the second sees the first's results whole), the price list is locked against writes (reads go on), a
 * single rejected row (new ≤ 0, or above the column's maximum) rejects the call before anything is written, and
 * only rows whose value changes are written, with their history rows in the same statement: one count, then one
 * statement, as the bare UPDATE and its history would be.
 */

/** A validated bulk change: decimals as canonical text, `round` normalised (TO_INT → WHOLE). */
export interface BulkChangeRule {
  readonly priceFrom?: string
  readonly priceTo?: string
  readonly priceTypeBase: PriceType
  readonly priceTypeChange: PriceType
  readonly coefficient?: string
  /** A markup (or, negative, a discount) in percent, instead of the coefficient. */
  readonly percent?: string
  readonly difference?: string
  readonly round: Rounding
  /** Present only when not the default (NEAREST), so the contract's changes record what they always did. */
  readonly direction?: 'UP'
}

/** A validated bulk change request: the rule, and when it takes effect (absent: now). */
export interface BulkChangeRequest {
  readonly rule: BulkChangeRule
  /** In the future, as ISO 8601 UTC text; absent when the change applies now. */
  readonly effectiveAt?: string
}

const roundingAliases: Readonly<Record<string, Rounding>> = { TO_INT: 'WHOLE' }
const allowedRoundings = ROUNDINGS.join(', ')
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i

/** An effective date-time: the instant, or undefined when the text is not ISO 8601 with an offset. */
function parseEffectiveAt(text: string): Date | undefined {
  const trimmed = text.trim()
  if (!ISO_DATE_TIME.test(trimmed)) return undefined
  const at = new Date(trimmed)
  return Number.isNaN(at.getTime()) ? undefined : at
}

/**
 * An effective date-time asked as `field`: ISO text of the instant when it is in the future, undefined when absent,
 * empty or past (applied now); 400 naming the field when it is not ISO 8601 with an offset.
 */
export function futureEffectiveAt(
  field: string,
  text: string | null | undefined,
  now = new Date(),
): string | undefined {
  if (text === null || text === undefined || text.trim() === '') return undefined
  const at = parseEffectiveAt(text)
  if (!at) throw invalidField(field, message('bulk.dateTime'))
  return at.getTime() > now.getTime() ? at.toISOString() : undefined
}

/** Checks a bulk change body beyond its types; every problem is a field error of one 400. */
export function validateBulkChange(body: BulkChangeBody, now = new Date()): BulkChangeRequest {
  const errors: FieldError[] = []
  const decimal = (field: keyof BulkChangeBody, rule: Parameters<typeof checkDecimal>[1]) => {
    const value = body[field] as number | string | null | undefined
    if (value === null || value === undefined) return undefined
    const checked = checkDecimal(value, rule)
    if (isMessage(checked)) {
      errors.push({ field, message: checked })
      return undefined
    }
    return checked
  }
  const priceFrom = decimal('priceFrom', { min: '0' })
  const priceTo = decimal('priceTo', { min: '0' })
  if (priceFrom && priceTo && compareDecimal(priceFrom, priceTo) > 0) {
    errors.push({ field: 'priceFrom', message: message('validation.notGreaterThan', { other: 'priceTo' }) })
  }
  // A multiplier beyond 1000 or finer than a millionth is a typo, not a price policy.
  const coefficient = decimal('coefficient', { above: '0', max: '1000', scale: 6 })
  // The same bounds as a percentage: 1 + percent/100 is in (0, 1000], with at most 6 decimals.
  const percent = decimal('percent', { above: '-100', max: '99900', scale: 4 })
  if (coefficient && percent) {
    errors.push({ field: 'percent', message: message('bulk.percentOrCoefficient') })
  }
  const difference = decimal('difference', { min: `-${MAX_PRICE}`, max: MAX_PRICE, scale: 2 })

  let round: Rounding | undefined
  if (body.round === null || body.round === undefined) {
    errors.push({ field: 'round', message: message('bulk.roundRequired', { allowed: allowedRoundings }) })
  } else {
    round = (ROUNDINGS as readonly string[]).includes(body.round)
      ? (body.round as Rounding)
      : roundingAliases[body.round]
    if (!round) errors.push({ field: 'round', message: message('bulk.roundOneOf', { allowed: allowedRoundings }) })
  }
  const direction = body.direction?.trim().toUpperCase() || 'NEAREST'
  if (!(ROUNDING_DIRECTIONS as readonly string[]).includes(direction)) {
    errors.push({
      field: 'direction',
      message: message('validation.oneOf', { allowed: ROUNDING_DIRECTIONS.join(', ') }),
    })
  }
  let effectiveAt: Date | undefined
  if (body.effectiveAt !== null && body.effectiveAt !== undefined && body.effectiveAt.trim() !== '') {
    effectiveAt = parseEffectiveAt(body.effectiveAt)
    if (!effectiveAt) errors.push({ field: 'effectiveAt', message: message('bulk.dateTime') })
  }

  if (errors.length > 0 || !round) {
    throw badRequest(message('validation.invalidBulkChange', { errors: listFieldErrors(errors) }), errors)
  }
  const text = (value: DecimalValue | undefined) => value?.text
  const rule: BulkChangeRule = {
    ...(priceFrom ? { priceFrom: text(priceFrom) } : {}),
    ...(priceTo ? { priceTo: text(priceTo) } : {}),
    priceTypeBase: body.priceTypeBase,
    priceTypeChange: body.priceTypeChange,
    ...(coefficient ? { coefficient: text(coefficient) } : {}),
    ...(percent ? { percent: text(percent) } : {}),
    ...(difference ? { difference: text(difference) } : {}),
    round,
    ...(direction === 'UP' ? { direction: 'UP' as const } : {}),
  }
  return effectiveAt && effectiveAt.getTime() > now.getTime()
    ? { rule, effectiveAt: effectiveAt.toISOString() }
    : { rule }
}

const priceColumn = { RETAIL: 'price', PURCHASE: 'purchase' } as const
/** The new value of a raw one under the rule's rounding, in numeric (see the formula above). */
function roundedSql(raw: RawBuilder<unknown>, rule: BulkChangeRule): RawBuilder<unknown> {
  // The rounding's step and the ending a rounded value has within it (roubles; a step's values end in 0).
  const { step, ending = 0 } = roundingRule(rule.round)
  const steps = sql`(${raw} - ${ending}::numeric) / ${step}::numeric`
  const whole = rule.direction === 'UP' ? sql`ceil(${steps})` : sql`floor(${steps} + 0.5)`
  // To the column's scale (kopecks), so sums and the preview read as money.
  return sql`round(${whole} * ${step}::numeric + ${ending}::numeric, 2)`
}

/** The multiplier of the base: the coefficient, or 1 + percent / 100 (exact in numeric), or 1. */
function multiplierSql(rule: BulkChangeRule): RawBuilder<unknown> {
  if (rule.coefficient !== undefined) return sql`${rule.coefficient}::numeric`
  if (rule.percent !== undefined) return sql`((100 + ${rule.percent}::numeric) / 100)`
  return sql`1::numeric`
}

interface RuleSql {
  /** Every selection condition on `e`: the listing's filters and the base-price band. */
  readonly where: RawBuilder<SqlBool>
  readonly base: RawBuilder<unknown>
  readonly oldValue: RawBuilder<unknown>
  readonly newValue: RawBuilder<unknown>
  readonly rejected: (value: RawBuilder<unknown>) => RawBuilder<SqlBool>
}

function ruleSql(filter: GlassPriceFilter, rule: BulkChangeRule): RuleSql {
  const base = sql.ref(`e.${priceColumn[rule.priceTypeBase]}`)
  const band: RawBuilder<SqlBool>[] = []
  if (rule.priceFrom !== undefined) band.push(sql<SqlBool>`${base} >= ${rule.priceFrom}::numeric`)
  if (rule.priceTo !== undefined) band.push(sql<SqlBool>`${base} <= ${rule.priceTo}::numeric`)
  const difference = rule.difference ?? '0'
  return {
    where: glassPriceWhereSql([...glassPriceFilterConditions(filter), ...band]),
    base,
    oldValue: sql.ref(`e.${priceColumn[rule.priceTypeChange]}`),
    newValue: roundedSql(sql`(${base} * ${multiplierSql(rule)} + ${difference}::numeric)`, rule),
    rejected: (value) => sql<SqlBool>`(${value} <= 0 OR ${value} > ${MAX_PRICE}::numeric)`,
  }
}

/** `computed(id, manufacturer, brand, model, base, old_value, new_value)` over the selection. */
function computedCte(parts: RuleSql): RawBuilder<unknown> {
  return sql`
    WITH selected AS (
      SELECT e.id, e.manufacturer, e.brand, e.model, e.price, e.purchase
      FROM glasses_price e WHERE ${parts.where}
    ), computed AS (
      SELECT e.id, e.manufacturer, e.brand, e.model, e.price, e.purchase,
             ${parts.base} AS base, ${parts.oldValue} AS old_value, ${parts.newValue} AS new_value
      FROM selected e
    )`
}

interface Counts {
  readonly selectedCount: number
  readonly changedCount: number
  readonly rejectedCount: number
}

async function countSelection(db: Kysely<Tables>, parts: RuleSql): Promise<Counts> {
  const { rows } = await sql<Record<'selected' | 'changed' | 'rejected', number | string>>`
    ${computedCte(parts)}
    SELECT count(*) AS selected,
           count(*) FILTER (WHERE new_value <> old_value) AS changed,
           count(*) FILTER (WHERE ${parts.rejected(sql.ref('new_value'))}) AS rejected
    FROM computed`.execute(db)
  const row = rows[0]
  return {
    selectedCount: Number(row?.selected ?? 0),
    changedCount: Number(row?.changed ?? 0),
    rejectedCount: Number(row?.rejected ?? 0),
  }
}

async function firstRows(
  db: Kysely<Tables>,
  parts: RuleSql,
  which: 'changed' | 'rejected',
  limit: number,
): Promise<PreviewRow[]> {
  const condition = which === 'changed' ? sql`new_value <> old_value` : parts.rejected(sql.ref('new_value'))
  const { rows } = await sql<Record<string, string | number>>`
    ${computedCte(parts)}
    SELECT id, manufacturer, brand, model, base, old_value, new_value FROM computed
    WHERE ${condition} ORDER BY id LIMIT ${limit}`.execute(db)
  return rows.map((row) => ({
    id: Number(row.id),
    manufacturer: String(row.manufacturer),
    brand: String(row.brand),
    model: String(row.model),
    base: Number(row.base),
    oldValue: Number(row.old_value),
    newValue: Number(row.new_value),
  }))
}

/** The selection's sums before and after and its average markup (exact decimals as text). */
async function selectionTotals(db: Kysely<Tables>, parts: RuleSql, rule: BulkChangeRule): Promise<PreviewTotals> {
  const changesRetail = rule.priceTypeChange === 'RETAIL'
  const newPrice = changesRetail ? sql.ref('new_value') : sql.ref('price')
  const newPurchase = changesRetail ? sql.ref('purchase') : sql.ref('new_value')
  const markup = (retail: RawBuilder<unknown>, purchase: RawBuilder<unknown>) =>
    sql`round((${retail} - ${purchase}) * 100 / nullif(${purchase}, 0), 2)::text`
  const { rows } = await sql<Record<string, string | null>>`
    ${computedCte(parts)}, sums AS (
      SELECT coalesce(sum(price), 0) AS retail, coalesce(sum(${newPrice}), 0) AS new_retail,
             coalesce(sum(purchase), 0) AS purchase, coalesce(sum(${newPurchase}), 0) AS new_purchase
      FROM computed
    )
    SELECT retail::text AS retail, new_retail::text AS "newRetail", purchase::text AS purchase,
           new_purchase::text AS "newPurchase",
           ${markup(sql.ref('retail'), sql.ref('purchase'))} AS "oldMarkup",
           ${markup(sql.ref('new_retail'), sql.ref('new_purchase'))} AS "newMarkup"
    FROM sums`.execute(db)
  const row = rows[0] ?? {}
  const money = (value: string | null | undefined) => value ?? '0'
  return {
    retail: { old: money(row.retail), new: money(row.newRetail) },
    purchase: { old: money(row.purchase), new: money(row.newPurchase) },
    averageMarkup: { old: row.oldMarkup ?? null, new: row.newMarkup ?? null },
  }
}

const PREVIEW_ROWS = 100
const REJECTED_ROWS = 20

/** A preview as computed: its reasons' messages are put into words where it is answered, in the request's language. */
export type BulkChangePreviewOf = Omit<BulkChangePreview, 'reasons'> & {
  readonly reasons: { readonly code: BulkChangePreview['reasons'][number]['code']; readonly message: Message }[]
}

/**
 * What the change would do, computed exactly as {@link applyBulkPriceChange} does; writes and locks nothing.
 * `wouldApply` is false, with the reasons, when the real call would be refused or would change nothing.
 */
export async function previewBulkPriceChange(
  db: Kysely<Tables>,
  filter: GlassPriceFilter,
  rule: BulkChangeRule,
): Promise<BulkChangePreviewOf> {
  const parts = ruleSql(filter, rule)
  const counts = await countSelection(db, parts)
  const field = priceColumn[rule.priceTypeChange]
  const reasons: BulkChangePreviewOf['reasons'] = []
  if (counts.rejectedCount > 0) {
    reasons.push({
      code: 'bulk-change-rejected',
      message: message('bulk.wouldBeRefused', { count: counts.rejectedCount, field, max: MAX_PRICE }),
    })
  }
  if (counts.selectedCount === 0) {
    reasons.push({ code: 'nothing-selected', message: message('bulk.nothingSelected') })
  } else if (counts.changedCount === 0) {
    reasons.push({
      code: 'nothing-changes',
      message: message('bulk.nothingChanges', { field }),
    })
  }
  return {
    wouldApply: reasons.length === 0,
    reasons,
    selectedCount: counts.selectedCount,
    changedCount: counts.changedCount,
    unchangedCount: counts.selectedCount - counts.changedCount,
    rejectedCount: counts.rejectedCount,
    changes: counts.changedCount > 0 ? await firstRows(db, parts, 'changed', PREVIEW_ROWS) : [],
    rejected: counts.rejectedCount > 0 ? await firstRows(db, parts, 'rejected', REJECTED_ROWS) : [],
    totals: await selectionTotals(db, parts, rule),
  }
}

export interface BulkChangeResult {
  /** The change (batch) recorded in the history. */
  readonly batch: number
  readonly selectedCount: number
  readonly changedCount: number
}

/**
 * Applies a bulk price change, all or nothing, and records it as one change (batch) with a row per changed
 * entry. 422 naming the first entries when any selected entry would get a value ≤ 0 (or above the maximum):
 * then nothing is written. An empty selection is a recorded no-op. Opens its own transaction unless `db` is one.
 */
export async function applyBulkPriceChange(
  db: Kysely<Tables>,
  filter: GlassPriceFilter,
  rule: BulkChangeRule,
  user: string,
): Promise<BulkChangeResult> {
  const parts = ruleSql(filter, rule)
  const field = priceColumn[rule.priceTypeChange]
  return inTransaction(db, async (trx) => {
    reportJobProgress('selecting', 0)
    await lockGlassPriceList(trx)
    await lockGlassPriceEntries(trx)
    const counts = await countSelection(trx, parts)
    reportJobProgress('selecting', counts.selectedCount, counts.selectedCount)
    if (counts.rejectedCount > 0) {
      const entries = await firstRows(trx, parts, 'rejected', REJECTED_ROWS)
      const named = entries
        .map((row) => `${row.id} ${row.manufacturer} / ${row.brand} / ${row.model} (${row.base} → ${row.newValue})`)
        .join('; ')

      throw unprocessable(
        'bulk-change-rejected',
        counts.rejectedCount > entries.length
          ? message('bulk.rejectedMore', {
              count: counts.rejectedCount,
              field,
              max: MAX_PRICE,
              entries: named,
              more: counts.rejectedCount - entries.length,
            })
          : message('bulk.rejected', { count: counts.rejectedCount, field, max: MAX_PRICE, entries: named }),
        {
          rejectedCount: counts.rejectedCount,
          entries: entries.map(({ oldValue: _old, ...row }) => row),
        },
      )
    }

    const batch = await openChange(trx, {
      action: 'BULK_CHANGE',
      user,
      parameters: { filter, ...rule },
    })
    if (counts.changedCount === 0) {
      // No write statement at all: even an empty UPDATE would mark the matview stale.
      await finishChange(trx, batch, 0)
      return { batch, selectedCount: counts.selectedCount, changedCount: 0 }
    }
    const column = sql.ref(field)
    // One statement writes the prices and their history, so the phase is reported at its start and end. The
    // UPDATE computes each value from its own row (`e`), with no join: a plain scan whose every write is a HOT
    // update (migration 0016); the old values come from the same snapshot, which the table lock keeps true.
    reportJobProgress('writing', 0, counts.changedCount)
    const { rows } = await sql<{ changed: number | string }>`
      WITH old AS MATERIALIZED (
        SELECT e.id, ${parts.oldValue} AS old_value FROM glasses_price e
        WHERE ${parts.where} AND ${parts.newValue} <> ${parts.oldValue}
      ), updated AS (
        UPDATE glasses_price e
        SET ${column} = ${parts.newValue}, updated_at = now(), updated_by = ${user}, version = e.version + 1
        WHERE ${parts.where} AND ${parts.newValue} <> ${parts.oldValue}
        RETURNING e.id, e.${column} AS new_value
      ), recorded AS (
        INSERT INTO glass_price_change_row (change_id, entry_id, field, old_value, new_value)
        SELECT ${batch}, u.id, ${field}, o.old_value::text, u.new_value::text FROM updated u JOIN old o ON o.id = u.id
        RETURNING 1
      )
      SELECT count(*) AS changed FROM recorded`.execute(trx)
    const changed = Number(rows[0]?.changed ?? 0)
    // The table is locked, so nothing can make a difference since the count; should it, start over.
    if (changed !== counts.changedCount) {
      throw conflict('changed-during-bulk-change', message('bulk.changedMeanwhile'))
    }
    reportJobProgress('writing', changed, counts.changedCount)
    await finishChange(trx, batch, changed)
    return { batch, selectedCount: counts.selectedCount, changedCount: changed }
  })
}
