import { hash } from 'node:crypto'
import { refreshMatview } from '../catalog/catalog-repository.js'
import type { Kind } from '../catalog/kind.js'
import { norm, normaliseKeyText } from '../catalog/kind-schema.js'
import { copyText } from '../db/copy-text.js'
import type { Database, RawClient } from '../db/database.js'
import { createIndexes, dropSecondaryIndexes } from '../db/indexes.js'
import { compareDecimals, decimalKey } from '../domain/decimal.js'
import { type Message, message, render, type Text } from '../domain/messages.js'
import { type CsvRecord, type CsvSource, openCsv } from './csv-records.js'
import {
  columnHeader,
  headerKey,
  parseValue,
  type TransferColumn,
  type TransferTable,
  transferColumns,
  VERSION_COLUMNS,
} from './transfer-columns.js'
import { openXlsx } from './xlsx.js'

/*
 * CSV import of a kind's price list or nomenclature: one function behind the CLI and HTTP.
 *
 * The file streams through papaparse (csv-records.ts); every row is checked against the kind's column rules as it
 * arrives, and the valid rows stream on through COPY into a temporary staging table (with their lines) inside one
 * transaction, so a file is read once and never held whole. There SQL finds the keys the file repeats and, when
 * appending, those already in the table, each reported with its line, as the rows' own problems are; with any
 * problem the transaction rolls back and nothing is written, else the staged rows go into the table. Only the
 * command line's bulk load into an empty table (`rebuildIndexes`) copies straight into the table, finding repeated
 * keys in memory and starving the COPY at the first problem (the rest of the file is still checked).
 */

export interface ImportProblem {
  /** 1-based line of the file (the header is line 1); 0 for a problem of the whole file. */
  readonly line: number
  /**
   * The column at fault as the file's header names it (`Цена` in a Russian file, `price` in one with the API's
   * names; a missing column in the language of the rest of the header), or null for the whole row.
   */
  readonly column: string | null
  /** Put into words by whoever reports it: the command line in English, the API in the request's language. */
  readonly message: Text
}

export interface ImportResult {
  readonly kind: string
  readonly table: TransferTable
  /** Data rows read from the file. */
  readonly rows: number
  /** Rows loaded: added, plus updated by `upsert` (0 when there were problems or on a dry run). */
  readonly written: number
  /** Rows added (counted on a dry run too, as for `updated` and `unchanged`). */
  readonly created: number
  /** `upsert`: rows whose key was there and whose values changed. */
  readonly updated: number
  /** `upsert`: rows whose key was there with the same values (left as they were). */
  readonly unchanged: number
  /**
   * `upsert` of a file with versions: rows whose entry was changed since the file's version and whose values
   * differ from it (conflicts); not counted in `updated` unless overwritten.
   */
  readonly conflicts: number
  /** Conflicts written over (`conflicts: { overwrite }`), counted in `updated` too. */
  readonly overwritten: number
  /** Conflicts left as they were (`conflicts: 'skip'`). */
  readonly skipped: number
  readonly mode: ImportMode
  /** Rows deleted first by `replace` (on a dry run: that it would delete, so a replace can be confirmed by it). */
  readonly deleted: number
  readonly dryRun: boolean
  /** The separator of a CSV file; null for XLSX. */
  readonly delimiter: ',' | ';' | null
  readonly format: ImportFormat
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
  readonly created: number
  readonly updated: number
}

/**
 * How a file meets the rows already there: `append` adds (a key already there is a problem), `upsert` updates
 * the values of the rows whose key is there (keeping their ids) and adds the others, `replace` deletes the
 * kind's rows of that table first.
 */
export type ImportMode = 'append' | 'upsert' | 'replace'
export const IMPORT_MODES = ['append', 'upsert', 'replace'] as const satisfies readonly ImportMode[]

