import { once } from 'node:events'
import type { Writable } from 'node:stream'
import { strFromU8, strToU8, unzipSync, Zip, ZipDeflate, ZipPassThrough } from 'fflate'
import { message } from '../domain/messages.js'
import { startModuleWorker } from '../domain/module-worker.js'
import {
  rowXml,
  SHEET_END,
  SHEET_PART,
  sheetStart,
  staticParts,
  type XlsxCell,
  type XlsxColumn,
} from '../domain/spreadsheet-xml.js'
import type { CsvProblem, CsvReader, CsvRecord, CsvSource } from './csv-records.js'

/*
 * XLSX, both ways, on fflate (zip only, no dependencies) instead of a spreadsheet library: the service writes one
 * plain sheet (its SpreadsheetML in domain/spreadsheet-xml.ts, which the web app writes too) and reads the first
 * sheet of a workbook, which is a few hundred lines of SpreadsheetML.
 *
 * Writing streams: the sheet's XML is deflated as rows come, and the zip's output goes to `out` with its
 * backpressure respected, so memory holds one batch of rows whatever the size. Text cells are inline strings and
 * no cell ever carries a formula, so a model named `=HYPERLINK(…)` stays text (no `'` mark is needed, unlike CSV).
 * Characters XML cannot hold are written as OOXML's `_xHHHH_` escapes, which the reader (and Excel) decode.
 *
 * Reading takes the whole upload (bounded by IMPORT_BODY_LIMIT) into memory: a workbook saved by Excel keeps its
 * shared strings after the sheets, so the sheet cannot be read before the end of the file anyway. Cells are read
 * as text: shared and inline strings, numbers (rounded to the 15 significant digits a spreadsheet shows, so
 * 10 489.499999999998 computed by a formula is 10489.5), booleans, and the cached value of a formula cell.
 */

export type { XlsxCell, XlsxColumn }

/**
 * Writes rows as a one-sheet workbook into `out`, streaming: the header row in bold and frozen, numbers as number
 * cells (money formatted with two decimals; the file holds the exact decimal text), text as inline strings, never
 * a formula. Resolves with the row count once everything is written into `out` (which it ends).
 */
export async function writeXlsxSheet(
  rows: AsyncIterable<readonly (readonly XlsxCell[])[]>,
  columns: readonly XlsxColumn[],
  out: Writable,
  options: { readonly sheetName?: string } = {},
): Promise<number> {
  const pending: Uint8Array[] = []
  let failure: Error | undefined
  let ended = false
  const zip = new Zip((error, chunk, final) => {
    if (error) failure = error
    else pending.push(chunk)
    if (final) ended = true
  })
  const flush = async () => {
    if (failure) throw failure
    while (pending.length > 0) {
      const chunk = pending.shift() as Uint8Array
      if (!out.write(chunk)) await once(out, 'drain')
    }
  }
  const abort = (error: unknown) => {
    out.destroy(error as Error)
  }
  out.once('error', () => {})
  try {
    for (const [name, text] of Object.entries(staticParts(options.sheetName ?? 'data'))) {
      const part = new ZipPassThrough(name)
      zip.add(part)
      part.push(strToU8(text), true)
    }
    const sheet = new ZipDeflate(SHEET_PART, { level: 6 })
    zip.add(sheet)
    sheet.push(strToU8(sheetStart(columns)))
    await flush()
    let count = 0
    for await (const batch of rows) {
      let xml = ''
      for (const row of batch) {
        xml += rowXml(row, count + 2, columns)
        count++
      }
      sheet.push(strToU8(xml))
      await flush()
    }
    sheet.push(strToU8(SHEET_END), true)
    zip.end()
    await flush()
    if (!ended) throw new Error('the XLSX zip did not end')
    out.end()
    await once(out, 'finish')
    return count
  } catch (error) {
    abort(error)
    throw error
  }
}

/** Decodes XML character references and entities, then OOXML's `_xHHHH_` escapes. */
function xmlDecode(text: string): string {
  const decoded = text.includes('&')
    ? text.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, entity: string) => {
        if (entity.startsWith('#x')) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16))
        if (entity.startsWith('#')) return String.fromCodePoint(Number(entity.slice(1)))
        return { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }[entity] as string
      })
    : text
  return decoded.includes('_x')
    ? decoded.replace(/_x([0-9a-fA-F]{4})_/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))
    : decoded
}

