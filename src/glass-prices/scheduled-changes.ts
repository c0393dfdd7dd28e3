import type { FastifyBaseLogger } from 'fastify'
import { type Kysely, sql } from 'kysely'
import type { Database, RawClient } from '../db/database.js'
import { outsideRequest } from '../db/request-work.js'
import type { Tables } from '../db/tables.js'
import { inTransaction } from '../db/transaction.js'
import { message } from '../domain/messages.js'
import { buildPage, type Page, type PageRequest, resolveTotal } from '../http/page.js'
import { conflict, entryNotFound, ProblemError, problemBody } from '../http/problem.js'
import type { ConflictChoice, ImportFormat, ImportMode } from '../transfer/csv-import.js'
import { applyBulkPriceChange, type BulkChangeRule } from './bulk-price-change.js'
import type { GlassPriceFilter } from './glass-price-filter.js'
import { importGlassPriceFile } from './glass-price-import.js'
import type { ScheduledChange } from './glass-price-schemas.js'

/*
 * Bulk changes with an effective date-time (SPEC §12): a change asked for a future time is stored `pending` in
 * `scheduled_price_change` and applied at that time by exactly one instance. Every instance polls for due changes
 * (once a second, and at once when it starts, so a change that fell due while the service was down runs at the next
 * start); a due change is claimed with `FOR UPDATE SKIP LOCKED` and applied in the claiming transaction, so it is
 * written once or not at all, whatever the number of instances. The selection is evaluated when the change applies,
 * with the price list's filters as they were asked. Its change (batch) carries `scheduled` and `effectiveAt` in the
 * change log, and is reverted as any other. A cancel locks the same row, so it waits for an apply under way and then
 * answers 409.
 *
 * An upload with an effective date-time is the same kind of item (`upload`): checked when asked, its file's bytes
 * stored in the row, and applied when due by the upload's own code with the mode and conflict choices given then.
 * The import claims the row in its own transaction (after it locks the price list), so two instances never both
 * apply it; a file that no longer fits (new conflicts, say) fails with its problem, nothing written.
 */

const POLL_MS = 1000
const PATH = '/api/v2/glasses/prices/scheduled'

interface ScheduledRow {
  id: number | string
  operation: ScheduledChange['operation']
  state: ScheduledChange['state']
  effective_at: Date | string
  parameters: Record<string, unknown> | string
  created_by: string
  created_at: Date | string
  finished_at: Date | string | null
  cancelled_by: string | null
  batch: number | string | null
  problem: Record<string, unknown> | string | null
}

/** What a scheduled bulk change stores: the selection and the rule, as validated. */
interface BulkChangeParameters {
  readonly filter: GlassPriceFilter
  readonly rule: BulkChangeRule
}

/** How an upload is applied, chosen when it is asked. */
export interface UploadChoices {
  readonly mode: ImportMode
  readonly confirmDeletes?: number
  readonly conflicts: ConflictChoice
}

/** What a scheduled upload stores beside its file's bytes. */
export interface UploadParameters extends UploadChoices {
  readonly fileName: string | null
  readonly size: number
  readonly format: ImportFormat
}

/** Every column but the file's bytes. */
const COLUMNS = sql.raw(
  'id, operation, state, effective_at, parameters, created_by, created_at, finished_at, cancelled_by, batch, problem',
)

const json = <T>(value: T | string | null): T | null => (typeof value === 'string' ? JSON.parse(value) : value)
const iso = (value: Date | string) => new Date(value).toISOString()

function toScheduledChange(row: ScheduledRow): ScheduledChange {
  const parameters = json<Record<string, unknown>>(row.parameters)
  const bulk = row.operation === 'bulk-change' ? (parameters as unknown as BulkChangeParameters | null) : null
  return {
    id: Number(row.id),
    operation: row.operation,
    state: row.state,
    effectiveAt: iso(row.effective_at),
    parameters: bulk ? { filter: bulk.filter, ...bulk.rule } : (parameters ?? {}),
    createdBy: row.created_by,
    createdAt: iso(row.created_at),
    finishedAt: row.finished_at === null ? null : iso(row.finished_at),
    cancelledBy: row.cancelled_by,
    batch: row.batch === null ? null : Number(row.batch),
    problem: json<Record<string, unknown>>(row.problem),
  }
}

/** Stores a bulk change to apply at `effectiveAt` (ISO text, in the future); returns it, pending. */
export async function scheduleBulkChange(
  db: Kysely<Tables>,
  filter: GlassPriceFilter,
  rule: BulkChangeRule,
  effectiveAt: string,
  user: string,
): Promise<ScheduledChange> {
  const { rows } = await sql<ScheduledRow>`
    INSERT INTO scheduled_price_change (operation, effective_at, parameters, created_by)
    VALUES ('bulk-change', ${effectiveAt}::timestamptz, ${JSON.stringify({ filter, rule })}::jsonb, ${user})
    RETURNING ${COLUMNS}`.execute(db)
  return toScheduledChange(rows[0]!)
}

