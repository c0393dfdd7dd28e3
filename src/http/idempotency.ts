import { createHash } from 'node:crypto'
import { createReadStream } from 'node:fs'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { CompiledQuery, type Kysely } from 'kysely'
import Type, { type TObject } from 'typebox'
import type { RawClient } from '../db/database.js'
import type { Tables } from '../db/tables.js'
import { inTransaction } from '../db/transaction.js'
import { message } from '../domain/messages.js'
import { principalName } from './principal.js'
import { conflict, invalidField, unprocessable } from './problem.js'
import { problemResponses } from './schemas.js'
import { SpooledUpload } from './upload-spool.js'

/*
 * The `Idempotency-Key` request header (IETF httpapi draft "The Idempotency-Key HTTP Header Field") on every route
 * that writes (`config.writesCatalog`). A write sent with a key records its outcome (status, the headers that
 * matter, body) in the table `idempotency_key`, in the same transaction as the write itself: a write that
 * committed always has its outcome, one that rolled back (refused, failed, timed out, its client gone) has none
 * and runs again when retried. Keys belong to the caller (the authenticated principal) and expire after
 * `IDEMPOTENCY_KEY_TTL`.
 *
 * A retry with the same key and the same request (method, path and query, body) gets the first outcome and
 * applies nothing; the same key with another request is a 422; a retry while the first still runs is a 409 —
 * known at once in this process, and through a transaction-level advisory lock the running write holds on its key
 * when it runs on another instance. A request without the header is untouched.
 */

const IdempotencyKeyHeaderSchema = Type.Optional(
  Type.String({
    description:
      'A key of the client for this one write (1–255 visible ASCII characters, quoted or not): a retry with the ' +
      'same key and request gets the first outcome and applies nothing twice (`Idempotent-Replayed: true`); the ' +
      'same key with another request → 422, while the first still runs → 409. Kept for IDEMPOTENCY_KEY_TTL',
  }),
)

/** What a write answered: its retries get it again. */
export interface WriteOutcome {
  readonly status: number
  /** The headers a client reads (ETag, X-Changed-Count, X-Price-Change-Batch, Location), lower-case. */
  readonly headers: Readonly<Record<string, string>>
  /** The JSON body; absent: an empty body. */
  readonly body?: unknown
}

/** Runs one statement in the write's transaction (a Kysely transaction or a raw client). */
export type RunSql = (text: string, parameters: readonly unknown[]) => Promise<Record<string, unknown>[]>

/** The statements of a Kysely transaction (or database) as a {@link RunSql}. */
export const kyselySql =
  (db: Kysely<Tables>): RunSql =>
  async (text, parameters) =>
    (await db.executeQuery(CompiledQuery.raw(text, [...parameters]))).rows as Record<string, unknown>[]

/** The statements of a raw transaction as a {@link RunSql}. */
export const rawSql =
  (client: RawClient): RunSql =>
  (text, parameters) =>
    client.query(text, parameters)

/** What a write sent with a key must do in its transaction: claim the key first, save its outcome last. */
export interface KeyedWrite {
  /** The digest of the request (method, path and query, body) the key was sent with. */
  readonly fingerprint: string
  /**
   * Takes the key's lock for the transaction (409 when another instance runs a request with it) and throws a
   * {@link StoredOutcome} when a request with the key has committed meanwhile.
   */
  claim(run: RunSql): Promise<void>
  /** Records the outcome; call just before the transaction commits. */
  save(run: RunSql, outcome: WriteOutcome): Promise<void>
  /** The write is over (committed or not): a retry may run. */
  settle(): void
}

interface StoredRow {
  fingerprint: string
  status: number
  headers: Record<string, string> | string
  body: string | null
}

/** A request with the key has an outcome already: the write is not run, the outcome (or a 422) is the answer. */
export class StoredOutcome extends Error {
  override name = 'StoredOutcome'
  constructor(readonly row: StoredRow) {
    super('the request has an outcome already')
  }
}

const keyedWrites = new WeakMap<FastifyRequest, KeyedWrite>()

/** The key of this write, when it was sent with one (checked, not yet used). */
export function keyedWrite(request: FastifyRequest): KeyedWrite | undefined {
  return keyedWrites.get(request)
}

