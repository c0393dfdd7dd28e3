import type { Kind } from '../catalog/kinds/kind.js'
import { norm } from '../catalog/kinds/kind-schema.js'
import type { RawClient } from '../db/database.js'
import type { ImportMode, ImportProgress, ImportResult } from './import-result.js'
import { type TransferColumn, type TransferTable, transferColumns, VERSION_COLUMNS } from './transfer-columns.js'

/*
 * An import as a typed plan: the temporary tables it works in, their columns, and its named stages, one object
 * that the generic import (csv-import.ts) runs and that a feature extends with stages of its own (the glass price
 * list's check, conflicts and history) instead of hooking callbacks into the import's options.
 *
 * The stages, in order, each in the import's one transaction:
 *   parse   — the file's rows are read and checked against the kind's column rules (import-rows.ts);
 *   stage   — the valid rows are copied into `import_staging` (what a replace deletes first kept in `import_gone`);
 *             the file's repeated keys are found there;
 *   match   — `import_matched` pairs each staged row with the row of the table it meets (changed? a conflict?);
 *   check   — what the file would do is known, nothing decided (the check's lists are read here);
 *   apply   — conflicts are refused, skipped or overwritten; matched rows are updated, the others added;
 *   history — the rows are written and the transaction is still open (a history batch is written here);
 * and `commit`, a real import's last work before its transaction commits.
 *
 * SQL that reads these tables names them and their columns through {@link IMPORT_TABLES}, and a typed table's
 * own columns through {@link columnsOf}, so renaming a column is a type error wherever it is read.
 */

export const IMPORT_STAGES = ['parse', 'stage', 'match', 'check', 'apply', 'history'] as const
export type ImportStage = (typeof IMPORT_STAGES)[number]

/** The temporary tables of an import (dropped at commit) and the columns the import adds to them. */
export const IMPORT_TABLES = {
  /** The file's valid rows: the kind's columns as the file brings them, the fixed columns, and these. */
  staging: {
    name: 'import_staging',
    /** The row's line in the file (the header is line 1). */
    line: 'line',
    /** With versions: the entry's version and change time as the file (an export) carries them. */
    fileVersion: 'file_version',
    fileChangedAt: 'file_changed_at',
  },
  /** Upsert, or replace with versions: each staged row (`line`) with the row it meets (`target_id`). */
  matched: {
    name: 'import_matched',
    line: 'line',
    targetId: 'target_id',
    /** The file's row brings other values than the row it meets. */
    changed: 'changed',
    /** Changed, and the row it meets is no longer at the file's version (see {@link PlanVersions}). */
    conflict: 'conflict',
  },
  /** Replace with versions: the rows deleted, as they were (every column of the table). */
  gone: { name: 'import_gone' },
  /** Guarded replace: what was deleted, counted (`n`) per value of the guard columns. */
  replaced: { name: 'import_replaced', count: 'n' },
} as const

/**
 * The columns of a typed table (`columnsOf<GlassesPriceTable>()('price')`): SQL written against a table whose
 * rows the import stages names its columns through it, so they follow the table's type.
 */
export const columnsOf =
  <Row>() =>
  <const C extends keyof Row & string>(column: C): C =>
    column

/** Where every stage runs: the import's transaction, on the plan. */
export interface StageAt {
  readonly client: RawClient
  readonly plan: ImportPlan
}

/** The `check` stage: the rows are staged and, with `matched`, met with the rows of `before`. */
export interface CheckAt extends StageAt {
  readonly mode: ImportMode
  /** Where the rows met live: the table itself, or for a replace with versions {@link IMPORT_TABLES}`.gone`. */
  readonly before: string
  /** Whether `import_matched` exists (upsert, or replace with versions). */
  readonly matched: boolean
}

/** The `history` stage: the rows are written, the transaction open. */
export interface WrittenAt extends StageAt {
  /** Ids above this are the imported rows (the table is locked against other writers meanwhile). */
  readonly lastIdBefore: number
  readonly written: number
  readonly deleted: number
  readonly created: number
  readonly updated: number
}