/** Stores an upload (its file's bytes, already checked) to apply at `effectiveAt`; returns it, pending. */
export async function scheduleUpload(
  db: Kysely<Tables>,
  file: Buffer,
  parameters: UploadParameters,
  effectiveAt: string,
  user: string,
): Promise<ScheduledChange> {
  const { rows } = await sql<ScheduledRow>`
    INSERT INTO scheduled_price_change (operation, effective_at, parameters, created_by, file)
    VALUES ('upload', ${effectiveAt}::timestamptz, ${JSON.stringify(parameters)}::jsonb, ${user}, ${file})
    RETURNING ${COLUMNS}`.execute(db)
  return toScheduledChange(rows[0]!)
}

/** The scheduled changes: the pending ones first, the soonest first, then the others, newest first. */
export async function listScheduledChanges(db: Kysely<Tables>, page: PageRequest): Promise<Page<ScheduledChange>> {
  const { rows } = await sql<ScheduledRow>`
    SELECT ${COLUMNS} FROM scheduled_price_change
    ORDER BY state = 'pending' DESC, CASE WHEN state = 'pending' THEN effective_at END, id DESC
    LIMIT ${page.size} OFFSET ${page.page * page.size}`.execute(db)
  const total = await resolveTotal(page, rows.length, async () => {
    const counted = await sql<{ count: number | string }>`SELECT count(*) AS count FROM scheduled_price_change`.execute(
      db,
    )
    return Number(counted.rows[0]?.count ?? 0)
  })
  return buildPage(rows.map(toScheduledChange), page, total)
}

/** One scheduled change; 404 when there is none. `id` is a validated positive integer as text. */
export async function findScheduledChange(db: Kysely<Tables>, id: string): Promise<ScheduledChange> {
  const { rows } =
    await sql<ScheduledRow>`SELECT ${COLUMNS} FROM scheduled_price_change WHERE id = ${id}::bigint`.execute(db)
  if (!rows[0]) throw entryNotFound(message('scheduled.notFound', { id }))
  return toScheduledChange(rows[0])
}

/** Cancels a pending change; 409 when it already ran, failed or was cancelled (waits for an apply under way). */
export async function cancelScheduledChange(db: Kysely<Tables>, id: string, user: string): Promise<ScheduledChange> {
  return inTransaction(db, async (trx) => {
    const { rows } = await sql<ScheduledRow>`
      SELECT ${COLUMNS} FROM scheduled_price_change WHERE id = ${id}::bigint FOR UPDATE`.execute(trx)
    const row = rows[0]
    if (!row) throw entryNotFound(message('scheduled.notFound', { id }))
    if (row.state !== 'pending') {
      throw conflict('scheduled-change-finished', message('scheduled.finished', { id, state: row.state }), {
        state: row.state,
      })
    }
    const updated = await sql<ScheduledRow>`
      UPDATE scheduled_price_change SET state = 'cancelled', finished_at = now(), cancelled_by = ${user}, file = NULL
      WHERE id = ${id}::bigint RETURNING ${COLUMNS}`.execute(trx)
    return toScheduledChange(updated.rows[0]!)
  })
}

class NotClaimed extends Error {}

/** Records a due change refused with `error`, unless another look finished it meanwhile. */
async function recordFailure(db: Kysely<Tables>, id: number, error: ProblemError): Promise<void> {
  const problem = problemBody(error.status, error.detail, `${PATH}/${id}`, error.extra)
  await sql`
    UPDATE scheduled_price_change SET state = 'failed', finished_at = now(), problem = ${JSON.stringify(problem)}::jsonb,
      file = NULL
    WHERE id = ${id} AND state = 'pending'`.execute(db)
}

/**
 * Claims the next due change (skipping those another instance holds) and applies it in the same transaction.
 * A refusal (a 422: an entry would get a value ≤ 0) rolls the change back to a savepoint and records it failed;
 * any other error rolls back the whole transaction, and the change stays pending for the next look.
 * Returns the change's id, or undefined when none is due.
 */
export async function applyNextDueChange(db: Kysely<Tables>): Promise<number | undefined> {
  return inTransaction(db, async (trx) => {
    const { rows } = await sql<ScheduledRow>`
      SELECT ${COLUMNS} FROM scheduled_price_change
      WHERE state = 'pending' AND operation = 'bulk-change' AND effective_at <= now()
      ORDER BY effective_at, id LIMIT 1 FOR UPDATE SKIP LOCKED`.execute(trx)
    const row = rows[0]
    if (!row) return undefined
    const id = Number(row.id)
    const parameters = json<BulkChangeParameters>(row.parameters as BulkChangeParameters | string)!
    // A change applied in the background has no request deadline, and its statements none either (as a job's).
    await sql`SET LOCAL statement_timeout = 0`.execute(trx)
    await sql`SAVEPOINT scheduled_apply`.execute(trx)
    try {
      const result = await applyBulkPriceChange(trx, parameters.filter, parameters.rule, row.created_by)
      await sql`
        UPDATE glass_price_change
        SET parameters = parameters || jsonb_build_object('scheduled', ${id}::bigint, 'effectiveAt', ${iso(row.effective_at)}::text)
        WHERE id = ${result.batch}`.execute(trx)
      await sql`
        UPDATE scheduled_price_change SET state = 'applied', finished_at = now(), batch = ${result.batch}
        WHERE id = ${id}`.execute(trx)
    } catch (error) {
      // Anything but a refusal of the change itself (an entry created during it: 409) is tried again at the next look.
      if (!(error instanceof ProblemError) || error.status === 409) throw error
      await sql`ROLLBACK TO SAVEPOINT scheduled_apply`.execute(trx)
      await recordFailure(trx, id, error)
    }
    return id
  })
}

