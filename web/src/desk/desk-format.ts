import { markupPercent } from '../../../src/domain/decimal.js'
import type { ChangeAction, ConflictReason, InputField } from '../api/types.js'
import type { MessageKey } from '../i18n/index.js'

/*
 * How the desk writes the price list's values: money exactly as the API sends it (Intl reads the decimal's text,
 * no float arithmetic), days and moments in the page's language, and the API's codes in words.
 */

export function formatMoney(value: number | string | null | undefined, language: string): string {
  if (value === null || value === undefined || value === '') return '—'
  const format = new Intl.NumberFormat(language, { minimumFractionDigits: 2, maximumFractionDigits: 2 })
  return format.format(String(value) as Intl.StringNumericLiteral)
}

/** A count as the language writes it, its thousands grouped (`375 041`), as a price manager reads a number. */
export function formatCount(value: number, language: string): string {
  return new Intl.NumberFormat(language, { maximumFractionDigits: 0 }).format(value)
}

/**
 * An entry's markup, (price − purchase) / purchase, in percent to one decimal (`141,8 %`), computed exactly from the
 * prices' decimal text; blank where the purchase is 0 or absent.
 */
export function formatMarkup(price: number, purchase: number | null | undefined, language: string): string {
  const markup = purchase === null || purchase === undefined ? undefined : markupPercent(price, purchase)
  if (markup === undefined) return ''
  const format = new Intl.NumberFormat(language, { minimumFractionDigits: 1, maximumFractionDigits: 1 })
  return `${format.format(markup as Intl.StringNumericLiteral)} %`
}

/** A calendar day (`2026-11-27`) as the language writes it; the day is the business time zone's, kept as is. */
export function formatDay(day: string, language: string): string {
  const [year, month, date] = day.split('-').map(Number)
  if (!year || !month || !date) return day
  return new Intl.DateTimeFormat(language, { timeZone: 'UTC' }).format(Date.UTC(year, month - 1, date))
}

export function formatMoment(moment: string, language: string): string {
  const time = Date.parse(moment)
  if (Number.isNaN(time)) return moment
  return new Intl.DateTimeFormat(language, { dateStyle: 'short', timeStyle: 'medium' }).format(time)
}

export const fieldLabel: Record<InputField, MessageKey> = {
  manufacturer: 'deskManufacturer',
  brand: 'deskBrand',
  model: 'deskModel',
  price: 'deskPrice',
  purchase: 'deskPurchase',
}

export const actionLabel: Record<ChangeAction, MessageKey> = {
  CREATE: 'deskActionCreate',
  UPDATE: 'deskActionUpdate',
  DELETE: 'deskActionDelete',
  BULK_CHANGE: 'deskActionBulkChange',
  IMPORT: 'deskActionImport',
  REVERT: 'deskActionRevert',
}

export const conflictLabel: Record<ConflictReason, MessageKey> = {
  CHANGED: 'deskConflictChanged',
  DELETED: 'deskConflictDeleted',
  EXISTS: 'deskConflictExists',
  DUPLICATE: 'deskConflictDuplicate',
}

/** The route that shows one entry of the price list (its row, filtered to its key, and its history). */
export const entryRoute = (id: number): string => `#/prices?entry=${id}`
