import { entryFieldColumns, skuFieldColumns } from '../catalog/freshness/catalog-repository.js'
import type { Kind, ValueType } from '../catalog/kinds/kind.js'
import { canonicalDecimal, compareDecimals } from '../domain/decimal.js'
import { restoreFormula } from '../domain/formula-cells.js'
import { canonicalText, keyTextProblem } from '../domain/key-text.js'
import { groupedDecimal, MAX_PRICE, MAX_TEXT_LENGTH } from '../domain/limits.js'
import { type Message, message } from '../domain/messages.js'

/*
 * The columns of a kind's price list and nomenclature as files see them (header = API field names), with the
 * rules every value must meet. Derived from the descriptor, so import, export and their docs agree for all kinds.
 * The rules are the API's (domain/limits.ts): text trimmed, 1–255 characters, no NUL; money 0 … 99 999 999.99
 * with at most two decimals; a measure within its column's numeric(p,s); a range's from ≤ to.
 */

/** Which of a kind's two tables a file holds. */
export type TransferTable = 'prices' | 'goods'

export interface TransferColumn {
  /** The API name: the header of the file. */
  readonly name: string
  /** The SQL column. */
  readonly column: string
  readonly type: ValueType | 'money' | 'timestamp'
  readonly required: boolean
  /** For a bounded `numeric(p,s)`: at most `precision - scale` integer digits and `scale` decimals. */
  readonly precision?: number
  readonly scale?: number
  /** `<name>From`/`<name>To` columns name their range, so from ≤ to can be checked. */
  readonly range?: { readonly name: string; readonly bound: 'from' | 'to' }
  /** Other names a file's header may give the column (Russian spreadsheets' `Бренд`), besides `name`. */
  readonly aliases: readonly string[]
}

/**
 * The names of the columns every kind shares, as Russian spreadsheets head them; the kinds' own columns take
 * theirs from the descriptors (`ru` in kinds.ts), a range's bounds as `<name> от` / `<name> до`.
 */
const SHARED_ALIASES: Readonly<Record<string, readonly string[]>> = {
  price: ['Цена', 'Розничная цена', 'Цена розничная'],
  purchase: ['Закупка', 'Закупочная цена', 'Цена закупки'],
  barcode: ['Штрихкод', 'Штрих-код'],
}

/** The languages of a file's header: the API names (`price`), or the names Russian spreadsheets use (`Цена`). */
export const HEADER_LANGUAGES = ['en', 'ru'] as const
export type HeaderLanguage = (typeof HEADER_LANGUAGES)[number]

/** The header of a column in a language: its API name, or its (first) Russian name. Exports and problems use it. */
export function columnHeader(column: TransferColumn, language: HeaderLanguage): string {
  return language === 'ru' ? (column.aliases[0] ?? column.name) : column.name
}

/** A header as it is matched: case-insensitive, spaces ignored, `ё` = `е` (`Целевая  группа` = `целеваягруппа`). */
export function headerKey(name: string): string {
  return name.toLowerCase().replace(/\s+/g, '').replaceAll('ё', 'е')
}

function numericShape(sqlType: string): { precision?: number; scale?: number } {
  const match = /^numeric\((\d+),\s*(\d+)\)$/.exec(sqlType)
  return match ? { precision: Number(match[1]), scale: Number(match[2]) } : {}
}

/** The file columns of a kind's price list (`prices`) or nomenclature (`goods`), in table order. */
export function transferColumns(kind: Kind, table: TransferTable): TransferColumn[] {
  const attributes = new Map(kind.attributes.map((a) => [a.name, a]))
  const ranges = new Map(kind.ranges.flatMap((r) => [[r.name, r] as const]))
  const fields = table === 'prices' ? entryFieldColumns(kind) : skuFieldColumns(kind)
  return fields.map(([name, column]): TransferColumn => {
    const aliases = SHARED_ALIASES[name] ?? []
    if (name === 'price' || name === 'purchase') {
      return { name, column, type: 'money', required: true, precision: 12, scale: 2, aliases }
    }
    if (name === 'barcode') return { name, column, type: 'text', required: true, aliases }
    const attribute = attributes.get(name)
    if (attribute) {
      return {
        name,
        column,
        type: attribute.type,
        required: attribute.entry === 'key',
        ...numericShape(attribute.sqlType),
        aliases: [attribute.ru],
      }
    }
    const point = ranges.get(name)
    if (point) {
      return {
        name,
        column,
        type: point.type,
        required: point.sku === 'required',
        ...numericShape(point.sqlType),
        aliases: [point.ru],
      }
    }
    const bound = /^(.*)(From|To)$/.exec(name)
    const range = ranges.get(bound?.[1] ?? '')
    if (!bound || !range) throw new Error(`${kind.path}: no rule for the field ${name}`)
    return {
      name,
      column,
      type: range.type,
      required: false,
      ...numericShape(range.sqlType),
      range: { name: range.name, bound: bound[2] === 'From' ? 'from' : 'to' },
      aliases: [`${range.ru} ${bound[2] === 'From' ? 'от' : 'до'}`],
    }
  })
}