/** A key is a structured-field string (`"…"`, as the draft writes it) or the bare token clients also send. */
function parseKey(header: string | string[]): string {
  const text = (Array.isArray(header) ? header.join(',') : header).trim()
  const key = /^".*"$/s.test(text) ? text.slice(1, -1).replace(/\\(["\\])/g, '$1') : text
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw invalidField('Idempotency-Key', message('idempotency.keyFormat'))
  }
  return key
}

/** A digest of what makes two requests the same: method, path and query, body (JSON as parsed, an upload's bytes). */
async function fingerprintOf(request: FastifyRequest): Promise<string> {
  const hash = createHash('sha256').update(`${request.method} ${request.url}\n`)
  const body = request.body
  if (body instanceof SpooledUpload) {
    for await (const chunk of createReadStream(body.path)) hash.update(chunk as Buffer)
  } else {
    hash.update(JSON.stringify(body ?? null))
  }
  return hash.digest('base64url')
}

const lockSql = `SELECT pg_try_advisory_xact_lock(hashtext('optics.idempotency-key'),
  hashtext(current_schema() || '.' || $1 || chr(10) || $2)) AS locked`
const findSql = `SELECT fingerprint, status, headers, body FROM idempotency_key
  WHERE owner = $1 AND key = $2 AND expires_at > now()`

const inUse = () => conflict('idempotency-key-in-use', message('idempotency.running'))

/** Answers with a recorded outcome, or the 422 of a key used for another request. */
export function replayOutcome(reply: FastifyReply, fingerprint: string, row: StoredRow): FastifyReply {
  if (row.fingerprint !== fingerprint) {
    throw unprocessable('idempotency-key-reused', message('idempotency.otherRequest'))
  }
  const headers = typeof row.headers === 'string' ? JSON.parse(row.headers) : row.headers
  reply.code(row.status).headers(headers).header('idempotent-replayed', 'true')
  return row.body === null ? reply.send() : reply.send(JSON.parse(row.body))
}

/** Sends a write's outcome. */
export function sendOutcome(reply: FastifyReply, outcome: WriteOutcome): FastifyReply {
  reply.code(outcome.status).headers(outcome.headers)
  return outcome.body === undefined ? reply.send() : reply.send(outcome.body)
}

/**
 * Checks the `Idempotency-Key` of every write before its handler (so before it waits for a write slot): a bad key
 * is a 400, a key in use in this process a 409, a key with an outcome gets that outcome (or a 422).
 */
export function registerIdempotency(app: FastifyInstance): void {
  const ttlSeconds = app.config.idempotencyKeyTtlSeconds
  // Every write documents (and validates as text) the header, and the 409 and 422 it may bring.
  app.addHook('onRoute', (route) => {
    if (!route.config?.writesCatalog || !route.schema) return
    const headers = route.schema.headers as TObject | undefined
    route.schema = {
      ...route.schema,
      headers: Type.Object({ ...headers?.properties, 'idempotency-key': IdempotencyKeyHeaderSchema }),
      response: { ...problemResponses(409, 422), ...(route.schema.response as object) },
    }
  })
  /** `owner \n key` of the keyed writes this process runs. */
  const running = new Set<string>()
  app.addHook('preHandler', async (request, reply) => {
    const header = request.headers['idempotency-key']
    if (header === undefined || !request.routeOptions.config?.writesCatalog) return
    const key = parseKey(header)
    const owner = principalName(request)
    const id = `${owner}\n${key}`
    if (running.has(id)) throw inUse()
    running.add(id)
    let fingerprint: string
    try {
      fingerprint = await fingerprintOf(request)
      const [stored] = await kyselySql(app.db.primary)(findSql, [owner, key])
      if (stored) {
        running.delete(id)
        return replayOutcome(reply, fingerprint, stored as unknown as StoredRow)
      }
    } catch (error) {
      running.delete(id)
      throw error
    }
    let settled = false
    // A request that never reaches its write (refused by validation, say) frees its key with its answer; one that
    // does frees it when the write is over, which may be after a timeout's answer.
    let started = false
    const write: KeyedWrite = {
      fingerprint,
      async claim(run) {
        started = true
        const [lock] = await run(lockSql, [owner, key])
        if (lock?.locked !== true) throw inUse()
        const [row] = await run(findSql, [owner, key])
        if (row) throw new StoredOutcome(row as unknown as StoredRow)
      },
      async save(run, outcome) {
        await run('DELETE FROM idempotency_key WHERE expires_at <= now()', [])
        await run(
          `INSERT INTO idempotency_key (owner, key, method, path, fingerprint, status, headers, body, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, now() + make_interval(secs => $9))`,
          [
            owner,
            key,
            request.method,
            request.url,
            fingerprint,
            outcome.status,
            JSON.stringify(outcome.headers),
            outcome.body === undefined ? null : JSON.stringify(outcome.body),
            ttlSeconds,
          ],
        )
      },
      settle() {
        if (settled) return
        settled = true
        running.delete(id)
      },
    }
    keyedWrites.set(request, write)
    reply.raw.once('close', () => {
      if (!started) write.settle()
    })
  })
}

/**
 * Runs a write of the primary (Kysely) and answers with its outcome. Without an `Idempotency-Key` it is just
 * that; with one, the write runs in a transaction that claims the key first and records the outcome before it
 * commits, or the recorded outcome is the answer.
 */
export async function answerWrite(
  request: FastifyRequest,
  reply: FastifyReply,
  db: Kysely<Tables>,
  write: (db: Kysely<Tables>) => Promise<WriteOutcome>,
): Promise<FastifyReply> {
  const keyed = keyedWrite(request)
  if (!keyed) return sendOutcome(reply, await write(db))
  try {
    const outcome = await inTransaction(db, async (trx) => {
      const run = kyselySql(trx)
      await keyed.claim(run)
      const outcome = await write(trx)
      await keyed.save(run, outcome)
      return outcome
    })
    return sendOutcome(reply, outcome)
  } catch (error) {
    if (error instanceof StoredOutcome) return replayOutcome(reply, keyed.fingerprint, error.row)
    throw error
  } finally {
    keyed.settle()
  }
}