/** The text of every `<t>` in an element (a rich text's runs concatenated; phonetic runs left out). */
function textRuns(xml: string): string {
  let text = ''
  const withoutPhonetic = xml.replace(/<rPh\b[\s\S]*?<\/rPh>/g, '')
  for (const match of withoutPhonetic.matchAll(/<t(?:\s[^>]*)?>([\s\S]*?)<\/t>|<t(?:\s[^>]*)?\/>/g)) {
    text += xmlDecode(match[1] ?? '')
  }
  return text
}

const attribute = (tag: string, name: string): string | undefined => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1]

/** `B12` → 1 (the column's index), or undefined. */
function columnIndex(ref: string | undefined): number | undefined {
  const letters = ref ? /^([A-Z]+)\d*$/.exec(ref)?.[1] : undefined
  if (!letters) return undefined
  let index = 0
  for (const letter of letters) index = index * 26 + (letter.charCodeAt(0) - 64)
  return index - 1
}

/** A spreadsheet number as a spreadsheet shows it: 15 significant digits, no exponent for ordinary values. */
function displayNumber(raw: string): string {
  const value = Number(raw)
  if (!Number.isFinite(value)) return raw
  const rounded = Number(value.toPrecision(15))
  if (Math.abs(rounded) >= 1e21 || (rounded !== 0 && Math.abs(rounded) < 1e-6)) return raw
  const text = String(rounded)
  return text.includes('e') ? raw : text
}

const ZIP_MAGIC = [0x50, 0x4b, 0x03, 0x04]

/** Whether bytes begin like a zip archive (an XLSX file). */
export function looksLikeXlsx(head: Uint8Array): boolean {
  return ZIP_MAGIC.every((byte, index) => head[index] === byte)
}

/** The path inside the archive of the workbook's first sheet. */
function firstSheetPath(files: Record<string, Uint8Array>): string | undefined {
  const workbook = files['xl/workbook.xml']
  const rels = files['xl/_rels/workbook.xml.rels']
  if (workbook && rels) {
    const sheet = /<(?:\w+:)?sheet\b[^>]*>/.exec(strFromU8(workbook))?.[0]
    const id = sheet ? /\sr:id="([^"]*)"/.exec(sheet)?.[1] : undefined
    for (const rel of strFromU8(rels).matchAll(/<(?:\w+:)?Relationship\b[^>]*>/g)) {
      if (attribute(rel[0], 'Id') !== id) continue
      const target = attribute(rel[0], 'Target') ?? ''
      return target.startsWith('/') ? target.slice(1) : `xl/${target}`
    }
  }
  return Object.keys(files)
    .filter((name) => /^xl\/worksheets\/[^/]+\.xml$/.test(name))
    .sort()[0]
}

/**
 * Opens an XLSX file as the CSV reader's records (header first), so one import serves both: the first sheet's
 * rows with their row numbers as lines, cells as text, rows without any value skipped. A file that is not a
 * readable workbook is one problem of the whole file. Unzipping and reading the sheet run on a thread of their own
 * (xlsx-worker.ts): for a workbook of a million rows they take seconds, which the service's thread goes on
 * answering requests through; the records cross in batches, as they are asked for.
 */
export async function openXlsx(source: CsvSource): Promise<CsvReader> {
  const parts: Buffer[] = []
  for await (const chunk of source) parts.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk)
  const bytes = Buffer.concat(parts)
  const size = bytes.length
  // A copy of its own, handed over to the thread (not copied again).
  const workbook = new Uint8Array(bytes)
  const worker = startModuleWorker(import.meta.url, 'xlsx-worker', {
    workerData: workbook,
    transferList: [workbook.buffer],
  })
  const problems: CsvProblem[] = []
  let ended = false
  const next = () =>
    new Promise<XlsxBatch>((resolve, reject) => {
      const onMessage = (message: XlsxBatch) => {
        worker.off('error', onError)
        resolve(message)
      }
      const onError = (error: Error) => {
        worker.off('message', onMessage)
        reject(error)
      }
      worker.once('message', onMessage)
      worker.once('error', onError)
      worker.postMessage('next')
    })
  const stop = async () => {
    if (ended) return
    ended = true
    await worker.terminate()
  }
  const batches = (async function* () {
    try {
      for (;;) {
        const batch = await next()
        if (batch.notXlsx) problems.push({ line: 0, message: message('import.fileNotXlsx') })
        if (!batch.records) return
        yield batch.records
      }
    } finally {
      await stop()
    }
  })()
  return {
    delimiter: ';',
    batches,
    takeProblems: () => problems.splice(0),
    bytes: () => size,
    close: stop,
  }
}

