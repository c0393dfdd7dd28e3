import type { Kind } from '../catalog/kinds/kind.js'
import { glasses } from '../catalog/kinds/kinds.js'
import type { Database, RawClient } from '../db/database.js'
import type { GlassesPriceTable } from '../db/tables.js'
import { message } from '../domain/messages.js'
import { buildPage, type Page, type PageRequest } from '../http/page.js'
import { conflict, unprocessable } from '../http/problem.js'
import {
  type ConflictChoice,
  ConflictsFound,
  columnsOf,
  IMPORT_TABLES,
  type ImportFormat,
  type ImportMode,
  type ImportOptions,
  type ImportProgress,
  type ImportResult,
  type ImportSource,
  importCsv,
  type PlanExtension,
  ReplaceNotConfirmed,
} from '../transfer/csv-import.js'
import { changedAtText } from '../transfer/transfer-columns.js'
import { reportJobProgress } from './write-jobs.js'

/*
 * A CSV upload of the glass price list, recorded in the history: the whole import is one change (batch) with
 * action IMPORT (none when the file changes nothing: every row as stored, or no row), holding one row per imported entry and field (old value NULL), with `upsert` one per updated
 * entry and changed price (old → new), and with `replace` one per deleted entry and field (new value NULL).
 * Reverting the batch deletes what the file added, restores the prices it updated and what it replaced, as for
 * any other change.
 *
 * It is the generic import's plan (transfer/import-plan.ts) with the price list's own stages plugged in: versions
 * and the conflict check against newer prices at `match`, the check's lists at `check`, the history rows at
 * `stage` (what a replace deletes), `apply` (what an upsert changes) and `history` (what the file wrote). Their
 * SQL names the import's tables and the price list's columns through the plan's typed description.
 */

/** The price list's columns, typed by its table: a renamed column is a type error in the SQL below. */
const g = columnsOf<GlassesPriceTable>()
const { staging, matched } = IMPORT_TABLES

/** The columns a filtered export of the glass price list shares (`?brand=ray`, `?manufacturer=safilo`). */
const FILTER_COLUMNS = ['manufacturer', 'brand'] as const

/**
 * Whether a kind's table is the glass price list, whose imports go through {@link importGlassPrices} by every
 * door (HTTP and the command line), so each is one change of its history, revertable like any other.
 */
export function isGlassPriceList(kind: Kind, table: 'prices' | 'goods'): boolean {
  return kind === glasses && table === 'prices'
}

export interface GlassPriceImportOptions {
  readonly user: string
  /** Default `append`. */
  readonly mode?: ImportMode
  /** For `replace` from a file that looks like a filtered export: the number of entries it deletes. */
  readonly confirmDeletes?: number
  readonly dryRun?: boolean
  /** What an upsert does with rows whose entry changed since the file's version (default `refuse`). */
  readonly conflicts?: ConflictChoice
  /** The page of each of the check's lists (default the first 20 rows). */
  readonly checkPage?: PageRequest
  /** Default `csv`. */
  readonly format?: ImportFormat
  /** The first work of the import's transaction (after the table is locked); a throw rolls it back. */
  readonly atStart?: (client: RawClient) => Promise<void>
  /** The last work of a real import's transaction, with its result; a throw rolls it back. */
  readonly beforeCommit?: (client: RawClient, result: GlassPriceImportResult) => Promise<void>
  /** The command line loads in bulk, reports progress and refreshes the matview itself. */
  readonly onProgress?: (progress: ImportProgress) => void
  /** The file's size in bytes, when known: a job's progress then estimates the rows in all while reading. */
  readonly sourceBytes?: number
  readonly rebuildIndexes?: boolean
  readonly refresh?: ImportOptions['refresh']
}

export interface GlassPriceImportResult extends ImportResult {
  /** The history change (batch) of the import; null when nothing was written. */
  readonly batch: number | null
  /** What the file does to the price list, row by row (a page of each list); null when the file had problems. */
  readonly check: ImportCheck | null
}

