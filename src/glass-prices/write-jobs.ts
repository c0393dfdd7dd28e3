import { AsyncLocalStorage } from 'node:async_hooks'
import { randomUUID } from 'node:crypto'
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import Type, { type Static } from 'typebox'
import type { Database } from '../db/database.js'
import { outsideRequest } from '../db/request-work.js'
import { inTransaction } from '../db/transaction.js'
import { message } from '../domain/messages.js'
import {
  keyedWrite,
  kyselySql,
  type RunSql,
  replayOutcome,
  StoredOutcome,
  sendOutcome,
  type WriteOutcome,
} from '../http/idempotency.js'
import { principalName } from '../http/principal.js'
import { ProblemError, problemBody } from '../http/problem.js'
import { StringEnum } from '../http/validation.js'

/*
 * Long writes as jobs (RFC 7240 `Prefer: respond-async`): the bulk change, the upload and the revert answer
 * `202 Accepted` at once, with `Location` naming the job (`…/prices/jobs/{id}`) and `Preference-Applied`, and run
 * on. The job is a row of `write_job`, so any instance answers its poll: `running`, then `succeeded` with the
 * outcome the synchronous call would have answered (recorded in the write's own transaction, so a job that
 * committed is never reported otherwise), or `failed` with its problem (nothing written). The instance running a
 * job beats its heartbeat every 5 s; a running job of an instance that stopped beating for
 * {@link JOB_STALE_SECONDS} (a killed process: its transaction rolled back) is reported failed. The change a job
 * wrote carries `job` among its parameters in the change log. Without the preference nothing changes.
 *
 * Times are the clock's (`clock_timestamp()`, not the transaction's start): `createdAt` when it was accepted,
 * `startedAt` when its work began, `finishedAt` when it ended. The work reports its `progress` (phase, rows done,
 * rows in all) through {@link reportJobProgress}; the heartbeat writes it to the row for other instances, and the
 * instance running a job answers its poll from memory, so a poll never waits for the job's own statements (on the
 * embedded database they hold its one connection).
 */

const JOB_STALE_SECONDS = 30
const HEARTBEAT_MS = 5000

/** The phases a job goes through, in order (not every operation has each). */
export const JOB_PHASES = ['reading', 'selecting', 'writing', 'history', 'done'] as const

interface RunningJob {
  work: Promise<void>
  /** The job as accepted, with its start and latest progress: what a poll of this instance answers. */
  view: WriteJob
  /** The progress not yet written to the row by the heartbeat. */
  unsaved: boolean
}

const currentJob = new AsyncLocalStorage<RunningJob>()

/**
 * Reports how far the job running this code has come (a no-op outside a job): its phase, the rows of the phase
 * done and in all. Cheap: it changes memory only; the heartbeat writes it for other instances.
 */
export function reportJobProgress(phase: JobProgress['phase'], done: number, total: number | null = null): void {
  const job = currentJob.getStore()
  if (!job) return
  job.view = { ...job.view, progress: { phase, done, total } }
  job.unsaved = true
}

export const JobProgressSchema = Type.Object(
  {
    phase: StringEnum(JOB_PHASES, {
      description:
        'reading: the file is read and checked; selecting: the entries to change are found and locked; ' +
        'writing: the prices are written; history: the change is recorded; done: committed',
    }),
    done: Type.Integer({ minimum: 0, description: 'Rows (entries or file lines) of the phase done so far' }),
    total: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'Rows of the phase in all (null: not known yet)',
    }),
  },
  { title: 'Job progress' },
)
export type JobProgress = Static<typeof JobProgressSchema>

export const WriteJobSchema = Type.Object(
  {
    id: Type.Integer(),
    operation: StringEnum(['bulk-change', 'import', 'revert'] as const),
    state: StringEnum(['running', 'succeeded', 'failed'] as const),
    createdBy: Type.String(),
    createdAt: Type.String({ format: 'date-time', description: 'When the job was accepted' }),
    startedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When its work began (null: not yet, or a job of an older version)',
    }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When it ended' }),
    progress: Type.Union([JobProgressSchema, Type.Null()], {
      description: 'How far the work has come, as of its last report (null: no report yet)',
    }),
    batch: Type.Union([Type.Integer(), Type.Null()], { description: 'The change (batch) the job wrote' }),
    result: Type.Union(
      [
        Type.Object({
          status: Type.Integer(),
          headers: Type.Record(Type.String(), Type.String()),
          body: Type.Unknown({ description: 'What the synchronous call answers (null: an empty body)' }),
        }),
        Type.Null(),
      ],
      { description: 'succeeded: the answer of the synchronous call' },
    ),
    problem: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: 'failed: the problem details the synchronous call would have answered',
    }),
  },
  { title: 'Write job' },
)
export type WriteJob = Static<typeof WriteJobSchema>
export type JobOperation = WriteJob['operation']

