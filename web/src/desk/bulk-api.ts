import type { Rounding, RoundingDirection } from '../../../src/domain/roundings.js'
import type {
  BulkChangePreview,
  BulkChangeRequest,
  ImportMode,
  ImportResult,
  ProblemDetails,
  RevertResult,
  ScheduledChange,
  ScheduledPage,
  WriteJob,
} from '../api/types.js'
import type { Api } from '../api.js'
import type { Language } from '../i18n/index.js'
import { type Filters, filterParams, PRICES } from './prices-api.js'

/*
 * The glass price list's writes as the desk calls them: the bulk change (dry run, apply), the revert of a change,
 * the upload (dry run, apply) and the export. Every call carries the API client's headers (language, Bearer
 * token); a write carries an Idempotency-Key made once per confirmation, so a double click or a retry applies once.
 */

export type { Rounding }
export type Direction = RoundingDirection

/** The bulk change's members the desk sends as typed text (decimals normalised: `1,15` → `1.15`; a time in ISO 8601). */
type TypedMember = 'priceFrom' | 'priceTo' | 'coefficient' | 'percent' | 'difference' | 'effectiveAt'

/** The bulk change's body as the desk sends it: typed text, and one of the roundings the service names. */
export type BulkChangeBody = Omit<BulkChangeRequest, TypedMember | 'round' | 'direction'> &
  Readonly<Partial<Record<TypedMember, string>>> & { readonly round: Rounding; readonly direction?: Direction }

export interface BulkChangeApplied {
  readonly changedCount: number
  readonly batch: number
  /** Set when the change was scheduled (a future effectiveAt) rather than applied. */
  readonly scheduled?: ScheduledChange
}

/**
 * From this many entries to change (or to restore), the bulk change (and its Undo) runs as a job: its answer then never waits on the write, which
 * at hundreds of thousands of entries can outlast a reverse proxy's timeout.
 */
export const BACKGROUND_FROM = 2_000

/** How an upload is sent: its mode and choices, the page of its check, the key that applies it, a time to take effect. */
export interface UploadOptions {
  readonly mode: ImportMode
  readonly confirmDeletes?: number
  readonly key?: string
  readonly conflicts?: ConflictChoice
  readonly page?: number
  /** A future instant (ISO 8601 with an offset) schedules the upload instead of applying it. */
  readonly effectiveAt?: string
  /** The file's name, kept with a scheduled upload so the change log can name it. */
  readonly fileName?: string
}

/** What an upsert does with the entries changed since the file's export: overwrite that many, or skip them. */
export type ConflictChoice = { readonly overwrite: number } | 'skip'

export type ExportFormat = 'csv' | 'excel' | 'xlsx'

/** A field the service refused, and why. */
export type FieldError = NonNullable<ProblemDetails['errors']>[number]

/** A problem of an uploaded file (a 422 `import-rejected` lists them): its line, its column when known, and why. */
export interface FileProblem {
  readonly line: number
  readonly column: string | null
  readonly message: string
}

/** A problem+json answer: its detail, code, field errors and whatever else it carries (an upload's problems…). */
export class Problem extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: Readonly<Record<string, unknown>>,
  ) {
    super(message)
  }

  get code(): string | undefined {
    return typeof this.body.code === 'string' ? this.body.code : undefined
  }

  get errors(): readonly FieldError[] {
    return Array.isArray(this.body.errors) ? (this.body.errors as FieldError[]) : []
  }

  get problems(): readonly FileProblem[] {
    return Array.isArray(this.body.problems) ? (this.body.problems as FileProblem[]) : []
  }

  /** A number the problem carries (`deleteCount`, …), if it does. */
  numberOf(name: string): number | undefined {
    const value = this.body[name]
    return typeof value === 'number' ? value : undefined
  }
}

async function problemOf(response: Response): Promise<Problem> {
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>
  const text = typeof body.detail === 'string' ? body.detail : typeof body.title === 'string' ? body.title : ''
  return new Problem(response.status, text || `HTTP ${response.status}`, body)
}

