import { message, render, type Text } from '../domain/messages.js'
import type { CsvSource } from './csv-records.js'
import type { TransferTable } from './transfer-columns.js'

/*
 * What an import answers (counts and problems), how it is asked (mode, conflicts, a replace's guard) and the
 * refusals it throws: the vocabulary shared by the import's stages and the doors that call it.
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

export const MAX_REPORTED_PROBLEMS = 100

/** Import input: a stream or any async iterable of text or bytes (an HTTP body, a file). */
export type ImportSource = CsvSource

/** The problems of a file: the first {@link MAX_REPORTED_PROBLEMS} kept, all counted. */
export class ProblemList {
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
