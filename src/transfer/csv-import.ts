import { createHash } from 'node:crypto'
import { Readable } from 'node:stream'
import { parse } from 'csv-parse'
import { refreshMatview } from '../catalog/catalog-repository.js'
import { normaliseKeyText } from '../catalog/demo-generator.js'
import type { Kind } from '../catalog/kind.js'
import { norm } from '../catalog/kind-schema.js'
import type { Database, RawClient } from '../db/database.js'
import { copyCsvChunks } from './csv-text.js'
import {
  compareDecimals,
  decimalKey,
  parseValue,
  type TransferColumn,
  type TransferTable,
  transferColumns,
} from './transfer-columns.js'

/*
 * CSV import of a kind's price list or nomenclature: one function behind the CLI and HTTP.
 *
 * The file streams through csv-parse; every row is checked against the kind's column rules and against the rows
 * before it (duplicate keys). Valid rows stream on into COPY inside one transaction, so a valid file is read
 * once; at the first problem the COPY is starved, the rest of the file is still checked so every problem is
 * reported, and the transaction rolls back: nothing is written. Appending to a table that holds rows goes
 * through a temporary staging table, so conflicts with existing rows are found by SQL with their line numbers.
 */

export interface ImportProblem {
  /** 1-based line of the file (the header is line 1); 0 for a problem of the whole file. */
  readonly line: number
  /** The column (API name) at fault, or null for the whole row. */
  readonly column: string | null
  readonly message: string
}

export interface ImportResult {
  readonly kind: string
  readonly table: TransferTable
  /** Data rows read from the file. */
  readonly rows: number
  /** Rows loaded (0 when there were problems or on a dry run). */
  readonly written: number
  /** Rows deleted first by `replace` (0 on a dry run). */
  readonly deleted: number
  readonly dryRun: boolean
  readonly delimiter: ',' | ';'
  /** The first {@link MAX_REPORTED_PROBLEMS} problems, in file order. */
  readonly problems: readonly ImportProblem[]
  /** All problems, including those not listed. */
  readonly problemCount: number
}

export interface ImportProgress {
  readonly rows: number
  /** Bytes of the file read so far. */
  readonly bytes: number
}

/** What the `inTransaction` hook gets: the open transaction, after the rows are written and before commit. */
export interface ImportTransaction {
  readonly client: RawClient
  readonly kind: Kind
  /** The table written (`glasses_price`, …). */
  readonly tableName: string
  /** Ids above this are the imported rows (the table is locked against other writers meanwhile). */
  readonly lastIdBefore: number
  readonly written: number
  readonly deleted: number
}

export interface ImportOptions {
  /** Delete the kind's rows of that table first (in the same transaction). */
  readonly replace?: boolean
  /** Check everything, write nothing. */
  readonly dryRun?: boolean
  readonly onProgress?: (progress: ImportProgress) => void
  /** How the kind's matview is refreshed after a successful import (default `concurrently`; `none` leaves it). */
  readonly refresh?: 'concurrently' | 'blocking' | 'none'
  /** Extra work in the import's transaction (a history batch, say); a throw rolls the import back. */
  readonly inTransaction?: (transaction: ImportTransaction) => Promise<void>
}

export const MAX_REPORTED_PROBLEMS = 100

/** Import input: a stream or any async iterable of text or bytes (an HTTP body, a file). */
export type ImportSource = Readable | AsyncIterable<Buffer | string> | Iterable<Buffer | string>

class Rollback extends Error {}

interface ParsedRecord {
  readonly fields: string[]
  readonly line: number
  readonly bytes: number
}

/**
 * Imports a CSV file into a kind's price list (`prices`) or nomenclature (`goods`). Returns the counts and every
 * problem found (line, column, reason); when there is any problem nothing is written. On success the rows are
 * committed in one transaction and then the kind's matview is refreshed (see `refresh`).
 *
 * WARNING: on the embedded database the import holds the only connection for as long as the file takes to read;
 * every other query waits meanwhile.
 */