/** A fresh key for one write (a confirmation), sent again with every retry of it. */
export function newIdempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** The query string of the filters: blank ones left out, `exact` for the text filters picked from a list. */
export function filterQuery(filters: Filters, extra: Readonly<Record<string, string>> = {}): URLSearchParams {
  const query = filterParams(filters)
  for (const [name, value] of Object.entries(extra)) query.set(name, value)
  return query
}

export class BulkApi {
  constructor(private readonly api: Api) {}

  private async send(path: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Response> {
    const response = await fetch(path, { ...init, headers: this.api.headers(init.headers ?? {}) })
    if (!response.ok) throw await problemOf(response)
    return response
  }

  /** How many entries the filters select (the listing's total); a 400 names the filter fields in error. */
  async count(filters: Filters, signal?: AbortSignal): Promise<number> {
    const response = await this.send(`${PRICES}/list?${filterQuery(filters, { page: '0', size: '1' })}`, {
      ...(signal ? { signal } : {}),
    })
    return ((await response.json()) as { totalElements: number }).totalElements
  }

  /** The bulk change's dry run: what it would change, and whether the real call would write. */
  async preview(filters: Filters, body: BulkChangeBody, signal?: AbortSignal): Promise<BulkChangePreview> {
    const response = await this.send(`${PRICES}/list?${filterQuery(filters, { dryRun: 'true' })}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      ...(signal ? { signal } : {}),
    })
    return (await response.json()) as BulkChangePreview
  }

  /**
   * Applies the bulk change once per key: the entries written and the change (batch) that records it. With
   * `background`, it runs as a job (`Prefer: respond-async`) that is polled until it ends, so no proxy's or
   * browser's timeout cuts a large change short; `onJob` hears the job at each poll. A refusal is a Problem either way.
   */
  async apply(
    filters: Filters,
    body: BulkChangeBody,
    key: string,
    background = false,
    onJob: (job: WriteJob) => void = () => {},
  ): Promise<BulkChangeApplied> {
    const response = await this.send(`${PRICES}/list?${filterQuery(filters)}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': `"${key}"`,
        ...(background ? { prefer: 'respond-async' } : {}),
      },
      body: JSON.stringify(body),
    })
    let headers = (name: string) => response.headers.get(name)
    if (response.status === 202) {
      const accepted = (await response.json()) as WriteJob | ScheduledChange
      if (accepted.state === 'pending') return { changedCount: 0, batch: 0, scheduled: accepted }
      const done = await this.finished(accepted as WriteJob, onJob)
      headers = (name) => done.result?.headers[name] ?? null
    }
    return {
      changedCount: Number(headers('x-changed-count') ?? 0),
      batch: Number(headers('x-price-change-batch') ?? 0),
    }
  }

  /** Polls a write job until it ends: the job when it succeeded, its problem thrown when it failed. */
  private async finished(job: WriteJob, onJob: (job: WriteJob) => void = () => {}): Promise<WriteJob> {
    let current = job
    onJob(current)
    for (let wait = 100; current.state === 'running'; wait = Math.min(wait * 2, 1_000)) {
      await new Promise((resolve) => setTimeout(resolve, wait))
      current = (await (await this.send(`${PRICES}/jobs/${job.id}`, {})).json()) as WriteJob
      onJob(current)
    }
    if (current.state === 'failed') {
      const problem = current.problem ?? {}
      const detail = typeof problem.detail === 'string' ? problem.detail : `job ${job.id} failed`
      throw new Problem(typeof problem.status === 'number' ? problem.status : 500, detail, problem)
    }
    return current
  }

  /** A page of the scheduled changes: the pending ones first, soonest first. */
  async scheduled(page: number, size: number, signal?: AbortSignal): Promise<ScheduledPage> {
    const response = await this.send(`${PRICES}/scheduled?page=${page}&size=${size}`, signal ? { signal } : {})
    return (await response.json()) as ScheduledPage
  }

  /** Cancels a pending scheduled change; a 409 (it ran, failed or was cancelled) is a Problem. */
  async cancelScheduled(id: number): Promise<ScheduledChange> {
    return (await (await this.send(`${PRICES}/scheduled/${id}`, { method: 'DELETE' })).json()) as ScheduledChange
  }

  /**
   * Reverts a change once per key; a 409 (already reverted, every entry changed since) is a Problem. With
   * `background`, as a job polled until it ends (as {@link apply}).
   */
  async revert(
    batch: number,
    key: string,
    background = false,
    onJob: (job: WriteJob) => void = () => {},
  ): Promise<RevertResult> {
    const response = await this.send(`${PRICES}/changes/${batch}/revert`, {
      method: 'POST',
      headers: { 'idempotency-key': `"${key}"`, ...(background ? { prefer: 'respond-async' } : {}) },
    })
    if (response.status === 202) {
      const done = await this.finished((await response.json()) as WriteJob, onJob)
      return done.result?.body as RevertResult
    }
    return (await response.json()) as RevertResult
  }

  /**
   * Uploads a price-list file: a dry run when `key` is absent, else applied once per key. A file with problems
   * is a 422 Problem listing them; a replace by what looks like a filtered export without `confirmDeletes` is a
   * 409 (`confirm-deletes`, with `deleteCount`). With a future `effectiveAt` (and the file's name) the checked
   * file is scheduled instead: the answer is then the scheduled item, pending.
   */
  async upload(file: Blob, options: UploadOptions & { effectiveAt: string }): Promise<ImportResult | ScheduledChange>
  async upload(file: Blob, options: UploadOptions, signal?: AbortSignal): Promise<ImportResult>
  async upload(file: Blob, options: UploadOptions, signal?: AbortSignal): Promise<ImportResult | ScheduledChange> {
    const query = new URLSearchParams({ mode: options.mode })
    if (options.effectiveAt !== undefined) query.set('effectiveAt', options.effectiveAt)
    if (options.fileName !== undefined) query.set('fileName', options.fileName)
    if (options.confirmDeletes !== undefined) query.set('confirmDeletes', String(options.confirmDeletes))
    if (options.conflicts === 'skip') query.set('skipConflicts', 'true')
    else if (options.conflicts) query.set('overwriteConflicts', String(options.conflicts.overwrite))
    if (options.page !== undefined) query.set('page', String(options.page))
    if (options.key === undefined) query.set('dryRun', 'true')
    const response = await this.send(`${PRICES}/import?${query}`, {
      method: 'POST',
      headers: {
        'content-type': uploadType(file),
        ...(options.key === undefined ? {} : { 'idempotency-key': `"${options.key}"` }),
      },
      body: file,
      ...(signal ? { signal } : {}),
    })
    const answer = (await response.json()) as ImportResult | ScheduledChange
    return response.status === 202 && 'state' in answer && answer.state === 'pending'
      ? answer
      : (answer as ImportResult)
  }

  /**
   * Downloads the filters' entries as a file (with the Bearer token, hence fetched): its name and bytes. The
   * header is in the desk's language (`headers=ru`: `Производитель`, `Цена`, …), which the upload reads back.
   */
  async download(filters: Filters, format: ExportFormat, language: Language): Promise<{ name: string; blob: Blob }> {
    const extra: Record<string, string> = {
      ...(format === 'xlsx' ? { format: 'xlsx' } : format === 'excel' ? { excel: 'true' } : {}),
      ...(language === 'ru' ? { headers: 'ru' } : {}),
    }
    const response = await this.send(`${PRICES}/export?${filterQuery(filters, extra)}`, {
      headers: { accept: '*/*' },
    })
    const disposition = response.headers.get('content-disposition') ?? ''
    const name = /filename="([^"]+)"/.exec(disposition)?.[1] ?? `glass-prices.${format === 'xlsx' ? 'xlsx' : 'csv'}`
    return { name, blob: await response.blob() }
  }
}

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

/** The upload's content type: a workbook by its type or name, CSV otherwise (the service reads either dialect). */
function uploadType(file: Blob): string {
  const name = file instanceof File ? file.name.toLowerCase() : ''
  return file.type === XLSX_TYPE || name.endsWith('.xlsx') ? XLSX_TYPE : 'text/csv'
}