/**
 * The columns an export of a price list writes after the data, and an upload reads back: each entry's version
 * (the number its ETag is built from) and the time it was last changed (UTC, ISO 8601). An upsert compares them
 * with the stored entry to find the rows whose entry a colleague changed since the export (conflicts); a file
 * without them (from 1C, or typed by hand) is compared by value only.
 */
export const VERSION_COLUMNS: readonly TransferColumn[] = [
  { name: 'version', column: 'version', type: 'integer', required: false, aliases: ['Версия'] },
  { name: 'changedAt', column: 'updated_at', type: 'timestamp', required: false, aliases: ['Изменено'] },
]

/** How an export writes a change time: UTC to the microsecond, so it reads back as the same instant. */
export const changedAtText = (table: string) =>
  `to_char(${table}.updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`

const timestampSyntax = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)?$/

export type ParsedValue = { readonly value: string | null } | { readonly error: Message }

const decimalSyntax = /^[-+]?(\d+(\.\d*)?|\.\d+)$/
const integerSyntax = /^[-+]?\d+$/
const groupingSpaces = /(?<=\d)[\s\u00a0\u202f](?=\d)/g

/**
 * Checks one value of a file against its column's rule; returns the text to load (a canonical decimal for
 * numbers, NULL for an empty cell) or a reason. `decimalComma` accepts `1 234,50` as spreadsheets in Russian
 * write it (only in files separated by `;`, where the comma cannot be a separator). With `formulaMarks` (CSV) a
 * text cell `'=…` (a formula an export neutralised) loses its first `'`. Every text column is a key or is matched
 * against one, so text is brought to the keys' one form (domain/key-text.ts) first, and a bidi control in it is
 * refused.
 */
export function parseValue(
  column: TransferColumn,
  raw: string,
  decimalComma: boolean,
  formulaMarks = true,
): ParsedValue {
  if (raw.includes('\u0000')) return { error: message('import.nul') }
  if (raw.includes('\ufffd')) return { error: message('import.notUtf8Value') }
  const text = (column.type === 'text' ? canonicalText(raw) : raw).trim()
  if (text === '') return column.required ? { error: message('validation.required') } : { value: null }
  if (column.type === 'text') {
    const problem = keyTextProblem(text)
    if (problem) return { error: problem }
    // An export wrote `'` before a text a spreadsheet would run as a formula: the value is what follows it.
    const value = formulaMarks ? restoreFormula(text) : text
    // Characters, not UTF-16 units, count; a text of at most that many units cannot be too long.
    return value.length > MAX_TEXT_LENGTH && [...value].length > MAX_TEXT_LENGTH
      ? { error: message('import.tooLong', { max: MAX_TEXT_LENGTH }) }
      : { value }
  }
  if (column.type === 'timestamp') {
    // Without a zone a time is UTC, as the export writes it.
    if (!timestampSyntax.test(text) || Number.isNaN(Date.parse(text))) {
      return { error: message('import.notTimestamp', { value: clip(text) }) }
    }
    return { value: /(Z|[+-]\d{2}(:?\d{2})?)$/.test(text) ? text : `${text}Z` }
  }
  const number = decimalComma ? text.replace(groupingSpaces, '').replace(',', '.') : text
  if (column.type === 'integer') {
    if (!integerSyntax.test(number)) return { error: message('import.notWholeNumber', { value: clip(text) }) }
    const value = Number(number)
    if (value < -2147483648 || value > 2147483647) return { error: message('import.outOfRange') }
    return { value: String(value) }
  }
  if (!decimalSyntax.test(number)) {
    const commaInstead = !decimalComma && /^[-+]?\d+,\d+$/.test(number)
    return { error: message(commaInstead ? 'import.notNumberComma' : 'import.notNumber', { value: clip(text) }) }
  }
  const canonical = canonicalDecimal(number)
  const negative = canonical.startsWith('-')
  const point = canonical.indexOf('.')
  const fractionDigits = point === -1 ? 0 : canonical.length - point - 1
  // Significant digits before the point (a canonical decimal has no leading zeros; "0.5" has none).
  const wholeDigits = canonical.startsWith(negative ? '-0' : '0')
    ? 0
    : (point === -1 ? canonical.length : point) - (negative ? 1 : 0)
  if (column.scale !== undefined && fractionDigits > column.scale) {
    return { error: message('import.decimals', { scale: column.scale }) }
  }
  if (column.type === 'money') {
    if (negative) return { error: message('import.notNegative') }
    if (wholeDigits >= 8 && compareDecimals(canonical, MAX_PRICE) > 0) {
      return { error: message('validation.atMost', { max: groupedDecimal(MAX_PRICE) }) }
    }
  } else if (column.precision !== undefined && column.scale !== undefined) {
    if (wholeDigits > column.precision - column.scale) return { error: message('import.outOfRange') }
  }
  return { value: canonical }
}

function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text
}