export async function importCsv(
  db: Database,
  kind: Kind,
  table: TransferTable,
  source: ImportSource,
  options: ImportOptions = {},
): Promise<ImportResult> {
  const columns = transferColumns(kind, table)
  const tableName = table === 'prices' ? kind.priceTable : kind.skuTable
  const problems = new ProblemList()
  const input = await openRecords(source)
  const base = { kind: kind.path, table, dryRun: options.dryRun ?? false, delimiter: input.delimiter }
  const empty = (rows = 0) => ({ ...base, rows, written: 0, deleted: 0, ...problems.summary() })

  const header = await input.records.next()
  if (input.error) problems.add(input.error)
  if (header.done) {
    if (!input.error) problems.add({ line: 1, column: null, message: 'the file is empty' })
    return empty()
  }
  const mapping = mapHeader(header.value, columns, problems)
  if (!mapping) {
    await input.close()
    return empty()
  }

  let rows = 0
  const validRows = async function* (withLine: boolean): AsyncGenerator<(string | null)[]> {
    const keys = new Map<string, number>()
    for await (const record of input.records) {
      rows++
      const values = checkRecord(record, mapping, columns, input.delimiter === ';', problems)
      if (values) {
        const key = rowKey(kind, table, columns, values)
        const first = keys.get(key)
        if (first !== undefined) {
          problems.add({
            line: record.line,
            column: null,
            message: `duplicates the ${describeKey(table)} of line ${first}`,
          })
        } else {
          keys.set(key, record.line)
          if (problems.count === 0) yield withLine ? [...values, String(record.line)] : values
        }
      }
      if (rows % 1000 === 0) options.onProgress?.({ rows, bytes: record.bytes })
    }
    if (input.error) problems.add(input.error)
    if (rows === 0 && problems.count === 0) problems.add({ line: 2, column: null, message: 'the file has no rows' })
    options.onProgress?.({ rows, bytes: input.bytes() })
  }

  let outcome: ImportResult
  try {
    outcome = await db.rawTransaction(async (client) => {
      await client.query(`LOCK TABLE ${tableName} IN SHARE ROW EXCLUSIVE MODE`)
      let deleted = 0
      if (options.replace) {
        const [row] = await client.query<{ count: number | string }>(
          `WITH gone AS (DELETE FROM ${tableName} RETURNING 1) SELECT count(*) AS count FROM gone`,
        )
        deleted = Number(row?.count ?? 0)
      }
      const [state] = await client.query<{ last_id: number | string; filled: boolean }>(
        `SELECT coalesce(max(id), 0) AS last_id, count(*) > 0 AS filled FROM ${tableName}`,
      )
      const lastIdBefore = Number(state?.last_id ?? 0)
      const names = columns.map((column) => column.column)

      let written: number
      if (state?.filled) {
        // Appending to rows already there: stage, find conflicts by SQL (with their lines), then insert.
        await client.query(
          `CREATE TEMP TABLE import_staging ON COMMIT DROP AS SELECT ${names.join(', ')} FROM ${tableName} WITH NO DATA`,
        )
        await client.query('ALTER TABLE import_staging ADD COLUMN line integer')
        await client.copyCsv('import_staging', [...names, 'line'], copyCsvChunks(validRows(true)))
        if (problems.count > 0) throw new Rollback()
        for (const conflict of await client.query<{ line: number; id: number | string }>(
          conflictSql(kind, table, tableName),
        )) {
          problems.add({
            line: Number(conflict.line),
            column: table === 'goods' ? 'barcode' : null,
            message: `the ${describeKey(table)} is already in the ${table === 'goods' ? 'nomenclature' : 'price list'} (id ${conflict.id})`,
          })
        }
        if (problems.count > 0) throw new Rollback()
        const [inserted] = await client.query<{ count: number | string }>(
          `WITH added AS (INSERT INTO ${tableName} (${names.join(', ')})
             SELECT ${names.join(', ')} FROM import_staging ORDER BY line RETURNING 1)
           SELECT count(*) AS count FROM added`,
        )
        written = Number(inserted?.count ?? 0)
      } else {
        written = await client.copyCsv(tableName, names, copyCsvChunks(validRows(false)))
        if (problems.count > 0) throw new Rollback()
      }

      await options.inTransaction?.({ client, kind, tableName, lastIdBefore, written, deleted })
      const result: ImportResult = { ...base, rows, written, deleted, ...problems.summary() }
      if (options.dryRun) throw new DryRun(result)
      return result
    })
  } catch (error) {
    if (error instanceof DryRun) return { ...error.result, written: 0, deleted: 0 }
    if (error instanceof Rollback) return empty(rows)
    const code = String((error as { code?: unknown }).code ?? '')
    // Rules the file checks missed but the database enforces (a text's case folding, say): reported, not thrown.
    if (/^2[23]/.test(code)) {
      problems.add({ line: 0, column: null, message: `the database rejected the file: ${(error as Error).message}` })
      return empty(rows)
    }
    throw error
  } finally {
    await input.close()
  }

  if (options.refresh !== 'none') {
    await refreshMatview(db.primary, kind, { concurrently: options.refresh !== 'blocking' })
  }
  return outcome
}

