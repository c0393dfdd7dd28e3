import { once } from 'node:events'
import type { Writable } from 'node:stream'
import type { Kysely } from 'kysely'
import Papa from 'papaparse'
import type { Kind } from '../catalog/kinds/kind.js'
import { kindQueries } from '../catalog/kinds/kind-tables.js'
import type { Tables } from '../db/tables.js'
import { neutraliseFormula } from '../domain/formula-cells.js'
import {
  columnHeader,
  type HeaderLanguage,
  type TransferColumn,
  type TransferTable,
  transferColumns,
} from './transfer-columns.js'
import { writeXlsxSheet, type XlsxCell } from './xlsx.js'

/*
 * Export: rows arrive in batches (keyset pages, never one big result) and leave as CSV or XLSX through a stream,
 * so memory stays constant whatever the size. The columns and their header are the import's, so an exported
 * file imports back unchanged.
 */

/** A row by SQL column, as the database returns it (numeric as exact text). */
export type ExportRow = Readonly<Record<string, unknown>>

export interface HeaderOptions {
  /** The header's language: the API names (the default), or the Russian names the import reads too. */
  readonly headers?: HeaderLanguage
}

export interface CsvExportOptions extends HeaderOptions {
  /**
   * For Excel with Russian regional settings: `;` as separator, a decimal comma and a UTF-8 BOM, so the file
   * opens with its columns, numbers and Cyrillic intact. The importer reads it back as it is.
   */
  readonly excel?: boolean
}

const isNumeric = (column: TransferColumn) => column.type !== 'text' && column.type !== 'timestamp'

/**
 * Writes batches of rows as CSV with a header of API names (or Russian ones); resolves when everything is flushed into `out`. A text
 * cell a spreadsheet would run as a formula is written with a `'` in front (domain/formula-cells.ts); the import takes it
 * off again.
 */
export async function writeCsv(
  batches: AsyncIterable<readonly ExportRow[]>,
  columns: readonly TransferColumn[],
  out: Writable,
  options: CsvExportOptions = {},
): Promise<number> {
  const excel = options.excel ?? false
  const delimiter = excel ? ';' : ','
  const finished = new Promise<void>((resolve, reject) => {
    out.on('error', reject)
    out.on('finish', resolve)
  })
  // Awaited at the end; an error before then is also the one the writes below meet.
  finished.catch(() => {})
  // A batch leaves as one piece of text, each line ended by \n; a field holding the delimiter, a quote, a line
  // break or an edge space is quoted (papaparse, the import's reader too).
  const write = async (text: string) => {
    if (!out.write(text)) await once(out, 'drain')
  }
  const lines = (records: string[][]) => `${Papa.unparse(records, { delimiter, newline: '\n' })}\n`
  await write((excel ? '\ufeff' : '') + lines([columns.map((column) => columnHeader(column, options.headers ?? 'en'))]))
  let count = 0
  for await (const batch of batches) {
    if (batch.length === 0) continue
    await write(
      lines(
        batch.map((row) =>
          columns.map((column) => {
            const value = row[column.column]
            if (value === null || value === undefined) return ''
            const text = String(value)
            if (!isNumeric(column)) return neutraliseFormula(text)
            return excel ? text.replace('.', ',') : text
          }),
        ),
      ),
    )
    count += batch.length
  }
  out.end()
  await finished
  return count
}

export interface XlsxExportOptions extends HeaderOptions {
  readonly sheetName?: string
}

/**
 * Writes batches of rows as an XLSX workbook, streamed (xlsx.ts): memory holds one batch whatever the size.
 * Numbers become number cells (money with two decimals), text stays text, so no cell is ever a formula.
 */
export async function writeXlsx(
  batches: AsyncIterable<readonly ExportRow[]>,
  columns: readonly TransferColumn[],
  out: Writable,
  options: XlsxExportOptions = {},
): Promise<number> {
  const rows = (async function* () {
    for await (const batch of batches) {
      yield batch.map((row) =>
        columns.map((column): XlsxCell => {
          const value = row[column.column]
          if (value === null || value === undefined) return null
          return isNumeric(column) ? { number: String(value) } : { text: String(value) }
        }),
      )
    }
  })()
  return writeXlsxSheet(
    rows,
    columns.map((column) => ({
      header: columnHeader(column, options.headers ?? 'en'),
      kind: column.type === 'money' ? 'money' : isNumeric(column) ? 'number' : 'text',
      width: column.type === 'text' ? 24 : column.type === 'timestamp' ? 28 : 12,
    })),
    out,
    { sheetName: options.sheetName ?? 'data' },
  )
}

/**
 * Reads a whole table in keyset pages ordered by id (`WHERE id > last ORDER BY id LIMIT n`), so each page is
 * one cheap index range scan and memory holds one page at a time.
 */
export async function* pagesById(
  db: Kysely<Tables>,
  tableName: string,
  columnNames: readonly string[],
  pageSize = 5000,
): AsyncGenerator<ExportRow[]> {
  let last = 0
  for (;;) {
    const page = (await kindQueries(db)
      .selectFrom(tableName)
      .select(['id', ...columnNames])
      .where('id', '>', last)
      .orderBy('id')
      .limit(pageSize)
      .execute()) as ExportRow[]
    if (page.length === 0) return
    yield page
    last = Number(page[page.length - 1]?.id)
    if (page.length < pageSize) return
  }
}

export type ExportFormat = 'csv' | 'xlsx'

/** Exports a kind's whole price list or nomenclature, ordered by id, to `out`; returns the row count. */
export async function exportTable(
  db: Kysely<Tables>,
  kind: Kind,
  table: TransferTable,
  out: Writable,
  options: HeaderOptions & { format?: ExportFormat; excel?: boolean } = {},
): Promise<number> {
  const columns = transferColumns(kind, table)
  const pages = pagesById(
    db,
    table === 'prices' ? kind.priceTable : kind.skuTable,
    columns.map((column) => column.column),
  )
  return options.format === 'xlsx'
    ? writeXlsx(pages, columns, out, { sheetName: `${kind.path} ${table}`, ...options })
    : writeCsv(pages, columns, out, options)
}