export interface FieldChange {
  readonly field: 'price' | 'purchase'
  readonly oldValue: number
  readonly newValue: number
}

/** A row of the check: the file's line (null for an entry a replace deletes), the entry, its values after. */
export interface CheckRow {
  readonly line: number | null
  /** The entry the row meets; null for a row that creates one. */
  readonly id: number | null
  readonly manufacturer: string
  readonly brand: string
  readonly model: string
  readonly price: number
  readonly purchase: number
  /** Old → new per price that changes (the stored entry's → the file's). */
  readonly changes: FieldChange[]
}

export interface ConflictRow extends CheckRow {
  readonly fileVersion: number
  readonly storedVersion: number
  readonly changedBy: string
  readonly changedAt: string
  readonly storedPrice: number
  readonly storedPurchase: number
}

export interface ImportCheck {
  readonly changed: Page<CheckRow>
  readonly created: Page<CheckRow>
  readonly deleted: Page<CheckRow>
  readonly conflicts: Page<ConflictRow>
}

/** Thrown (nothing written) when an upsert meets conflicts it was not told to skip or overwrite; with the check. */
export class GlassPriceConflicts extends Error {
  constructor(
    readonly found: ConflictsFound,
    readonly check: ImportCheck | null,
  ) {
    super(found.message)
  }
}

const DEFAULT_CHECK_PAGE: PageRequest = { page: 0, size: 20, sort: [] }

type CheckSqlRow = {
  line: number | null
  id: number | string | null
  manufacturer: string
  brand: string
  model: string
  price: string
  purchase: string
  old_price: string | null
  old_purchase: string | null
  file_version?: number
  version?: number
  updated_by?: string
  changed_at?: string
}

function checkRow(row: CheckSqlRow): CheckRow {
  const changes: FieldChange[] = []
  for (const [field, oldValue, newValue] of [
    ['price', row.old_price, row.price],
    ['purchase', row.old_purchase, row.purchase],
  ] as const) {
    if (oldValue !== null && oldValue !== newValue) {
      changes.push({ field, oldValue: Number(oldValue), newValue: Number(newValue) })
    }
  }
  return {
    line: row.line === null ? null : Number(row.line),
    id: row.id === null ? null : Number(row.id),
    manufacturer: row.manufacturer,
    brand: row.brand,
    model: row.model,
    price: Number(row.price),
    purchase: Number(row.purchase),
    changes,
  }
}

/**
 * The check's lists, one page each, read in the import's transaction once the file's rows are met with the
 * entries (`before`: the table, or what a replace deleted): set-based, a count and a page per list, so the answer
 * stays bounded whatever the file's size.
 */