/**
 * A replace from a file that looks like a filtered export (every row shares one value of a guard column, say one
 * brand, that entries it would delete do not have) is refused unless `confirmDeletes` is the number of rows it
 * deletes: exporting a brand and loading it back with `replace` would otherwise empty every other brand.
 */
export interface ReplaceGuard {
  /** The price-list columns (API names) a filtered export shares: `['manufacturer', 'brand']`. */
  readonly columns: readonly string[]
  readonly confirmDeletes?: number
}

/** Thrown (the import rolled back) when a {@link ReplaceGuard} refuses the replace. */
export class ReplaceNotConfirmed extends Error {
  constructor(
    readonly deleteCount: number,
    readonly column: string,
    readonly value: string,
    readonly otherCount: number,
    readonly detail = message(column === 'brand' ? 'import.replaceByBrand' : 'import.replaceByManufacturer', {
      value,
      count: deleteCount,
      other: otherCount,
    }),
  ) {
    super(render(detail))
  }
}

/**
 * What an upsert does with conflicts (rows whose entry changed since the file's version): `refuse` (default) the
 * whole file, `skip` them, or `overwrite` them when there are exactly that many (the number the check showed).
 */
export type ConflictChoice = 'refuse' | 'skip' | { readonly overwrite: number }

/** Thrown (the import rolled back) when an upsert meets conflicts it was not told to skip or overwrite. */
export class ConflictsFound extends Error {
  constructor(
    readonly count: number,
    readonly expected?: number,
    readonly detail = expected === undefined
      ? message('import.conflicts', { count })
      : message('import.conflictsChanged', { count, expected }),
  ) {
    super(render(detail))
  }
}

/** What the source holds: CSV text, or an XLSX workbook (its first sheet). */
export type ImportFormat = 'csv' | 'xlsx'

export interface ImportOptions {
  /** Default `csv`. */
  readonly format?: ImportFormat
  /** How the file meets the rows already there (default `append`; `replace: true` is `replace`). */
  readonly mode?: ImportMode
  /** Delete the kind's rows of that table first (in the same transaction): `mode: 'replace'`. */
  readonly replace?: boolean
  /** With `replace`: refuse what looks like a filtered export unless its deletions are confirmed. */
  readonly replaceGuard?: ReplaceGuard
  /**
   * `upsert`: work in the import's transaction after the file's rows are matched and before the matched rows are
   * updated (their history, say). The temporary table `import_matched (line, target_id, changed)` pairs each
   * staged row (`import_staging`, with `line`) with the row of the table it updates.
   */
  readonly beforeUpdate?: (transaction: Pick<ImportTransaction, 'client' | 'kind' | 'tableName'>) => Promise<void>
  /** Check everything, write nothing. */
  readonly dryRun?: boolean
  /**
   * A price list's file may carry each entry's version and change time ({@link VERSION_COLUMNS}); an upsert then
   * finds the conflicts. `import_matched` gets a `conflict` column.
   */
  readonly versions?: boolean
  /** What an upsert does with conflicts (default `refuse`). */
  readonly conflicts?: ConflictChoice
  /**
   * Work in the import's transaction once the file's rows are staged and met with the table, before anything is
   * decided or written (the check's lists, say): `import_staging` holds the valid rows; with `upsert` and `replace`
   * `import_matched (line, target_id, changed, conflict)` pairs them with the entries they meet, which are in
   * `before` (the table itself, or for `replace` the temporary `import_gone` holding what was deleted).
   */
  readonly review?: (review: {
    readonly client: RawClient
    readonly mode: ImportMode
    readonly before: string
    readonly matched: boolean
  }) => Promise<void>
  readonly onProgress?: (progress: ImportProgress) => void
  /** How the kind's matview is refreshed after a successful import (default `concurrently`; `none` leaves it). */
  readonly refresh?: 'concurrently' | 'blocking' | 'none'
  /**
   * Work in the import's transaction after the table is locked and before anything is deleted or written (a
   * history of the rows `replace` deletes, say); a throw rolls the import back.
   */
  readonly beforeWrite?: (transaction: Pick<ImportTransaction, 'client' | 'kind' | 'tableName'>) => Promise<void>
  /** Extra work in the import's transaction (a history batch, say); a throw rolls the import back. */
  readonly inTransaction?: (transaction: ImportTransaction) => Promise<void>
  /** The last work of a real (not dry) import's transaction, with its result; a throw rolls the import back. */
  readonly beforeCommit?: (client: RawClient, result: ImportResult) => Promise<void>
  /**
   * Bulk loading: when the table is empty (a first load, or after `replace`), drop its secondary indexes before
   * the COPY and build them once afterwards, in the same transaction. Several times faster on large files, but
   * readers of the table wait until the import commits (the table is locked exclusively meanwhile).
   */
  readonly rebuildIndexes?: boolean
  /** Values written into further columns of every imported row (`{ updated_by: 'anna' }`), not read from the file. */
  readonly fixed?: Readonly<Record<string, string>>
}

