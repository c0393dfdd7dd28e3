import { hash } from 'node:crypto'
import { norm, normaliseKeyText } from '../catalog/kinds/kind-schema.js'
import type { RawClient } from '../db/database.js'
import { compareDecimals, decimalKey } from '../domain/decimal.js'
import { type Message, message } from '../domain/messages.js'
import type { CsvRecord } from './csv-records.js'
import { IMPORT_TABLES, type ImportPlan } from './import-plan.js'
import { MAX_REPORTED_PROBLEMS, type ProblemList } from './import-result.js'
import { columnHeader, headerKey, parseValue, type TransferColumn, type TransferTable } from './transfer-columns.js'

/*
 * The import's `parse` stage, row by row: the header mapped onto the plan's columns, each record checked against
 * their rules, and a row's key as the table's unique index sees it; and the file's repeated keys, found by SQL
 * among the staged rows.
 */

/**
 * Header names → the column each file field feeds (index into `columns`) and each column's name as the file heads
 * it (its language's name when the file lacks it), or null when the header is unusable.
 */
export function mapHeader(
  header: CsvRecord,
  columns: readonly TransferColumn[],
  problems: ProblemList,
): { mapping: (number | null)[]; headers: string[] } | null {
  const byName = new Map(
    columns.flatMap((column, index) => [column.name, ...column.aliases].map((name) => [headerKey(name), index])),
  )
  const seen = new Set<number>()
  const mapping: (number | null)[] = []
  const own = new Map<number, string>()
  const before = problems.count
  for (const raw of header.fields) {
    const name = raw.trim()
    const index = byName.get(headerKey(name))
    if (index === undefined) {
      problems.add({
        line: header.line,
        column: name,
        message: message('import.unknownColumn', {
          columns: columns.map((column) => columnHeader(column, 'en')).join(', '),
          russian: columns.map((column) => columnHeader(column, 'ru')).join(', '),
        }),
      })
      mapping.push(null)
    } else if (seen.has(index)) {
      problems.add({ line: header.line, column: name, message: message('import.columnTwice') })
      mapping.push(null)
    } else {
      seen.add(index)
      mapping.push(index)
      own.set(index, name)
    }
  }
  const russian = [...own].some(([index, name]) => headerKey(name) !== headerKey(columns[index]?.name ?? ''))
  const headers = columns.map((column, index) => own.get(index) ?? columnHeader(column, russian ? 'ru' : 'en'))
  columns.forEach((column, index) => {
    if (column.required && !seen.has(index)) {
      problems.add({ line: header.line, column: headers[index] ?? null, message: message('import.columnMissing') })
    }
  })
  return problems.count > before ? null : { mapping, headers }
}

/** One record → values in `columns` order (NULL for absent columns), or null after reporting its problems. */
export function checkRecord(
  record: CsvRecord,
  mapping: readonly (number | null)[],
  columns: readonly TransferColumn[],
  headers: readonly string[],
  reading: { readonly decimalComma: boolean; readonly formulaMarks: boolean; readonly trailingFrom: number },
  problems: ProblemList,
): (string | null)[] | null {
  // A row added by hand to an export may stop before the trailing version columns: they are empty then.
  const shortOfTrailing =
    record.fields.length < mapping.length &&
    mapping.slice(record.fields.length).every((index) => index !== null && index >= reading.trailingFrom)
  if (record.fields.length !== mapping.length && !shortOfTrailing) {
    problems.add({
      line: record.line,
      column: null,
      message: message('import.fieldCount', { count: record.fields.length, header: mapping.length }),
    })
    return null
  }
  const values: (string | null)[] = columns.map(() => null)
  let valid = true
  record.fields.forEach((raw, position) => {
    const index = mapping[position] as number
    const column = columns[index] as TransferColumn
    const parsed = parseValue(column, raw, reading.decimalComma, reading.formulaMarks)
    if ('error' in parsed) {
      problems.add({ line: record.line, column: headers[index] ?? column.name, message: parsed.error })
      valid = false
    } else {
      values[index] = parsed.value
    }
  })
  for (const [index, column] of columns.entries()) {
    if (column.range?.bound !== 'from') continue
    const toIndex = columns.findIndex(
      (other) => other.range?.name === column.range?.name && other.range?.bound === 'to',
    )
    const from = values[index]
    const to = values[toIndex]
    if (from != null && to != null && compareDecimals(from, to) > 0) {
      problems.add({
        line: record.line,
        column: headers[index] ?? column.name,
        message: message('import.exceeds', { other: headers[toIndex] ?? '', from, to }),
      })
      valid = false
    }
  }
  return valid ? values : null
}

export function duplicateMessage(table: TransferTable, firstLine: number): Message {
  return message(table === 'goods' ? 'import.duplicateBarcode' : 'import.duplicateKeys', { line: firstLine })
}

/**
 * The staged rows (`import_staging`, with their lines) whose key repeats an earlier row's, as the table's unique
 * key compares them (normalised text, NULLs equal): each reported at its line, naming the first line of its key.
 * SQL sorts and groups on disk when it must, so the process holds no key of the file.
 */
export async function reportDuplicates(client: RawClient, plan: ImportPlan, problems: ProblemList): Promise<void> {
  const { table, columns } = plan
  const { staging } = IMPORT_TABLES
  // A barcode compares as written; a price list's key texts as normalised (matchConditions says the same).
  const keys = columns
    .filter((column) => plan.isKey(column))
    .map((column) => (table !== 'goods' && column.type === 'text' ? norm(column.column) : column.column))
  if (keys.length === 0) return
  const found = await client.query<{ line: number; first: number; total: number | string }>(
    `SELECT line, first, count(*) OVER () AS total
     FROM (SELECT ${staging.line} AS line, min(${staging.line}) OVER (PARTITION BY ${keys.join(', ')}) AS first
       FROM ${staging.name}) keyed
     WHERE line <> first ORDER BY line LIMIT ${MAX_REPORTED_PROBLEMS}`,
  )
  if (found.length === 0) return
  problems.merge(
    found.map((row) => ({ line: Number(row.line), column: null, message: duplicateMessage(table, Number(row.first)) })),
    Number(found[0]?.total ?? 0),
  )
}

/** The row's unique key as the table's unique index sees it, hashed so a million keys stay small. */
export function rowKey(plan: ImportPlan, values: (string | null)[]): string {
  const { kind, table, columns } = plan
  if (table === 'goods') return values[columns.findIndex((column) => column.name === 'barcode')] ?? ''
  let key = ''
  columns.forEach((column, index) => {
    if (!plan.isKey(column)) return
    const value = values[index] ?? null
    key += value === null ? '\u0000' : column.type === 'text' ? normaliseKeyText(value) : decimalKey(value)
    key += '\u0001'
  })
  return `${kind.path}:${hash('sha1', key, 'base64')}`
}