class DryRun extends Rollback {
  constructor(readonly result: ImportResult) {
    super('dry run')
  }
}

class ProblemList {
  readonly listed: ImportProblem[] = []
  count = 0

  add(problem: ImportProblem): void {
    this.count++
    if (this.listed.length < MAX_REPORTED_PROBLEMS) this.listed.push(problem)
  }

  summary(): { problems: ImportProblem[]; problemCount: number } {
    return { problems: [...this.listed].sort((a, b) => a.line - b.line), problemCount: this.count }
  }
}

function describeKey(table: TransferTable): string {
  return table === 'goods' ? 'barcode' : 'keys and bounds'
}

/** Header names → the column each file field feeds (index into `columns`), or null when the header is unusable. */
function mapHeader(
  header: ParsedRecord,
  columns: readonly TransferColumn[],
  problems: ProblemList,
): (number | null)[] | null {
  const byName = new Map(columns.map((column, index) => [column.name.toLowerCase(), index]))
  const seen = new Set<number>()
  const mapping: (number | null)[] = []
  const before = problems.count
  for (const raw of header.fields) {
    const name = raw.trim()
    const index = byName.get(name.toLowerCase())
    if (index === undefined) {
      problems.add({
        line: header.line,
        column: name,
        message: `unknown column; the columns are ${columns.map((column) => column.name).join(', ')}`,
      })
      mapping.push(null)
    } else if (seen.has(index)) {
      problems.add({ line: header.line, column: name, message: 'the column appears twice' })
      mapping.push(null)
    } else {
      seen.add(index)
      mapping.push(index)
    }
  }
  columns.forEach((column, index) => {
    if (column.required && !seen.has(index)) {
      problems.add({ line: header.line, column: column.name, message: 'required column is missing' })
    }
  })
  return problems.count > before ? null : mapping
}

/** One record → values in `columns` order (NULL for absent columns), or null after reporting its problems. */
function checkRecord(
  record: ParsedRecord,
  mapping: readonly (number | null)[],
  columns: readonly TransferColumn[],
  decimalComma: boolean,
  problems: ProblemList,
): (string | null)[] | null {
  if (record.fields.length !== mapping.length) {
    problems.add({
      line: record.line,
      column: null,
      message: `has ${record.fields.length} field${record.fields.length === 1 ? '' : 's'}, the header has ${mapping.length}`,
    })
    return null
  }
  const values: (string | null)[] = columns.map(() => null)
  let valid = true
  record.fields.forEach((raw, position) => {
    const index = mapping[position] as number
    const column = columns[index] as TransferColumn
    const parsed = parseValue(column, raw, decimalComma)
    if ('error' in parsed) {
      problems.add({ line: record.line, column: column.name, message: parsed.error })
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
        column: column.name,
        message: `must not exceed ${columns[toIndex]?.name} (${from} > ${to})`,
      })
      valid = false
    }
  }
  return valid ? values : null
}

/** The row's unique key as the table's unique index sees it, hashed so a million keys stay small. */
function rowKey(kind: Kind, table: TransferTable, columns: readonly TransferColumn[], values: (string | null)[]) {
  if (table === 'goods') return values[columns.findIndex((column) => column.name === 'barcode')] ?? ''
  const hash = createHash('sha1')
  columns.forEach((column, index) => {
    if (column.type === 'money') return
    const value = values[index] ?? null
    hash.update(value === null ? '\u0000' : column.type === 'text' ? normaliseKeyText(value) : decimalKey(value))
    hash.update('\u0001')
  })
  return `${kind.path}:${hash.digest('base64')}`
}