/**
 * Applies the next due upload with the choices it was scheduled with, claiming it in the import's transaction
 * (skipped when another instance holds it). A refusal (problems, conflicts, an unconfirmed replace) records it
 * failed with its problem, nothing written; any other error leaves it pending for the next look.
 * Returns the upload's id, or undefined when none is due (or another instance is applying it).
 */
export async function applyNextDueUpload(database: Database): Promise<number | undefined> {
  const db = database.primary
  const { rows } = await sql<ScheduledRow & { file: Uint8Array }>`
    SELECT ${COLUMNS}, file FROM scheduled_price_change
    WHERE state = 'pending' AND operation = 'upload' AND effective_at <= now()
    ORDER BY effective_at, id LIMIT 1`.execute(db)
  const row = rows[0]
  if (!row) return undefined
  const id = Number(row.id)
  const parameters = json<UploadParameters>(row.parameters as UploadParameters | string)!
  const claim = async (client: RawClient) => {
    const claimed = await client.query(
      `SELECT id FROM scheduled_price_change WHERE id = $1 AND state = 'pending' FOR UPDATE SKIP LOCKED`,
      [id],
    )
    if (claimed.length === 0) throw new NotClaimed()
  }
  try {
    await importGlassPriceFile(database, [Buffer.from(row.file)], {
      user: row.created_by,
      format: parameters.format,
      mode: parameters.mode,
      ...(parameters.confirmDeletes === undefined ? {} : { confirmDeletes: parameters.confirmDeletes }),
      conflicts: parameters.conflicts,
      sourceBytes: parameters.size,
      atStart: claim,
      beforeCommit: async (client, done) => {
        // A file that changed nothing still ran: claimed here if it was not at its start.
        if (done.batch === null) await claim(client)
        else {
          await client.query(
            `UPDATE glass_price_change
             SET parameters = parameters || jsonb_build_object('scheduled', $1::bigint, 'effectiveAt', $2::text)
             WHERE id = $3`,
            [id, iso(row.effective_at), done.batch],
          )
        }
        await client.query(
          `UPDATE scheduled_price_change SET state = 'applied', finished_at = now(), batch = $2, file = NULL
           WHERE id = $1`,
          [id, done.batch],
        )
      },
    })
  } catch (error) {
    if (error instanceof NotClaimed) return undefined
    if (!(error instanceof ProblemError) || error.status >= 500) throw error
    await recordFailure(db, id, error)
  }
  return id
}

/** The poller of one instance: started with the application, stopped (and waited for) when it closes. */
export class ScheduledChanges {
  #timer?: NodeJS.Timeout
  #running?: Promise<void>
  #stopped = true

  constructor(
    readonly db: Database,
    readonly log: FastifyBaseLogger,
    readonly pollMs = POLL_MS,
  ) {}

  /** Starts polling, and looks for due changes at once. */
  start(): void {
    if (!this.#stopped) return
    this.#stopped = false
    this.#timer = setInterval(() => this.poke(), this.pollMs)
    this.#timer.unref()
    this.poke()
  }

  /** Applies the due changes now, unless a look is already under way. */
  poke(): Promise<void> {
    if (this.#stopped) return Promise.resolve()
    this.#running ??= outsideRequest(() => this.#applyDue()).finally(() => {
      this.#running = undefined
    })
    return this.#running
  }

  async #applyDue(): Promise<void> {
    try {
      // One read of the pending index decides; the claims (a transaction each) run only when something is due.
      const { rows } = await sql<{ due: boolean }>`
        SELECT EXISTS (
          SELECT 1 FROM scheduled_price_change WHERE state = 'pending' AND effective_at <= now()
        ) AS due`.execute(this.db.primary)
      if (!rows[0]?.due) return
      while (!this.#stopped) {
        const id = (await applyNextDueChange(this.db.primary)) ?? (await applyNextDueUpload(this.db))
        if (id === undefined) return
        this.log.info({ scheduled: id }, 'scheduled price change ran')
      }
    } catch (error) {
      // The database may be away for a while: the next poll tries again; nothing was written.
      this.log.warn({ err: error }, 'scheduled price changes: could not apply')
    }
  }

  /** Stops polling and waits for an apply under way. */
  async close(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#timer)
    await this.#running
  }
}