async function readCheck(
  client: RawClient,
  before: string,
  withMatches: boolean,
  request: PageRequest,
): Promise<ImportCheck> {
  const limit = `LIMIT ${request.size} OFFSET ${request.page * request.size}`
  const page = async <T>(from: string, order: string, select: string, map: (row: CheckSqlRow) => T) => {
    const [count] = await client.query<{ n: number | string }>(`SELECT count(*) AS n ${from}`)
    const rows = await client.query<CheckSqlRow>(`SELECT ${select} ${from} ORDER BY ${order} ${limit}`)
    return buildPage(rows.map(map), request, Number(count?.n ?? 0))
  }
  const fileRow = `s.${staging.line} AS line, s.${g('manufacturer')}, s.${g('brand')}, s.${g('model')},
    s.${g('price')}::text AS price, s.${g('purchase')}::text AS purchase`
  const met = `FROM ${matched.name} m JOIN ${staging.name} s ON s.${staging.line} = m.${matched.line}
    JOIN ${before} e ON e.${g('id')} = m.${matched.targetId}`
  const oldPrices = `e.${g('id')} AS id, e.${g('price')}::text AS old_price, e.${g('purchase')}::text AS old_purchase`
  const empty = buildPage<never>([], request, 0)
  return {
    changed: withMatches
      ? await page(
          `${met} WHERE m.${matched.changed} AND NOT m.${matched.conflict}`,
          `m.${matched.line}`,
          `${fileRow}, ${oldPrices}`,
          checkRow,
        )
      : empty,
    created: await page(
      `FROM ${staging.name} s${
        withMatches
          ? ` WHERE NOT EXISTS (SELECT 1 FROM ${matched.name} m WHERE m.${matched.line} = s.${staging.line})`
          : ''
      }`,
      `s.${staging.line}`,
      `${fileRow}, NULL AS id, NULL AS old_price, NULL AS old_purchase`,
      checkRow,
    ),
    deleted:
      before !== glasses.priceTable
        ? await page(
            `FROM ${before} e WHERE NOT EXISTS (SELECT 1 FROM ${matched.name} m WHERE m.${matched.targetId} = e.${g('id')})`,
            `e.${g('id')}`,
            `NULL AS line, e.${g('id')} AS id, e.${g('manufacturer')}, e.${g('brand')}, e.${g('model')},
             e.${g('price')}::text AS price, e.${g('purchase')}::text AS purchase, NULL AS old_price, NULL AS old_purchase`,
            checkRow,
          )
        : empty,
    conflicts: withMatches
      ? await page(
          `${met} WHERE m.${matched.conflict}`,
          `m.${matched.line}`,
          `${fileRow}, ${oldPrices}, s.${staging.fileVersion} AS file_version,
           e.${g('version')} AS version, e.${g('updated_by')} AS updated_by, ${changedAtText('e')} AS changed_at`,
          (row): ConflictRow => ({
            ...checkRow(row),
            fileVersion: Number(row.file_version),
            storedVersion: Number(row.version),
            changedBy: row.updated_by ?? '',
            changedAt: row.changed_at ?? '',
            storedPrice: Number(row.old_price),
            storedPurchase: Number(row.old_purchase),
          }),
        )
      : empty,
  }
}

/** The fields of an entry its history rows record, each with its column. */
const HISTORY_FIELDS = [
  ['manufacturer', g('manufacturer')],
  ['brand', g('brand')],
  ['model', g('model')],
  ['price', `${g('price')}::text`],
  ['purchase', `${g('purchase')}::text`],
] as const

/** The history rows of entries, one per field, with the entry's values on the `side` given and NULL on the other. */
function historyRowsSql(side: 'old' | 'new'): string {
  const [oldValue, newValue] = side === 'old' ? ['f.value', 'NULL'] : ['NULL', 'f.value']
  const fields = HISTORY_FIELDS.map(([field, column]) => `('${field}', e.${column})`).join(', ')
  return `INSERT INTO glass_price_change_row (change_id, entry_id, field, old_value, new_value)
    SELECT $1, e.${g('id')}, f.field, ${oldValue}, ${newValue}
    FROM ${glasses.priceTable} e
    CROSS JOIN LATERAL (VALUES ${fields}) AS f (field, value)
    WHERE e.${g('id')} > $2 AND e.${g('id')} <= $3`
}

/** The history rows of the prices an upsert changes (old → new), from the import's matched rows. */
const changedPricesSql = `INSERT INTO glass_price_change_row (change_id, entry_id, field, old_value, new_value)
  SELECT $1, e.${g('id')}, f.field, f.old_value, f.new_value
  FROM ${matched.name} m
  JOIN ${staging.name} s ON s.${staging.line} = m.${matched.line}
  JOIN ${glasses.priceTable} e ON e.${g('id')} = m.${matched.targetId}
  CROSS JOIN LATERAL (VALUES ('price', e.${g('price')}::text, s.${g('price')}::text),
    ('purchase', e.${g('purchase')}::text, s.${g('purchase')}::text)) AS f (field, old_value, new_value)
  WHERE m.${matched.changed} AND f.old_value IS DISTINCT FROM f.new_value`