/** Rows of the staging table that meet an existing row on the table's unique key. */
function conflictSql(kind: Kind, table: TransferTable, tableName: string): string {
  if (table === 'goods') {
    return `SELECT s.line, t.id FROM import_staging s JOIN ${tableName} t ON t.barcode = s.barcode ORDER BY s.line`
  }
  const conditions = [
    ...kind.attributes
      .filter((a) => a.entry !== 'none')
      .map((a) => {
        const [left, right] =
          a.type === 'text' ? [norm(`t.${a.column}`), norm(`s.${a.column}`)] : [`t.${a.column}`, `s.${a.column}`]
        return a.entry === 'key' ? `${left} = ${right}` : `${left} IS NOT DISTINCT FROM ${right}`
      }),
    ...kind.ranges.flatMap((r) => [
      `t.${r.column}_from IS NOT DISTINCT FROM s.${r.column}_from`,
      `t.${r.column}_to IS NOT DISTINCT FROM s.${r.column}_to`,
    ]),
  ]
  return `SELECT s.line, t.id FROM import_staging s JOIN ${tableName} t ON ${conditions.join(' AND ')} ORDER BY s.line`
}

interface RecordStream {
  readonly delimiter: ',' | ';'
  readonly records: AsyncGenerator<ParsedRecord>
  /** A problem that ended the reading (malformed CSV), if any. */
  readonly error: ImportProblem | undefined
  bytes(): number
  close(): Promise<void>
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf])

/**
 * Opens the CSV records of a source: reads ahead to the end of the first line to tell `;` from `,` (whichever
 * the header uses more, outside quotes), strips a BOM, and yields each record with its line number.
 */
async function openRecords(source: ImportSource): Promise<RecordStream> {
  const iterator = toBuffers(source)[Symbol.asyncIterator]()
  const head: Buffer[] = []
  let headBytes = 0
  for (;;) {
    const next = await iterator.next()
    if (next.done) break
    head.push(next.value)
    headBytes += next.value.length
    if (next.value.includes(0x0a) || headBytes > 1_000_000) break
  }
  const delimiter = detectDelimiter(Buffer.concat(head))

  const parser = parse({
    delimiter,
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    info: true,
  })
  const feed = Readable.from(
    (async function* () {
      yield* head
      for (;;) {
        const next = await iterator.next()
        if (next.done) return
        yield next.value
      }
    })(),
  )
  feed.on('error', (error) => parser.destroy(error))
  feed.pipe(parser)

  let bytes = 0
  let failure: ImportProblem | undefined
  const stream: RecordStream = {
    delimiter,
    get error() {
      return failure
    },
    bytes: () => bytes,
    records: (async function* () {
      try {
        for await (const { record, info } of parser as AsyncIterable<{
          record: string[]
          info: { lines: number; bytes: number }
        }>) {
          bytes = info.bytes
          yield { fields: record, line: info.lines, bytes: info.bytes }
        }
      } catch (error) {
        const lines = Number((error as { lines?: unknown }).lines ?? 0)
        failure = { line: lines, column: null, message: `malformed CSV: ${(error as Error).message}` }
      }
    })(),
    async close() {
      feed.destroy()
      parser.destroy()
      await iterator.return?.()
    },
  }
  return stream
}

function toBuffers(source: ImportSource): AsyncIterable<Buffer> {
  return (async function* () {
    for await (const chunk of source as AsyncIterable<Buffer | string>) {
      yield typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    }
  })()
}

function detectDelimiter(head: Buffer): ',' | ';' {
  const start = head.subarray(0, 3).equals(BOM) ? 3 : 0
  const end = head.indexOf(0x0a)
  const line = head.subarray(start, end === -1 ? head.length : end).toString('utf8')
  let commas = 0
  let semicolons = 0
  let quoted = false
  for (const character of line) {
    if (character === '"') quoted = !quoted
    else if (!quoted && character === ',') commas++
    else if (!quoted && character === ';') semicolons++
  }
  return semicolons > commas ? ';' : ','
}