export const MAX_REPORTED_PROBLEMS = 100

/** Import input: a stream or any async iterable of text or bytes (an HTTP body, a file). */
export type ImportSource = CsvSource

class Rollback extends Error {}

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
  const mode: ImportMode = options.mode ?? (options.replace ? 'replace' : 'append')
  const format = options.format ?? 'csv'
  const xlsx = format === 'xlsx'
  const input = xlsx ? await openXlsx(source) : await openCsv(source)
  const base = {
    kind: kind.path,
    table,
    mode,
    format,
    dryRun: options.dryRun ?? false,
    delimiter: xlsx ? null : input.delimiter,
  }
  const none = {
    written: 0,
    deleted: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    conflicts: 0,
    overwritten: 0,
    skipped: 0,
  }
  const empty = (rows = 0) => ({ ...base, rows, ...none, ...problems.summary() })
  const fileProblems = () => {
    for (const problem of input.takeProblems()) problems.add({ ...problem, column: null })
  }

  // The header is the first record; the rest of its batch are the first rows.
  // (Read with next(): leaving a for-await loop early would close the generator and lose the rest of the file.)
  const opening = await input.batches.next()
  const header: CsvRecord | undefined = opening.done ? undefined : opening.value[0]
  const first: CsvRecord[] = opening.done ? [] : opening.value.slice(1)
  fileProblems()
  if (!header) {
    if (problems.count === 0) problems.add({ line: 1, column: null, message: message('import.fileEmpty') })
    await input.close()
    return empty()
  }
  // A price list's export carries versions after the data; they are read into the staging table only.
  const stamps = options.versions && table === 'prices' ? VERSION_COLUMNS : []
  const fileColumns = [...columns, ...stamps]
  const mapped = mapHeader(header, fileColumns, problems)
  if (!mapped) {
    await input.close()
    return empty()
  }

  const { mapping, headers } = mapped
  const fixedColumns = Object.keys(options.fixed ?? {})
  const fixedValues = Object.values(options.fixed ?? {})
  // A workbook's number cells arrive with a point; a number typed as text may have a comma, as with `;`.
  const decimalComma = xlsx || input.delimiter === ';'
  // Only CSV exports mark formula-like text with `'`; a workbook's text cells are never formulas.
  const formulaMarks = !xlsx
  let rows = 0
  /**
   * The valid rows, a batch per chunk of the file, as COPY CSV text. `inMemoryKeys`: duplicate keys are found
   * here, with a map of every key of the file, and nothing more is yielded once a problem is found (the bulk
   * loader's COPY straight into the table). Otherwise every valid row is yielded, problems or not, and duplicate
   * keys are found by SQL in the staging table ({@link reportDuplicates}), so memory does not grow with the file.
   */
  const validRows = async function* (withLine: boolean, inMemoryKeys: boolean): AsyncGenerator<string> {
    const keys = inMemoryKeys ? new Map<string, number>() : undefined
    const check = (batch: readonly CsvRecord[]): (string | null)[][] => {
      const out: (string | null)[][] = []
      for (const record of batch) {
        rows++
        if (record.broken) continue
        const reading = { decimalComma, formulaMarks, trailingFrom: columns.length }
        const values = checkRecord(record, mapping, fileColumns, headers, reading, problems)
        if (!values) continue
        if (!withLine) values.length = columns.length
        if (keys) {
          const key = rowKey(kind, table, columns, values)
          const seen = keys.get(key)
          if (seen !== undefined) {
            problems.add({ line: record.line, column: null, message: duplicateMessage(table, seen) })
            continue
          }
          keys.set(key, record.line)
          if (problems.count > 0) continue
        }
        // The values array is this row's own: the fixed values and the line number go on its end.
        for (const fixed of fixedValues) values.push(fixed)
        if (withLine) values.push(String(record.line))
        out.push(values)
      }
      return out
    }
    const emit = (batch: readonly CsvRecord[]) => {
      const out = check(batch)
      fileProblems()
      options.onProgress?.({ rows, bytes: input.bytes() })
      return (!keys || problems.count === 0) && out.length > 0 ? copyText(out) : undefined
    }
    const head = emit(first)
    if (head) yield head
    for await (const batch of input.batches) {
      const text = emit(batch)
      if (text) yield text
    }
    fileProblems()
    if (rows === 0 && problems.count === 0) problems.add({ line: 2, column: null, message: message('import.noRows') })
    options.onProgress?.({ rows, bytes: input.bytes() })
  }

  let outcome: ImportResult
  try {
    outcome = await db.rawTransaction(async (client) => {
      // A large file may take longer than the statement timeout of a request allows.
      await client.query('SET LOCAL statement_timeout = 0')
      await client.query(`LOCK TABLE ${tableName} IN SHARE ROW EXCLUSIVE MODE`)
      await options.beforeWrite?.({ client, kind, tableName })
      let deleted = 0
      const guard =
        mode === 'replace' && table === 'prices' && options.replaceGuard?.columns.length
          ? options.replaceGuard
          : undefined
      if (mode === 'replace') {
        if (stamps.length > 0) {
          // What was there, to meet the file's rows with (the check's lists of changed, created, deleted).
          await client.query(
            `CREATE TEMP TABLE import_gone ON COMMIT DROP AS
             WITH gone AS (DELETE FROM ${tableName} RETURNING *) SELECT * FROM gone`,
          )
        }
        const removed = stamps.length > 0 ? 'import_gone' : tableName
        if (guard) {
          // What is deleted, per value of the guard columns, to judge the file against once it is loaded.
          const guarded = transferColumns(kind, table).filter((column) => guard.columns.includes(column.name))
          const groups = guarded.map((column) => `${norm(column.column)} AS ${column.column}`)
          await client.query(
            `CREATE TEMP TABLE import_replaced ON COMMIT DROP AS
             WITH gone AS (${removed === tableName ? `DELETE FROM ${tableName} RETURNING *` : 'SELECT * FROM import_gone'})
             SELECT ${groups.join(', ')}, count(*) AS n FROM gone GROUP BY ${groups.map((_, i) => i + 1).join(', ')}`,
          )
          const [row] = await client.query<{ count: number | string }>(
            'SELECT coalesce(sum(n), 0) AS count FROM import_replaced',
          )
          deleted = Number(row?.count ?? 0)
        } else {
          const [row] = await client.query<{ count: number | string }>(
            `WITH gone AS (${removed === tableName ? `DELETE FROM ${tableName} RETURNING 1` : 'SELECT 1 FROM import_gone'})
             SELECT count(*) AS count FROM gone`,
          )
          deleted = Number(row?.count ?? 0)
        }
      }
      const [state] = await client.query<{ last_id: number | string; filled: boolean }>(
        `SELECT coalesce(max(id), 0) AS last_id, EXISTS (SELECT 1 FROM ${tableName}) AS filled FROM ${tableName}`,
      )
      const lastIdBefore = Number(state?.last_id ?? 0)
      const names = [...columns.map((column) => column.column), ...fixedColumns]

      let written: number
      let updated = 0
      let unchanged = 0
      let conflicts = 0
      let overwritten = 0
      let skipped = 0
      if (state?.filled || mode === 'upsert' || !options.rebuildIndexes) {
        // Staged first: duplicate keys of the file, and (meeting rows already there) the keys already in the
        // table, are found by SQL with their lines; then the rows are written.
        await client.query(
          `CREATE TEMP TABLE import_staging ON COMMIT DROP AS SELECT ${names.join(', ')} FROM ${tableName} WITH NO DATA`,
        )
        await client.query(
          `ALTER TABLE import_staging ADD COLUMN line integer${stamps.length > 0 ? ', ADD COLUMN file_version integer, ADD COLUMN file_changed_at timestamptz' : ''}`,
        )
        const stampNames = stamps.length > 0 ? ['file_version', 'file_changed_at'] : []
        const staged = [...columns.map((column) => column.column), ...stampNames, ...fixedColumns, 'line']
        await client.copyRows('import_staging', staged, validRows(true, false))
        await reportDuplicates(client, table, columns, problems)
        if (problems.count > 0) throw new Rollback()
        // The values a file row brings beside its key: the prices of an entry, every attribute of a SKU.
        const values = columns.filter((column) => !keyColumn(table, column)).map((column) => column.column)
        const differs = `(${values.map((c) => `t.${c}`).join(', ')}) IS DISTINCT FROM (${values.map((c) => `s.${c}`).join(', ')})`
        // A conflict: the file's row brings other values than the entry's, and the entry is no longer at the
        // file's version (changed since; or deleted and made anew, so a different version or a later time).
        const conflict =
          stamps.length > 0 && mode === 'upsert'
            ? `coalesce(s.file_version IS NOT NULL AND ${differs}
                 AND (t.version <> s.file_version OR t.updated_at > s.file_changed_at), false)`
            : 'false'
        const before = mode === 'replace' && stamps.length > 0 ? 'import_gone' : tableName
        if (mode === 'upsert' || before !== tableName) {
          await client.query(
            `CREATE TEMP TABLE import_matched ON COMMIT DROP AS
             SELECT s.line, t.id AS target_id, ${differs} AS changed, ${conflict} AS conflict
             FROM import_staging s JOIN ${before} t ON ${matchConditions(kind, table)}`,
          )
        }
        if (mode === 'upsert') {
          const [counts] = await client.query<{
            updated: number | string
            unchanged: number | string
            conflicts: number | string
          }>(
            `SELECT count(*) FILTER (WHERE changed AND NOT conflict) AS updated,
               count(*) FILTER (WHERE NOT changed) AS unchanged, count(*) FILTER (WHERE conflict) AS conflicts
             FROM import_matched`,
          )
          updated = Number(counts?.updated ?? 0)
          unchanged = Number(counts?.unchanged ?? 0)
          conflicts = Number(counts?.conflicts ?? 0)
        }
        if (mode !== 'append')
          await options.review?.({ client, mode, before, matched: before !== tableName || mode === 'upsert' })
        if (conflicts > 0) {
          const choice = options.conflicts ?? 'refuse'
          if (choice === 'skip') {
            skipped = conflicts
            await client.query('UPDATE import_matched SET changed = false WHERE conflict')
          } else if (typeof choice === 'object' && choice.overwrite === conflicts) {
            overwritten = conflicts
            updated += conflicts
          } else if (!options.dryRun) {
            throw new ConflictsFound(conflicts, typeof choice === 'object' ? choice.overwrite : undefined)
          }
        }
        if (mode === 'upsert') {
          await options.beforeUpdate?.({ client, kind, tableName })
          if (updated > 0) {
            const assignments = [
              ...[...values, ...fixedColumns].map((c) => `${c} = s.${c}`),
              ...(table === 'prices' ? ['updated_at = now()', 'version = t.version + 1'] : []),
            ]
            await client.query(
              `UPDATE ${tableName} t SET ${assignments.join(', ')}
               FROM import_matched m JOIN import_staging s ON s.line = m.line
               WHERE t.id = m.target_id AND m.changed`,
            )
          }
          await client.query('DELETE FROM import_staging s USING import_matched m WHERE s.line = m.line')
        } else {
          for (const conflict of await client.query<{ line: number; id: number | string }>(
            `SELECT s.line, t.id FROM import_staging s JOIN ${tableName} t ON ${matchConditions(kind, table)}
             ORDER BY s.line`,
          )) {
            problems.add({
              line: Number(conflict.line),
              column: table === 'goods' ? (headers[columns.findIndex((c) => c.name === 'barcode')] ?? null) : null,
              message:
                table === 'goods'
                  ? message('import.barcodeInNomenclature', { id: conflict.id })
                  : message('import.keysInPriceList', { id: conflict.id }),
            })
          }
          if (problems.count > 0) throw new Rollback()
          if (mode === 'append') await options.review?.({ client, mode, before: tableName, matched: false })
        }
        const [inserted] = await client.query<{ count: number | string }>(
          `WITH added AS (INSERT INTO ${tableName} (${names.join(', ')})
             SELECT ${names.join(', ')} FROM import_staging ORDER BY line RETURNING 1)
           SELECT count(*) AS count FROM added`,
        )
        written = Number(inserted?.count ?? 0)
      } else {
        const rebuild = options.rebuildIndexes ? await dropSecondaryIndexes(client, [tableName]) : []
        written = await client.copyRows(tableName, names, validRows(false, true))
        if (problems.count > 0) throw new Rollback()
        await createIndexes(client, rebuild)
      }
      const created = written
      written += updated
      if (guard) await checkReplaceGuard(client, kind, tableName, guard, deleted)

      await options.inTransaction?.({ client, kind, tableName, lastIdBefore, written, deleted, created, updated })
      const result: ImportResult = {
        ...base,
        rows,
        written,
        deleted,
        created,
        updated,
        unchanged,
        conflicts,
        overwritten,
        skipped,
        ...problems.summary(),
      }
      if (options.dryRun) throw new DryRun(result)
      await options.beforeCommit?.(client, result)
      return result
    })
  } catch (error) {
    // A dry run reports what it would have done: how many rows it would add, update, leave and delete.
    if (error instanceof DryRun) return { ...error.result, written: 0 }
    if (error instanceof Rollback) return empty(rows)
    const code = String((error as { code?: unknown }).code ?? '')
    // Rules the file checks missed but the database enforces (a text's case folding, say): reported, not thrown.
    if (/^2[23]/.test(code)) {
      problems.add({
        line: 0,
        column: null,
        message: message('import.databaseRejected', { reason: (error as Error).message }),
      })
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

  /** Problems found apart (by SQL): the first of them in line order, and how many in all. The first listed stay. */
  merge(found: readonly ImportProblem[], count: number): void {
    this.count += count
    const all = [...this.listed, ...found].sort((a, b) => a.line - b.line)
    this.listed.splice(0, this.listed.length, ...all.slice(0, MAX_REPORTED_PROBLEMS))
  }

  summary(): { problems: ImportProblem[]; problemCount: number } {
    return { problems: [...this.listed].sort((a, b) => a.line - b.line), problemCount: this.count }
  }
}

/**
 * Header names → the column each file field feeds (index into `columns`) and each column's name as the file heads
 * it (its language's name when the file lacks it), or null when the header is unusable.
 */
function mapHeader(
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
function checkRecord(
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

function duplicateMessage(table: TransferTable, firstLine: number): Message {
  return message(table === 'goods' ? 'import.duplicateBarcode' : 'import.duplicateKeys', { line: firstLine })
}

/**
 * The staged rows (`import_staging`, with their lines) whose key repeats an earlier row's, as the table's unique
 * key compares them (normalised text, NULLs equal): each reported at its line, naming the first line of its key.
 * SQL sorts and groups on disk when it must, so the process holds no key of the file.
 */
async function reportDuplicates(
  client: RawClient,
  table: TransferTable,
  columns: readonly TransferColumn[],
  problems: ProblemList,
): Promise<void> {
  // A barcode compares as written; a price list's key texts as normalised (matchConditions says the same).
  const keys = columns
    .filter((column) => keyColumn(table, column))
    .map((column) => (table !== 'goods' && column.type === 'text' ? norm(column.column) : column.column))
  if (keys.length === 0) return
  const found = await client.query<{ line: number; first: number; total: number | string }>(
    `SELECT line, first, count(*) OVER () AS total
     FROM (SELECT line, min(line) OVER (PARTITION BY ${keys.join(', ')}) AS first FROM import_staging) keyed
     WHERE line <> first ORDER BY line LIMIT ${MAX_REPORTED_PROBLEMS}`,
  )
  if (found.length === 0) return
  problems.merge(
    found.map((row) => ({ line: Number(row.line), column: null, message: duplicateMessage(table, Number(row.first)) })),
    Number(found[0]?.total ?? 0),
  )
}

/** The row's unique key as the table's unique index sees it, hashed so a million keys stay small. */
function rowKey(kind: Kind, table: TransferTable, columns: readonly TransferColumn[], values: (string | null)[]) {
  if (table === 'goods') return values[columns.findIndex((column) => column.name === 'barcode')] ?? ''
  let key = ''
  columns.forEach((column, index) => {
    if (!keyColumn(table, column)) return
    const value = values[index] ?? null
    key += value === null ? '\u0000' : column.type === 'text' ? normaliseKeyText(value) : decimalKey(value)
    key += '\u0001'
  })
  return `${kind.path}:${hash('sha1', key, 'base64')}`
}

/** Whether a file column is part of the table's unique key (so an upsert matches on it rather than writes it). */
function keyColumn(table: TransferTable, column: TransferColumn): boolean {
  if (table === 'goods') return column.name === 'barcode'
  return column.type !== 'money'
}

/** The join condition of a staged row `s` and a row `t` of the table on the table's unique key. */
function matchConditions(kind: Kind, table: TransferTable): string {
  if (table === 'goods') return 't.barcode = s.barcode'
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
  return conditions.join(' AND ')
}

/**
 * After a guarded replace loaded the file (the table holds its rows only): when every row shares one value of a
 * guard column and the deleted rows had others, the deletions must have been confirmed by their number.
 */
async function checkReplaceGuard(
  client: RawClient,
  kind: Kind,
  tableName: string,
  guard: ReplaceGuard,
  deleted: number,
): Promise<void> {
  if (deleted === 0 || guard.confirmDeletes === deleted) return
  for (const column of transferColumns(kind, 'prices')) {
    if (!guard.columns.includes(column.name)) continue
    const [shared] = await client.query<{ values: number | string; value: string | null }>(
      `SELECT count(DISTINCT ${norm(column.column)}) AS values, min(${column.column}) AS value FROM ${tableName}`,
    )
    if (Number(shared?.values) !== 1 || shared?.value == null) continue
    const [others] = await client.query<{ count: number | string }>(
      `SELECT coalesce(sum(n), 0) AS count FROM import_replaced WHERE ${column.column} IS DISTINCT FROM ${norm('$1')}`,
      [shared.value],
    )
    const otherCount = Number(others?.count ?? 0)
    if (otherCount > 0) throw new ReplaceNotConfirmed(deleted, column.name, shared.value, otherCount)
  }
}
