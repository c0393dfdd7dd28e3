import { parentPort, workerData } from 'node:worker_threads'
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite'
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm'
import type { WorkerOptions, WorkerReply, WorkerRequest } from './pglite-thread.js'

/*
 * The embedded database's own thread (pglite-thread.ts explains why): owns the PGlite instance and runs what the
 * service's thread sends, one message at a time, in order.
 */

/*
 * The JavaScript types every driver hands back (database.ts): int8 → number, numeric → string (exact money),
 * date → 'YYYY-MM-DD', timestamptz → Date (PGlite's own).
 */
const parsers = {
  [pgliteTypes.INT8]: (value: string) => Number(value),
  [pgliteTypes.NUMERIC]: (value: string) => value,
  [pgliteTypes.DATE]: (value: string) => value,
}

/** The fields of a database error that callers read (SQLSTATE `code`, `detail`, `constraint`, …). */
function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) }
  const fields: Record<string, unknown> = { name: error.name, message: error.message }
  for (const [key, value] of Object.entries(error)) {
    if (value === undefined || typeof value === 'function' || typeof value === 'object') continue
    fields[key] = value
  }
  return fields
}

async function main(): Promise<void> {
  const port = parentPort
  if (!port) throw new Error('pglite-worker runs as a worker thread')
  const options = workerData as WorkerOptions
  let pglite: PGlite
  try {
    pglite = await PGlite.create({
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      // Start parameters given replace PGlite's own, which are kept.
      ...(options.sharedBuffersMb
        ? { startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${options.sharedBuffersMb}MB`] }
        : {}),
      extensions: { pg_trgm },
      parsers,
      pgliteWasmModule: options.code.pgliteWasmModule,
      initdbWasmModule: options.code.initdbWasmModule,
      fsBundle: new Blob([options.code.fsBundle]),
    })
  } catch (error) {
    port.postMessage({ id: 0, ok: false, error: errorFields(error) } satisfies WorkerReply)
    return
  }
  port.postMessage({ id: 0, ok: true, inTransaction: false } satisfies WorkerReply)

  // PGlite runs one statement at a time anyway; handling messages in order keeps a reply's transaction state exact.
  let queue: Promise<void> = Promise.resolve()
  port.on('message', (request: WorkerRequest) => {
    queue = queue.then(async () => {
      try {
        const reply = await handle(pglite, request)
        port.postMessage(reply, reply.blob ? [reply.blob] : [])
      } catch (error) {
        port.postMessage({ id: request.id, ok: false, error: errorFields(error) } satisfies WorkerReply)
      }
      if (request.op === 'close') port.close()
    })
  })
}

async function handle(pglite: PGlite, request: WorkerRequest): Promise<Extract<WorkerReply, { ok: true }>> {
  switch (request.op) {
    case 'query': {
      const result = await pglite.query(
        request.sql,
        request.parameters,
        request.blob ? { blob: new Blob([request.blob]) } : undefined,
      )
      const { blob, command } = result as { blob?: Blob; command?: string }
      return {
        id: request.id,
        ok: true,
        rows: result.rows as Record<string, unknown>[],
        affectedRows: result.affectedRows ?? 0,
        ...(command ? { command } : {}),
        ...(blob ? { blob: await blob.arrayBuffer() } : {}),
        inTransaction: pglite.isInTransaction(),
      }
    }
    case 'close': {
      await pglite.close()
      return { id: request.id, ok: true, inTransaction: false }
    }
  }
}

void main()
