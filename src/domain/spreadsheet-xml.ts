/*
 * The SpreadsheetML of a one-sheet workbook, as text, for whoever zips it: the service's streaming export
 * (transfer/xlsx.ts) and the web app's download of the counter's results. No I/O and no zip here, so both the
 * service and the page (which imports only domain/) write the same files.
 *
 * Text cells are inline strings and no cell ever carries a formula, so a model named `=HYPERLINK(…)` stays text.
 * Characters XML cannot hold are written as OOXML's `_xHHHH_` escapes, which readers (and Excel) decode.
 */

export interface XlsxColumn {
  readonly header: string
  readonly kind: 'text' | 'number' | 'money'
  /** Display width in characters. */
  readonly width: number
}

/** A cell: text, or a number as exact decimal text, or empty. */
export type XlsxCell = { readonly text: string } | { readonly number: string } | null

export const XML_HEADER = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
const MAIN_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main'
const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'

/** The part holding the sheet's rows; every other part is in {@link staticParts}. */
export const SHEET_PART = 'xl/worksheets/sheet1.xml'

// biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML 1.0 cannot hold are the point
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g
const ESCAPE_LIKE = /_x[0-9a-fA-F]{4}_/g

/** Text as the content of an XML element: markup escaped, unrepresentable characters as `_xHHHH_`. */
export function xmlText(text: string): string {
  return text
    .replace(ESCAPE_LIKE, (match) => `_x005F${match}`)
    .replace(NOT_XML, (char) => `_x${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
}

const xmlAttribute = (text: string) => xmlText(text).replace(/"/g, '&quot;')

/** `0` → `A`, `25` → `Z`, `26` → `AA`. */
export function columnLetters(index: number): string {
  let letters = ''
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) {
    letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters
  }
  return letters
}

/** Every part of the workbook but the sheet's, by path in the zip. */
export function staticParts(sheetName: string): Record<string, string> {
  return {
    '[Content_Types].xml': `${XML_HEADER}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`,
    '_rels/.rels': `${XML_HEADER}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL_NS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    'xl/workbook.xml': `${XML_HEADER}<workbook xmlns="${MAIN_NS}" xmlns:r="${REL_NS}"><sheets><sheet name="${xmlAttribute(sheetName.slice(0, 31).replace(/[\\/?*[\]:]/g, ' '))}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    'xl/_rels/workbook.xml.rels': `${XML_HEADER}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL_NS}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${REL_NS}/styles" Target="styles.xml"/></Relationships>`,
    // Styles: 0 default, 1 bold (the header), 2 money with two decimals and grouping.
    'xl/styles.xml': `${XML_HEADER}<styleSheet xmlns="${MAIN_NS}"><numFmts count="1"><numFmt numFmtId="164" formatCode="#,##0.00"/></numFmts><fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="3"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs></styleSheet>`,
  }
}

/** The sheet's XML up to and including its header row (bold, frozen), the columns' widths set. */
export function sheetStart(columns: readonly XlsxColumn[]): string {
  const cols = columns
    .map((column, index) => `<col min="${index + 1}" max="${index + 1}" width="${column.width}" customWidth="1"/>`)
    .join('')
  const header = columns
    .map(
      (column, index) =>
        `<c r="${columnLetters(index)}1" s="1" t="inlineStr"><is><t xml:space="preserve">${xmlText(column.header)}</t></is></c>`,
    )
    .join('')
  return `${XML_HEADER}<worksheet xmlns="${MAIN_NS}" xmlns:r="${REL_NS}"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><cols>${cols}</cols><sheetData><row r="1">${header}</row>`
}

/**
 * One row's XML, `r` its number (the header is row 1): numbers as number cells (money formatted with two
 * decimals; the file holds the exact decimal text), text as inline strings, empty cells left out.
 */
export function rowXml(row: readonly XlsxCell[], r: number, columns: readonly XlsxColumn[]): string {
  let xml = `<row r="${r}">`
  row.forEach((cell, index) => {
    if (cell === null) return
    const ref = `${columnLetters(index)}${r}`
    if ('number' in cell) {
      xml += `<c r="${ref}"${columns[index]?.kind === 'money' ? ' s="2"' : ''}><v>${cell.number}</v></c>`
    } else {
      xml += `<c r="${ref}" t="inlineStr"><is><t xml:space="preserve">${xmlText(cell.text)}</t></is></c>`
    }
  })
  return `${xml}</row>`
}

/** The end of the sheet's XML. */
export const SHEET_END = '</sheetData></worksheet>'
