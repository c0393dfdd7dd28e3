import { refreshMatview } from '../catalog/freshness/catalog-repository.js'
import type { Kind } from '../catalog/kinds/kind.js'
import { norm } from '../catalog/kinds/kind-schema.js'
import { copyText } from '../db/copy-text.js'
import type { Database, RawClient } from '../db/database.js'
import { createIndexes, dropSecondaryIndexes } from '../db/indexes.js'
import { message } from '../domain/messages.js'
import { type CsvRecord, openCsv } from './csv-records.js'
import { IMPORT_TABLES, importPlan, type PlanExtension } from './import-plan.js'
import {
  type ConflictChoice,
  ConflictsFound,
  type ImportFormat,
  type ImportMode,
  type ImportResult,
  type ImportSource,
  ProblemList,
  type ReplaceGuard,
  ReplaceNotConfirmed,
} from './import-result.js'
import { checkRecord, duplicateMessage, mapHeader, reportDuplicates, rowKey } from './import-rows.js'
import { type TransferTable, transferColumns } from './transfer-columns.js'
import { openXlsx } from './xlsx.js'

export type { ImportPlan, PlanExtension, PlanStages } from './import-plan.js'
export { columnsOf, IMPORT_STAGES, IMPORT_TABLES, importPlan } from './import-plan.js'
export * from './import-result.js'

/*
 * CSV import of a kind's price list or nomenclature: one function behind the CLI and HTTP, running the import's
 * typed plan (import-plan.ts) stage by stage.
 *
 * The file streams through papaparse (csv-records.ts); every row is checked against the kind's column rules as it
 * arrives (import-rows.ts), and the valid rows stream on through COPY into a temporary staging table (with their
 * lines) inside one transaction, so a file is read once and never held whole. There SQL finds the keys the file
 * repeats and, when appending, those already in the table, each reported with its line, as the rows' own problems
 * are; with any problem the transaction rolls back and nothing is written, else the staged rows go into the table.
 * Only the command line's bulk load into an empty table (`rebuildIndexes`) copies straight into the table, finding
 * repeated keys in memory and starving the COPY at the first problem (the rest of the file is still checked).
 */