/**
 * A conflict: the file's row brings other values than the entry's, and the entry is no longer at the file's
 * version (changed since; or deleted and made anew, so a different version or a later time).
 */
const newerThanFile = (differs: string) =>
  `coalesce(s.${staging.fileVersion} IS NOT NULL AND ${differs}
     AND (t.${g('version')} <> s.${staging.fileVersion} OR t.${g('updated_at')} > s.${staging.fileChangedAt}), false)`

/**
 * Entries per statement of an import's history: each history row's foreign-key check waits in the database's
 * memory until its statement ends, and on the embedded database that memory is the service's (about 5 MiB per
 * million rows; a 100 MB file writes ten million).
 */
const HISTORY_ENTRIES_PER_STATEMENT = 100_000

/** Writes the history rows of the entries with ids in (`after`, the largest id], a range of ids at a time. */
async function writeHistoryRows(client: RawClient, side: 'old' | 'new', batch: number, after: number): Promise<void> {
  const [last] = await client.query<{ id: number | null }>(`SELECT max(${g('id')}) AS id FROM ${glasses.priceTable}`)
  const lastId = Number(last?.id ?? after)
  for (let from = after; from < lastId; from += HISTORY_ENTRIES_PER_STATEMENT) {
    reportJobProgress('history', from - after, lastId - after)
    await client.query(historyRowsSql(side), [batch, from, Math.min(from + HISTORY_ENTRIES_PER_STATEMENT, lastId)])
  }
  reportJobProgress('history', Math.max(lastId - after, 0), Math.max(lastId - after, 0))
}

/** What one import of the glass price list learns as its stages run: its history batch and its check. */
interface GlassImportState {
  batch: number | null
  check: ImportCheck | null
  rowsRead: number
}

/**
 * The glass price list's additions to the import's plan: versions with their conflict check, the user as the
 * entries' last editor, and its stages (progress, the check's lists, the history batch).
 */
function glassPricePlan(options: GlassPriceImportOptions, state: GlassImportState): PlanExtension {
  const mode = options.mode ?? 'append'
  const openBatch = async (client: RawClient) => {
    if (state.batch !== null) return state.batch
    const [row] = await client.query<{ id: number | string }>(
      `INSERT INTO glass_price_change (action, created_by, parameters) VALUES ('IMPORT', $1, $2::jsonb) RETURNING id`,
      [options.user, JSON.stringify({ mode, replace: mode === 'replace' })],
    )
    state.batch = Number(row?.id)
    return state.batch
  }
  return {
    versions: { conflict: newerThanFile },
    fixed: { [g('updated_by')]: options.user },
    stages: {
      parse: (progress) => {
        state.rowsRead = progress.rows
        // While reading, the rows in all are estimated from the share of the file read so far.
        const size = options.sourceBytes
        const estimate =
          size && progress.bytes > 0
            ? Math.max(progress.rows, Math.round((progress.rows * size) / progress.bytes))
            : null
        reportJobProgress(
          'reading',
          progress.rows,
          progress.bytes >= (size ?? Number.POSITIVE_INFINITY) ? progress.rows : estimate,
        )
        options.onProgress?.(progress)
      },
      stage: async ({ client }) => {
        await options.atStart?.(client)
        // The entries a replace deletes keep their values in the batch, so reverting it brings them back.
        if (mode === 'replace') await writeHistoryRows(client, 'old', await openBatch(client), 0)
      },
      check: async ({ client, before, matched: withMatches }) => {
        state.check = await readCheck(client, before, withMatches, options.checkPage ?? DEFAULT_CHECK_PAGE)
      },
      apply: async ({ client }) => {
        reportJobProgress('writing', 0, state.rowsRead)
        // The prices an upsert changes, old → new: reverting the batch restores the old ones. No price changes, no
        // batch (yet): a file that changes nothing records nothing.
        const [changes] = await client.query<{ any: boolean }>(
          `SELECT EXISTS (SELECT 1 FROM ${matched.name} WHERE ${matched.changed}) AS any`,
        )
        if (!changes?.any) return
        await client.query(changedPricesSql, [await openBatch(client)])
      },
      history: async ({ client, lastIdBefore, written, deleted }) => {
        // A file whose every row the price list already holds changes nothing: no change in the log (batch null).
        if (written + deleted === 0 && state.batch === null) return
        const id = await openBatch(client)
        await writeHistoryRows(client, 'new', id, lastIdBefore)
        await client.query('UPDATE glass_price_change SET changed_count = $2 WHERE id = $1', [id, written + deleted])
      },
      ...(options.beforeCommit
        ? {
            commit: ({ client, result }) =>
              options.beforeCommit!(client, { ...result, batch: state.batch, check: state.check }),
          }
        : {}),
    },
  }
}