/** Records the outcome of the job's write in its transaction, just before it commits. */
export type CompleteJob = (run: RunSql, outcome: WriteOutcome) => Promise<void>

/** Whether the request's `Prefer` header asks for `respond-async` (RFC 7240: a list of preferences with parameters). */
export function prefersAsync(request: FastifyRequest): boolean {
  const header = request.headers.prefer
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header]
  return values
    .flatMap((value) => value.split(','))
    .some((preference) => preference.split(';')[0]?.trim().toLowerCase() === 'respond-async')
}

interface JobRow {
  id: number | string
  operation: JobOperation
  state: WriteJob['state']
  created_by: string
  created_at: Date
  started_at: Date | null
  finished_at: Date | null
  progress: JobProgress | string | null
  instance: string
  batch: number | string | null
  outcome: WriteOutcome | string | null
  problem: Record<string, unknown> | string | null
  stale: boolean
}

const json = <T>(value: T | string | null): T | null => (typeof value === 'string' ? JSON.parse(value) : value)

/** The change (batch) an outcome names: a bulk change's header, an upload's or a revert's body. */
function batchOf(outcome: WriteOutcome): number | null {
  const header = outcome.headers['x-price-change-batch']
  const body = outcome.body as { batch?: unknown } | undefined
  const batch = header ?? body?.batch
  return typeof batch === 'number' || typeof batch === 'string' ? Number(batch) : null
}

export class WriteJobs {
  readonly #instance = randomUUID()
  readonly #running = new Map<number, RunningJob>()
  readonly #heartbeat: NodeJS.Timeout

  constructor(
    readonly db: Database,
    readonly log: FastifyBaseLogger,
    readonly basePath: string,
  ) {
    this.#heartbeat = setInterval(() => {
      if (this.#running.size === 0) return
      const jobs = [...this.#running.values()]
      const reported = jobs.filter((job) => job.unsaved)
      for (const job of reported) job.unsaved = false
      outsideRequest(() =>
        kyselySql(db.primary)(
          `UPDATE write_job AS j
           SET heartbeat_at = now(),
               started_at = coalesce(j.started_at, r.started_at),
               progress = coalesce(r.progress, j.progress)
           FROM unnest($1::bigint[], $2::timestamptz[], $3::jsonb[]) AS r(id, started_at, progress)
           WHERE j.id = r.id AND j.state = 'running'`,
          [
            jobs.map((job) => job.view.id),
            jobs.map((job) => job.view.startedAt),
            jobs.map((job) => (reported.includes(job) ? JSON.stringify(job.view.progress) : null)),
          ],
        ),
      ).catch((error: unknown) => log.warn({ err: error }, 'job heartbeat failed'))
    }, HEARTBEAT_MS)
    this.#heartbeat.unref()
  }

