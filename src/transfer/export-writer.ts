import { once } from 'node:events'
import type { Writable } from 'node:stream'
import { stringify } from 'csv-stringify'
import ExcelJS from 'exceljs'
import type { Kysely } from 'kysely'
import type { Kind } from '../catalog/kind.js'
import { neutraliseFormula } from './formula-cells.js'
import { type TransferColumn, type TransferTable, transferColumns } from './transfer-columns.js'

/*
 * Export: rows arrive in batches (keyset pages, never one big result) and leave as CSV or XLSX through a stream,
 * so memory stays constant whatever the size. The columns and their header are the import's, so an exported
 * file imports back unchanged.
 */

/** A row by SQL column, as the database returns it (numeric as exact text). */
export type ExportRow = Readonly<Record<string, unknown>>

export interface CsvExportOptions {
  /**
   * For Excel with Russian regional settings: `;` as separator, a decimal comma and a UTF-8 BOM, so the file
   * opens with its columns, numbers and Cyrillic intact. The importer reads it back as it is.
   */
  readonly excel?: boolean
}

const isNumeric = (column: TransferColumn) => column.type !== 'text'

/**
 * Writes batches of rows as CSV with a header of API names; resolves when everything is flushed into `out`. A text
 * cell a spreadsheet would run as a formula is written with a `'` in front (formula-cells.ts); the import takes it
 * off again.
 */
export async function writeCsv(
  batches: AsyncIterable<readonly ExportRow[]>,
  columns: readonly TransferColumn[],
  out: Writable,
  options: CsvExportOptions = {},
): Promise<number> {
  const excel = options.excel ?? false
  const csv = stringify({ delimiter: excel ? ';' : ',', bom: excel, eof: true })
  const finished = new Promise<void>((resolve, reject) => {
    csv.on('error', reject)
    out.on('error', reject)
    out.on('finish', resolve)
  })
  csv.pipe(out)
  const write = async (record: unknown[]) => {
    if (!csv.write(record)) await once(csv, 'drain')
  }
  await write(columns.map((column) => column.name))
  let count = 0
  for await (const batch of batches) {
    for (const row of batch) {
      await write(
        columns.map((column) => {
          const value = row[column.column]
          if (value === null || value === undefined) return ''
          const text = String(value)
          if (!isNumeric(column)) return neutraliseFormula(text)
          return excel ? text.replace('.', ',') : text
        }),
      )
      count++
    }
  }
  csv.end()
  await finished
  return count
}

export interface XlsxExportOptions {
  readonly sheetName?: string
}

/**
 * Writes batches of rows as an XLSX workbook (exceljs streaming writer: rows are committed as they come).
 * Numbers become number cells (money with two decimals), text stays text, so no cell is ever a formula.
 */
export async function writeXlsx(
  batches: AsyncIterable<readonly ExportRow[]>,
  columns: readonly TransferColumn[],
  out: Writable,
  options: XlsxExportOptions = {},
): Promise<number> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: out, useStyles: true, useSharedStrings: false })
  const sheet = workbook.addWorksheet(options.sheetName ?? 'data', { views: [{ state: 'frozen', ySplit: 1 }] })
  sheet.columns = columns.map((column) => ({
    header: column.name,
    key: column.column,
    width: column.type === 'text' ? 24 : 12,
    ...(column.type === 'money' ? { style: { numFmt: '#,##0.00' } } : {}),
  }))
  sheet.getRow(1).font = { bold: true }
  let count = 0
  for await (const batch of batches) {
    for (const row of batch) {
      const values: Record<string, string | number | null> = {}
      for (const column of columns) {
        const value = row[column.column]
        // Display only: a spreadsheet number cell is a double; the file's text is exact to the cent anyway.
        values[column.column] =
          value === null || value === undefined ? null : isNumeric(column) ? Number(value) : String(value)
      }
      sheet.addRow(values).commit()
      count++
    }
  }
  sheet.commit()
  await workbook.commit()
  return count
}

/**
 * Reads a whole table in keyset pages ordered by id (`WHERE id > last ORDER BY id LIMIT n`), so each page is
 * one cheap index range scan and memory holds one page at a time.
 */
export async function* pagesById(
  db: Kysely<any>,
  tableName: string,
  columnNames: readonly string[],
  pageSize = 5000,
): AsyncGenerator<ExportRow[]> {
  let last = 0
  for (;;) {
    const page = (await db
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
  db: Kysely<any>,
  kind: Kind,
  table: TransferTable,
  out: Writable,
  options: { format?: ExportFormat; excel?: boolean } = {},
): Promise<number> {
  const columns = transferColumns(kind, table)
  const pages = pagesById(
    db,
    table === 'prices' ? kind.priceTable : kind.skuTable,
    columns.map((column) => column.column),
  )
  return options.format === 'xlsx'
    ? writeXlsx(pages, columns, out, { sheetName: `${kind.path} ${table}` })
    : writeCsv(pages, columns, out, { excel: options.excel ?? false })
}