/**
 * Imports a CSV file into the glass price list in one transaction, with its history batch and the user as the
 * entries' last editor. Problems are returned (nothing written), as by {@link importCsv}.
 */
export async function importGlassPrices(
  db: Database,
  source: ImportSource,
  options: GlassPriceImportOptions,
): Promise<GlassPriceImportResult> {
  const state: GlassImportState = { batch: null, check: null, rowsRead: 0 }
  const values: ImportOptions = {
    mode: options.mode ?? 'append',
    format: options.format ?? 'csv',
    dryRun: options.dryRun ?? false,
    replaceGuard: {
      columns: FILTER_COLUMNS,
      ...(options.confirmDeletes === undefined ? {} : { confirmDeletes: options.confirmDeletes }),
    },
    ...(options.conflicts === undefined ? {} : { conflicts: options.conflicts }),
    ...(options.rebuildIndexes === undefined ? {} : { rebuildIndexes: options.rebuildIndexes }),
    ...(options.refresh === undefined ? {} : { refresh: options.refresh }),
  }
  const result = await importCsv(db, glasses, 'prices', source, {
    ...values,
    plan: glassPricePlan(options, state),
  }).catch((error: unknown) => {
    if (error instanceof ConflictsFound) throw new GlassPriceConflicts(error, state.check)
    throw error
  })
  const wrote = result.problemCount === 0 && !result.dryRun
  return { ...result, batch: wrote ? state.batch : null, check: result.problemCount === 0 ? state.check : null }
}

/**
 * {@link importGlassPrices} with every refusal as its problem: a file with problems → 422 `import-rejected`, an
 * upsert's conflicts not chosen for → 409 `upload-conflicts`, a replace not confirmed → 409 `confirm-deletes`.
 * The one door of the HTTP upload, now or scheduled. The kind's matview is refreshed in the background (unless
 * `refresh` says otherwise), as after any other write.
 */
export async function importGlassPriceFile(
  db: Database,
  source: ImportSource,
  options: GlassPriceImportOptions,
): Promise<GlassPriceImportResult> {
  // The matview is left to the background refresher, as after a bulk change or a revert (SPEC §7): the write marks
  // it stale, and the answer does not wait for a refresh of every SKU the list prices.
  const result = await importGlassPrices(db, source, { refresh: 'none', ...options }).catch((error: unknown) => {
    if (error instanceof GlassPriceConflicts) {
      throw conflict('upload-conflicts', error.found.detail, {
        conflictCount: error.found.count,
        ...(error.check ? { check: error.check } : {}),
      })
    }
    if (!(error instanceof ReplaceNotConfirmed)) throw error
    throw conflict('confirm-deletes', error.detail, {
      deleteCount: error.deleteCount,
      otherCount: error.otherCount,
      sharedColumn: error.column,
      sharedValue: error.value,
    })
  })
  if (result.problemCount > 0) {
    const count = result.problemCount
    throw unprocessable(
      'import-rejected',
      result.problems.length < count
        ? message('import.problemsListed', { count, listed: result.problems.length })
        : message('import.problems', { count }),
      { problemCount: result.problemCount, problems: result.problems },
    )
  }
  return result
}
