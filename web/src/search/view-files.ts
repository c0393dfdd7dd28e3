import { strToU8, zipSync } from 'fflate'
import Papa from 'papaparse'
import { neutraliseFormula } from '../../../src/domain/formula-cells.js'
import {
  rowXml,
  SHEET_END,
  SHEET_PART,
  sheetStart,
  staticParts,
  type XlsxCell,
  type XlsxColumn,
} from '../../../src/domain/spreadsheet-xml.js'
import type { Column, Item } from '../api.js'
import type { Language } from '../i18n/index.js'
import { PRICE } from './results-table.js'

/*
 * The counter's results as a file, written in the browser: CSV (Papa Parse) or XLSX (the service's own
 * SpreadsheetML, zipped by fflate). Loaded only when a file is asked for, so the page's first bundle carries
 * neither. The columns are those on screen, in their order, headed in the page's language.
 */

/** A decimal as the API wrote it (`1234.5`), never through float arithmetic: exact text. */
const decimalText = (value: string | number): string => String(value)

/**
 * CSV as a spreadsheet of the page's language opens it: in Russian `;` between cells and a decimal comma (as
 * Excel with Russian regional settings reads them), in English `,` and a point; a UTF-8 BOM either way, so
 * Cyrillic survives. A text cell a spreadsheet would run as a formula gets a `'` in front, as the service's
 * exports do.
 */
export function csvFile(columns: readonly Column[], items: readonly Item[], language: Language): Blob {
  const russian = language === 'ru'
  const cell = (column: Column, value: Item[string] | undefined): string => {
    if (value === null || value === undefined) return ''
    if (column.type === 'text') return neutraliseFormula(String(value))
    const text = decimalText(value)
    return russian ? text.replace('.', ',') : text
  }
  const csv = Papa.unparse(
    {
      fields: columns.map((column) => column.label[language]),
      data: items.map((item) => columns.map((column) => cell(column, item[column.name]))),
    },
    { delimiter: russian ? ';' : ',', newline: '\r\n', escapeFormulae: false },
  )
  return new Blob([`\uFEFF${csv}\r\n`], { type: 'text/csv;charset=utf-8' })
}

/** A one-sheet workbook: the header bold and frozen, numbers as number cells (the price as money), text as text. */
export function xlsxFile(
  columns: readonly Column[],
  items: readonly Item[],
  language: Language,
  sheetName: string,
): Blob {
  const sheetColumns: XlsxColumn[] = columns.map((column) => {
    const header = column.label[language]
    const kind = column.name === PRICE ? 'money' : column.type === 'text' ? 'text' : 'number'
    const widest = Math.max(header.length, ...items.slice(0, 200).map((item) => String(item[column.name] ?? '').length))
    return { header, kind, width: Math.min(Math.max(widest + 2, 8), 40) }
  })
  let sheet = sheetStart(sheetColumns)
  items.forEach((item, index) => {
    const cells: XlsxCell[] = columns.map((column) => {
      const value = item[column.name]
      if (value === null || value === undefined || value === '') return null
      return column.type === 'text' ? { text: String(value) } : { number: decimalText(value) }
    })
    sheet += rowXml(cells, index + 2, sheetColumns)
  })
  sheet += SHEET_END
  const parts: Record<string, Uint8Array | [Uint8Array, { level: 0 }]> = {}
  for (const [name, text] of Object.entries(staticParts(sheetName))) parts[name] = [strToU8(text), { level: 0 }]
  parts[SHEET_PART] = strToU8(sheet)
  const zipped = zipSync(parts, { level: 6 })
  return new Blob([zipped as Uint8Array<ArrayBuffer>], {
    type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  })
}