/** How an import runs: its plan's additions and a few plain values. */
export interface ImportOptions {
  /** What the caller's feature adds to the plan of the kind's table: versions, fixed values, its own stages. */
  readonly plan?: PlanExtension
  /** Default `csv`. */
  readonly format?: ImportFormat
  /** How the file meets the rows already there (default `append`; `replace: true` is `replace`). */
  readonly mode?: ImportMode
  /** Delete the kind's rows of that table first (in the same transaction): `mode: 'replace'`. */
  readonly replace?: boolean
  /** With `replace`: refuse what looks like a filtered export unless its deletions are confirmed. */
  readonly replaceGuard?: ReplaceGuard
  /** Check everything, write nothing. */
  readonly dryRun?: boolean
  /** What an upsert does with conflicts (default `refuse`). */
  readonly conflicts?: ConflictChoice
  /** How the kind's matview is refreshed after a successful import (default `concurrently`; `none` leaves it). */
  readonly refresh?: 'concurrently' | 'blocking' | 'none'
  /**
   * Bulk loading: when the table is empty (a first load, or after `replace`), drop its secondary indexes before
   * the COPY and build them once afterwards, in the same transaction. Several times faster on large files, but
   * readers of the table wait until the import commits (the table is locked exclusively meanwhile).
   */
  readonly rebuildIndexes?: boolean
}

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
  const plan = importPlan(kind, table, options.plan)
  const { columns, tableName, stamps, stages } = plan
  const { staging, matched, gone, replaced } = IMPORT_TABLES
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
  const fileColumns = [...columns, ...stamps]
  const mapped = mapHeader(header, fileColumns, problems)
  if (!mapped) {
    await input.close()
    return empty()
  }

  const { mapping, headers } = mapped
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
          const key = rowKey(plan, values)
          const seen = keys.get(key)
          if (seen !== undefined) {
            problems.add({ line: record.line, column: null, message: duplicateMessage(table, seen) })
            continue
          }
          keys.set(key, record.line)
          if (problems.count > 0) continue
        }
        // The values array is this row's own: the fixed values and the line number go on its end.
        for (const fixed of plan.fixedValues) values.push(fixed)
        if (withLine) values.push(String(record.line))
        out.push(values)
      }
      return out
    }
    const emit = (batch: readonly CsvRecord[]) => {
      const out = check(batch)
      fileProblems()
      stages.parse?.({ rows, bytes: input.bytes() })
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
    stages.parse?.({ rows, bytes: input.bytes() })
  }

  let outcome: ImportResult
  try {
    outcome = await db.rawTransaction(async (client) => {
      // A large file may take longer than the statement timeout of a request allows.
      await client.query('SET LOCAL statement_timeout = 0')
      await client.query(`LOCK TABLE ${tableName} IN SHARE ROW EXCLUSIVE MODE`)
      await stages.stage?.({ client, plan })
      let deleted = 0
      const guard =
        mode === 'replace' && table === 'prices' && options.replaceGuard?.columns.length
          ? options.replaceGuard
          : undefined
      if (mode === 'replace') {
        if (stamps.length > 0) {
          // What was there, to meet the file's rows with (the check's lists of changed, created, deleted).
          await client.query(
            `CREATE TEMP TABLE ${gone.name} ON COMMIT DROP AS
             WITH gone AS (DELETE FROM ${tableName} RETURNING *) SELECT * FROM gone`,
          )
        }
        const removed = stamps.length > 0 ? gone.name : tableName
        if (guard) {
          // What is deleted, per value of the guard columns, to judge the file against once it is loaded.
          const guarded = columns.filter((column) => guard.columns.includes(column.name))
          const groups = guarded.map((column) => `${norm(column.column)} AS ${column.column}`)
          await client.query(
            `CREATE TEMP TABLE ${replaced.name} ON COMMIT DROP AS
             WITH gone AS (${removed === tableName ? `DELETE FROM ${tableName} RETURNING *` : `SELECT * FROM ${gone.name}`})
             SELECT ${groups.join(', ')}, count(*) AS ${replaced.count}
             FROM gone GROUP BY ${groups.map((_, i) => i + 1).join(', ')}`,
          )
          const [row] = await client.query<{ count: number | string }>(
            `SELECT coalesce(sum(${replaced.count}), 0) AS count FROM ${replaced.name}`,
          )
          deleted = Number(row?.count ?? 0)
        } else {
          const [row] = await client.query<{ count: number | string }>(
            `WITH gone AS (${removed === tableName ? `DELETE FROM ${tableName} RETURNING 1` : `SELECT 1 FROM ${gone.name}`})
             SELECT count(*) AS count FROM gone`,
          )
          deleted = Number(row?.count ?? 0)
        }
      }
      const [state] = await client.query<{ last_id: number | string; filled: boolean }>(
        `SELECT coalesce(max(id), 0) AS last_id, EXISTS (SELECT 1 FROM ${tableName}) AS filled FROM ${tableName}`,
      )
      const lastIdBefore = Number(state?.last_id ?? 0)
      const names = plan.writtenColumns

      let written: number
      let updated = 0
      let unchanged = 0
      let conflicts = 0
      let overwritten = 0
      let skipped = 0
      if (state?.filled || mode === 'upsert' || !options.rebuildIndexes) {
        // Staged first: duplicate keys of the file, and (meeting rows already there) the keys already in the
        // table, are found by SQL with their lines; then the rows are written.
        // stage: the valid rows, with their lines (and the file's versions), into the staging table.
        await client.query(
          `CREATE TEMP TABLE ${staging.name} ON COMMIT DROP AS SELECT ${names.join(', ')} FROM ${tableName} WITH NO DATA`,
        )
        const stampColumns = `, ADD COLUMN ${staging.fileVersion} integer, ADD COLUMN ${staging.fileChangedAt} timestamptz`
        await client.query(
          `ALTER TABLE ${staging.name} ADD COLUMN ${staging.line} integer${stamps.length > 0 ? stampColumns : ''}`,
        )
        await client.copyRows(staging.name, plan.stagedColumns, validRows(true, false))
        await reportDuplicates(client, plan, problems)
        if (problems.count > 0) throw new Rollback()
        // match: each staged row with the row it meets, and whether it brings other values (beside its key).
        const values = plan.valueColumns
        const differs = `(${values.map((c) => `t.${c}`).join(', ')}) IS DISTINCT FROM (${values.map((c) => `s.${c}`).join(', ')})`
        const conflict = plan.versions && mode === 'upsert' ? plan.versions.conflict(differs) : 'false'
        const before = mode === 'replace' && stamps.length > 0 ? gone.name : tableName
        if (mode === 'upsert' || before !== tableName) {
          await client.query(
            `CREATE TEMP TABLE ${matched.name} ON COMMIT DROP AS
             SELECT s.${staging.line} AS ${matched.line}, t.id AS ${matched.targetId}, ${differs} AS ${matched.changed},
               ${conflict} AS ${matched.conflict}
             FROM ${staging.name} s JOIN ${before} t ON ${plan.matchConditions}`,
          )
        }
        if (mode === 'upsert') {
          const [counts] = await client.query<{
            updated: number | string
            unchanged: number | string
            conflicts: number | string
          }>(
            `SELECT count(*) FILTER (WHERE ${matched.changed} AND NOT ${matched.conflict}) AS updated,
               count(*) FILTER (WHERE NOT ${matched.changed}) AS unchanged,
               count(*) FILTER (WHERE ${matched.conflict}) AS conflicts
             FROM ${matched.name}`,
          )
          updated = Number(counts?.updated ?? 0)
          unchanged = Number(counts?.unchanged ?? 0)
          conflicts = Number(counts?.conflicts ?? 0)
        }
        if (mode !== 'append')
          await stages.check?.({ client, plan, mode, before, matched: before !== tableName || mode === 'upsert' })
        // apply: conflicts decided, then the matched rows updated and the others added.
        if (conflicts > 0) {
          const choice = options.conflicts ?? 'refuse'
          if (choice === 'skip') {
            skipped = conflicts
            await client.query(`UPDATE ${matched.name} SET ${matched.changed} = false WHERE ${matched.conflict}`)
          } else if (typeof choice === 'object' && choice.overwrite === conflicts) {
            overwritten = conflicts
            updated += conflicts
          } else if (!options.dryRun) {
            throw new ConflictsFound(conflicts, typeof choice === 'object' ? choice.overwrite : undefined)
          }
        }
        if (mode === 'upsert') {
          await stages.apply?.({ client, plan })
          if (updated > 0) {
            const assignments = [
              ...[...values, ...plan.fixedColumns].map((c) => `${c} = s.${c}`),
              ...(table === 'prices' ? ['updated_at = now()', 'version = t.version + 1'] : []),
            ]
            await client.query(
              `UPDATE ${tableName} t SET ${assignments.join(', ')}
               FROM ${matched.name} m JOIN ${staging.name} s ON s.${staging.line} = m.${matched.line}
               WHERE t.id = m.${matched.targetId} AND m.${matched.changed}`,
            )
          }
          await client.query(
            `DELETE FROM ${staging.name} s USING ${matched.name} m WHERE s.${staging.line} = m.${matched.line}`,
          )
        } else {
          for (const conflict of await client.query<{ line: number; id: number | string }>(
            `SELECT s.${staging.line} AS line, t.id FROM ${staging.name} s JOIN ${tableName} t ON ${plan.matchConditions}
             ORDER BY s.${staging.line}`,
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
          if (mode === 'append') await stages.check?.({ client, plan, mode, before: tableName, matched: false })
        }
        const [inserted] = await client.query<{ count: number | string }>(
          `WITH added AS (INSERT INTO ${tableName} (${names.join(', ')})
             SELECT ${names.join(', ')} FROM ${staging.name} ORDER BY ${staging.line} RETURNING 1)
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

      await stages.history?.({ client, plan, lastIdBefore, written, deleted, created, updated })
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
      await stages.commit?.({ client, plan, result })
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
  const { replaced } = IMPORT_TABLES
  if (deleted === 0 || guard.confirmDeletes === deleted) return
  for (const column of transferColumns(kind, 'prices')) {
    if (!guard.columns.includes(column.name)) continue
    const [shared] = await client.query<{ values: number | string; value: string | null }>(
      `SELECT count(DISTINCT ${norm(column.column)}) AS values, min(${column.column}) AS value FROM ${tableName}`,
    )
    if (Number(shared?.values) !== 1 || shared?.value == null) continue
    const [others] = await client.query<{ count: number | string }>(
      `SELECT coalesce(sum(${replaced.count}), 0) AS count FROM ${replaced.name}
       WHERE ${column.column} IS DISTINCT FROM ${norm('$1')}`,
      [shared.value],
    )
    const otherCount = Number(others?.count ?? 0)
    if (otherCount > 0) throw new ReplaceNotConfirmed(deleted, column.name, shared.value, otherCount)
  }
}
