import { type Kysely, sql } from 'kysely'
import type { Tables } from '../db/tables.js'
import { messageText } from '../domain/messages.js'

/*
 * What the migrations 0007-look-alike-keys and 0011-confusable-keys found in the glass price list (their table
 * `glass_price_key_report`), read back so the server's log and the CLI say it once, when one has just run.
 */

const LOOK_ALIKE_MIGRATIONS: readonly string[] = ['0007-look-alike-keys', '0011-confusable-keys']

/** Whether the migrations just applied wrote a report of look-alike keys. */
export function reportsLookAlikeKeys(applied: readonly string[]): boolean {
  return applied.some((name) => LOOK_ALIKE_MIGRATIONS.includes(name))
}

export interface LookAlikeKeyEntry {
  readonly entryId: number
  readonly manufacturer: string
  readonly brand: string
  readonly model: string
  readonly reason: string
  /** The other entries that print as this one (look-alikes); empty otherwise. */
  readonly lookAlikes: readonly number[]
}

export interface LookAlikeKeyReport {
  /** Entries whose keys were rewritten to their one form. */
  readonly normalised: number
  /** Entries left as they are because another entry prints the same. */
  readonly lookAlikes: readonly LookAlikeKeyEntry[]
  /** Entries left as they are because a key holds what the API refuses. */
  readonly invalid: readonly LookAlikeKeyEntry[]
}

/** The report of the migration's (latest) run; every list in entry order. */
export async function readLookAlikeKeyReport(db: Kysely<Tables>): Promise<LookAlikeKeyReport> {
  const { rows } = await sql<{
    entry_id: number | string
    outcome: string
    reason: string
    manufacturer: string
    brand: string
    model: string
    look_alikes: (number | string)[] | string | null
  }>`
    SELECT entry_id, outcome, reason, manufacturer, brand, model, look_alikes::text[] AS look_alikes
    FROM glass_price_key_report
    WHERE run = (SELECT max(run) FROM glass_price_key_report)
    ORDER BY entry_id`.execute(db)
  let normalised = 0
  const lookAlikes: LookAlikeKeyEntry[] = []
  const invalid: LookAlikeKeyEntry[] = []
  for (const row of rows) {
    if (row.outcome === 'normalised') {
      normalised++
      continue
    }
    const entry: LookAlikeKeyEntry = {
      entryId: Number(row.entry_id),
      manufacturer: row.manufacturer,
      brand: row.brand,
      model: row.model,
      reason: row.reason,
      lookAlikes: idsOf(row.look_alikes),
    }
    if (row.outcome === 'look-alike') lookAlikes.push(entry)
    else invalid.push(entry)
  }
  return { normalised, lookAlikes, invalid }
}

/** A `text[]` as either driver hands it over (an array, or PostgreSQL's `{1,2}` text). */
function idsOf(value: (number | string)[] | string | null): number[] {
  if (value === null) return []
  const items = Array.isArray(value)
    ? value
    : value
        .replace(/^\{|\}$/g, '')
        .split(',')
        .filter(Boolean)
  return items.map(Number)
}

/** One line per finding, for a log or a terminal; empty when there is nothing to say. */
export function describeLookAlikeKeyReport(report: LookAlikeKeyReport): string[] {
  const lines: string[] = []
  if (report.normalised > 0) {
    lines.push(messageText('lookAlike.normalised', { count: report.normalised }))
  }
  const values = (entry: LookAlikeKeyEntry) => ({
    id: entry.entryId,
    manufacturer: JSON.stringify(entry.manufacturer),
    brand: JSON.stringify(entry.brand),
    model: JSON.stringify(entry.model),
    reason: entry.reason,
  })
  for (const entry of report.lookAlikes) lines.push(messageText('lookAlike.leftAsIs', values(entry)))
  for (const entry of report.invalid) lines.push(messageText('lookAlike.refused', values(entry)))
  return lines
}