  /**
   * Answers `202 Accepted` with the new job and runs `work` after the answer, as nobody's request (it is not
   * cancelled when the connection closes). `work` must call `complete` in its write's transaction; a throw fails
   * the job with its problem. With an `Idempotency-Key`, the 202 is the key's outcome: a retry gets the same job.
   */
  async start(
    request: FastifyRequest,
    reply: FastifyReply,
    operation: JobOperation,
    work: (complete: CompleteJob) => Promise<void>,
  ): Promise<FastifyReply> {
    const keyed = keyedWrite(request)
    let outcome: WriteOutcome
    try {
      outcome = await inTransaction(this.db.primary, async (trx) => {
        const run = kyselySql(trx)
        if (keyed) await keyed.claim(run)
        const [row] = await run(
          `INSERT INTO write_job (operation, created_by, instance) VALUES ($1, $2, $3)
           RETURNING *, false AS stale`,
          [operation, principalName(request), this.#instance],
        )
        const job = this.#view(row as unknown as JobRow)
        const accepted: WriteOutcome = {
          status: 202,
          headers: { location: `${this.basePath}/${job.id}`, 'preference-applied': 'respond-async' },
          body: job,
        }
        if (keyed) await keyed.save(run, accepted)
        return accepted
      })
    } catch (error) {
      if (error instanceof StoredOutcome && keyed) return replayOutcome(reply, keyed.fingerprint, error.row)
      throw error
    } finally {
      keyed?.settle()
    }
    const id = (outcome.body as WriteJob).id
    const location = outcome.headers.location as string
    const complete: CompleteJob = async (run, result) => {
      const batch = batchOf(result)
      await run(
        `UPDATE write_job
         SET state = 'succeeded', outcome = $2::jsonb, batch = $3, finished_at = clock_timestamp(),
             started_at = $4, progress = $5::jsonb
         WHERE id = $1`,
        [id, JSON.stringify({ ...result, body: result.body ?? null }), batch, job.view.startedAt, finalProgress()],
      )
      if (batch !== null) {
        await run(
          `UPDATE glass_price_change SET parameters = parameters || jsonb_build_object('job', $2::bigint) WHERE id = $1`,
          [batch, id],
        )
      }
    }
    const fail = async (error: unknown) => {
      const problem =
        error instanceof ProblemError
          ? problemBody(error.status, error.detail, location, error.extra)
          : problemBody(500, message('job.failed'), location)
      if (!(error instanceof ProblemError)) this.log.error({ err: error, job: id }, 'job failed')
      await kyselySql(this.db.primary)(
        `UPDATE write_job
         SET state = 'failed', problem = $2::jsonb, finished_at = clock_timestamp(), started_at = $3,
             progress = $4::jsonb
         WHERE id = $1 AND state = 'running'`,
        [id, JSON.stringify(problem), job.view.startedAt, JSON.stringify(job.view.progress)],
      )
    }
    const job: RunningJob = {
      work: Promise.resolve(),
      view: { ...(outcome.body as WriteJob), startedAt: new Date().toISOString() },
      unsaved: true,
    }
    /** The progress as the job commits: its last phase's rows, and `done`. */
    const finalProgress = () => {
      const last = job.view.progress
      return JSON.stringify({ phase: 'done', done: last?.done ?? 0, total: last?.total ?? null })
    }
    this.#running.set(id, job)
    job.work = outsideRequest(() =>
      currentJob.run(job, () =>
        work(complete)
          .catch((error: unknown) => fail(error))
          .catch((error: unknown) => this.log.error({ err: error, job: id }, 'could not record a failed job'))
          .finally(() => this.#running.delete(id)),
      ),
    )
    return sendOutcome(reply, outcome)
  }

  /** The job, or undefined. A running job whose instance is gone is reported (and recorded) failed. */
  async find(id: string): Promise<WriteJob | undefined> {
    // A job this instance runs is answered from memory: its row says `running` until the job commits anyway.
    const running = /^\d{1,18}$/.test(id) ? this.#running.get(Number(id)) : undefined
    if (running) return running.view
    const run = kyselySql(this.db.primary)
    const select = `SELECT *, heartbeat_at < now() - make_interval(secs => $2) AS stale FROM write_job WHERE id = $1`
    const [row] = (await run(select, [id, JOB_STALE_SECONDS])) as unknown as JobRow[]
    if (!row) return undefined
    const mine = row.instance === this.#instance
    // The embedded database has one process: a job of another instance belongs to a process that has ended.
    const gone = mine ? !this.#running.has(Number(row.id)) : row.stale || this.db.driver === 'pglite'
    if (row.state !== 'running' || !gone) return this.#view(row)
    const problem = problemBody(503, message('job.lost'), `${this.basePath}/${row.id}`, { code: 'job-lost' })
    await run(
      `UPDATE write_job SET state = 'failed', problem = $2::jsonb, finished_at = now() WHERE id = $1 AND state = 'running'`,
      [id, JSON.stringify(problem)],
    )
    const [failed] = (await run(select, [id, JOB_STALE_SECONDS])) as unknown as JobRow[]
    return this.#view(failed ?? row)
  }

  /** Stops the heartbeat and waits for the jobs this instance runs. */
  async close(): Promise<void> {
    clearInterval(this.#heartbeat)
    await Promise.allSettled([...this.#running.values()].map((job) => job.work))
  }

  #view(row: JobRow): WriteJob {
    return {
      id: Number(row.id),
      operation: row.operation,
      state: row.state,
      createdBy: row.created_by,
      createdAt: new Date(row.created_at).toISOString(),
      startedAt: row.started_at ? new Date(row.started_at).toISOString() : null,
      finishedAt: row.finished_at ? new Date(row.finished_at).toISOString() : null,
      progress: json<JobProgress>(row.progress),
      batch: row.batch === null ? null : Number(row.batch),
      result: json<WriteOutcome>(row.outcome) as WriteJob['result'],
      problem: json<Record<string, unknown>>(row.problem),
    }
  }
}