/** What the reading thread answers to each `next`: records, or none (the end), and whether the file is no workbook. */
export interface XlsxBatch {
  readonly records?: CsvRecord[]
  readonly notXlsx?: boolean
}

/** Rows a batch of an XLSX file carries. */
export const XLSX_BATCH_ROWS = 5000

/**
 * The first sheet of a workbook as batches of records, read as they are asked for; throws (at the first) when the
 * bytes are not a readable workbook.
 */
export function* xlsxBatches(bytes: Uint8Array): Generator<CsvRecord[]> {
  const wanted =
    /^(xl\/workbook\.xml|xl\/_rels\/workbook\.xml\.rels|xl\/sharedStrings\.xml|xl\/worksheets\/[^/]+\.xml)$/
  const files = unzipSync(bytes, { filter: (file) => wanted.test(file.name) })
  const sheetPath = firstSheetPath(files)
  const sheet = sheetPath ? files[sheetPath] : undefined
  if (!sheet) throw new Error('no worksheet')
  const shared: string[] = []
  const sharedXml = files['xl/sharedStrings.xml']
  if (sharedXml) {
    for (const item of strFromU8(sharedXml).matchAll(/<si>([\s\S]*?)<\/si>|<si\/>/g))
      shared.push(textRuns(item[1] ?? ''))
  }
  let batch: CsvRecord[] = []
  for (const record of sheetRecords(strFromU8(sheet), shared)) {
    batch.push(record)
    if (batch.length === XLSX_BATCH_ROWS) {
      yield batch
      batch = []
    }
  }
  if (batch.length > 0) yield batch
}

/** The rows of a sheet's XML as records: fields by column (gaps empty), lines = row numbers. */
function* sheetRecords(xml: string, shared: readonly string[]): Generator<CsvRecord> {
  let width = 0
  let first = true
  let nextRow = 1
  for (const rowMatch of xml.matchAll(/<row\b([^>]*?)(?:\/>|>([\s\S]*?)<\/row>)/g)) {
    const line = Number(attribute(rowMatch[1] ?? '', 'r') ?? nextRow)
    nextRow = line + 1
    const fields: string[] = []
    let position = 0
    for (const cell of (rowMatch[2] ?? '').matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
      const tag = cell[1] ?? ''
      const body = cell[2] ?? ''
      const index = columnIndex(attribute(tag, 'r')) ?? position
      position = index + 1
      const type = attribute(tag, 't') ?? 'n'
      const v = /<v(?:\s[^>]*)?>([\s\S]*?)<\/v>/.exec(body)?.[1]
      let value: string
      if (type === 'inlineStr') value = textRuns(/<is>([\s\S]*?)<\/is>/.exec(body)?.[1] ?? '')
      else if (v === undefined) value = ''
      else if (type === 's') value = shared[Number(v)] ?? ''
      else if (type === 'n') value = displayNumber(xmlDecode(v).trim())
      else if (type === 'b') value = v.trim() === '1' ? 'TRUE' : 'FALSE'
      else value = xmlDecode(v)
      while (fields.length < index) fields.push('')
      fields[index] = value
    }
    if (first) {
      while (fields.length > 0 && (fields[fields.length - 1] ?? '').trim() === '') fields.pop()
      width = fields.length
    }
    if (fields.every((field) => field.trim() === '')) continue
    // Empty cells past the header's last column are no extra fields.
    while (fields.length > width && (fields[fields.length - 1] ?? '').trim() === '') fields.pop()
    while (fields.length < width) fields.push('')
    first = false
    yield { fields, line }
  }
}