/** The stages a plan adds; each runs in the import's transaction and a throw rolls the import back. */
export interface PlanStages {
  /** `parse`: after each chunk of the file is read (and at its end). */
  readonly parse?: (progress: ImportProgress) => void
  /** `stage`, first: the table is locked, nothing deleted or staged yet (a history of what a replace deletes). */
  readonly stage?: (at: StageAt) => Promise<void>
  /** `check`: the file's rows staged and matched, nothing decided or written. */
  readonly check?: (at: CheckAt) => Promise<void>
  /** `apply`, upsert: conflicts decided, the matched rows about to be updated (their old → new history). */
  readonly apply?: (at: StageAt) => Promise<void>
  /** `history`: the rows written (the new rows' history). */
  readonly history?: (at: WrittenAt) => Promise<void>
  /** A real (not dry) import's last work, with its result. */
  readonly commit?: (at: StageAt & { readonly result: ImportResult }) => Promise<void>
}

/**
 * A price list's file may carry each entry's version and change time ({@link VERSION_COLUMNS}), staged as
 * `file_version` and `file_changed_at`; an upsert then finds the conflicts by `conflict`.
 */
export interface PlanVersions {
  /**
   * The SQL condition of a conflict between the staged row `s` and the row `t` it meets, given the condition
   * that their values differ.
   */
  readonly conflict: (differs: string) => string
}

/** What a feature adds to the generic plan of a kind's table. */
export interface PlanExtension {
  readonly versions?: PlanVersions
  /** Values written into further columns of every imported row (`{ updated_by: 'anna' }`), not read from the file. */
  readonly fixed?: Readonly<Record<string, string>>
  readonly stages?: PlanStages
}

export interface ImportPlan {
  readonly kind: Kind
  readonly table: TransferTable
  /** The table written (`glasses_price`, …). */
  readonly tableName: string
  /** The kind's columns of the table, as a file brings them. */
  readonly columns: readonly TransferColumn[]
  /** What the file may carry after them: the versions, when the plan reads them. */
  readonly stamps: readonly TransferColumn[]
  readonly versions: PlanVersions | undefined
  /** The fixed columns' names and values, in one order. */
  readonly fixedColumns: readonly string[]
  readonly fixedValues: readonly string[]
  readonly stages: PlanStages
  /** The staged columns the file's rows are copied into, in COPY order. */
  readonly stagedColumns: readonly string[]
  /** The table's columns an imported row writes. */
  readonly writtenColumns: readonly string[]
  /** The columns a file row brings beside its key (an entry's prices, every attribute of a SKU). */
  readonly valueColumns: readonly string[]
  /** Whether a file column is part of the table's unique key (an upsert matches on it rather than writes it). */
  readonly isKey: (column: TransferColumn) => boolean
  /** The join condition of a staged row `s` and a row `t` of the table on the table's unique key. */
  readonly matchConditions: string
}

/** The plan of an import into a kind's table, with what a feature adds. */
export function importPlan(kind: Kind, table: TransferTable, extension: PlanExtension = {}): ImportPlan {
  const columns = transferColumns(kind, table)
  const versions = table === 'prices' ? extension.versions : undefined
  const stamps = versions ? VERSION_COLUMNS : []
  const { staging } = IMPORT_TABLES
  const fixedColumns = Object.keys(extension.fixed ?? {})
  const isKey = (column: TransferColumn) => keyColumn(table, column)
  const names = columns.map((column) => column.column)
  return {
    kind,
    table,
    tableName: table === 'prices' ? kind.priceTable : kind.skuTable,
    columns,
    stamps,
    versions,
    fixedColumns,
    fixedValues: Object.values(extension.fixed ?? {}),
    stages: extension.stages ?? {},
    stagedColumns: [
      ...names,
      ...(versions ? [staging.fileVersion, staging.fileChangedAt] : []),
      ...fixedColumns,
      staging.line,
    ],
    writtenColumns: [...names, ...fixedColumns],
    valueColumns: columns.filter((column) => !isKey(column)).map((column) => column.column),
    isKey,
    matchConditions: matchConditions(kind, table),
  }
}

function keyColumn(table: TransferTable, column: TransferColumn): boolean {
  if (table === 'goods') return column.name === 'barcode'
  return column.type !== 'money'
}

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
