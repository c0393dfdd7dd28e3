import { readFile } from 'node:fs/promises'
import type { Worker } from 'node:worker_threads'
import type { PGliteOptions } from '@electric-sql/pglite'
import { startModuleWorker } from '../../domain/module-worker.js'

/*
 * The embedded database runs on a thread of its own. PGlite is PostgreSQL compiled to WebAssembly: a statement runs
 * synchronously from start to end, so on the service's thread a bulk change's UPDATE of 112,000 entries stopped
 * the whole process for 20 s, searches the index could answer at once included. On its own thread it holds only
 * that thread (and the one connection); the service's thread goes on answering what needs no database, and the
 * two can use two cores. Messages carry the statements and their rows; COPY's data crosses as transferred
 * buffers (not copied).
 */

/** How the embedded database is opened. */
export interface EmbeddedOpenOptions {
  /** Unset: in memory. */
  readonly dataDir?: string | undefined
  /** The buffer cache (`shared_buffers`) in MiB; unset: PGlite's own (128 MB). */
  readonly sharedBuffersMb?: number | undefined
}

/** A compiled WebAssembly module, as PGlite takes it. */
type WasmModule = NonNullable<PGliteOptions['pgliteWasmModule']>

/** PGlite's code, compiled once per process and handed to each database's thread (which would compile it anew). */
export interface PGliteCode {
  readonly pgliteWasmModule: WasmModule
  readonly initdbWasmModule: WasmModule
  readonly fsBundle: Uint8Array
}

/** The worker's `workerData`. */
export interface WorkerOptions extends EmbeddedOpenOptions {
  readonly code: PGliteCode
}

let compiled: Promise<PGliteCode> | undefined

/** Node's WebAssembly compiler: the TypeScript libraries used here do not declare the global. */
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WasmModule> } }).WebAssembly

function pgliteCode(): Promise<PGliteCode> {
  compiled ??= (async () => {
    const dist = new URL('.', import.meta.resolve('@electric-sql/pglite'))
    const [pglite, initdb, fsBundle] = await Promise.all([
      readFile(new URL('pglite.wasm', dist)).then((bytes) => wasm.compile(bytes)),
      readFile(new URL('initdb.wasm', dist)).then((bytes) => wasm.compile(bytes)),
      readFile(new URL('pglite.data', dist)),
    ])
    return { pgliteWasmModule: pglite, initdbWasmModule: initdb, fsBundle }
  })()
  compiled.catch(() => {
    compiled = undefined
  })
  return compiled
}

export type WorkerRequest =
  | {
      readonly id: number
      readonly op: 'query'
      readonly sql: string
      readonly parameters: unknown[]
      /** `COPY … FROM '/dev/blob'`'s input. */
      readonly blob?: ArrayBuffer
    }
  | { readonly id: number; readonly op: 'close' }

export type WorkerReply =
  | {
      readonly id: number
      readonly ok: true
      readonly rows?: Record<string, unknown>[]
      readonly affectedRows?: number
      /** The statement's command (`UPDATE`, …), when PGlite names one. */
      readonly command?: string
      /** `COPY … TO '/dev/blob'`'s output. */
      readonly blob?: ArrayBuffer
      /** Whether a transaction is open after the request. */
      readonly inTransaction: boolean
    }
  | { readonly id: number; readonly ok: false; readonly error: Record<string, unknown> }

export interface EmbeddedResult<Row> {
  readonly rows: Row[]
  readonly affectedRows: number
  readonly command?: string
  readonly blob?: Blob
}

/** An error of the embedded database, with the fields PostgreSQL's errors carry (`code`, `detail`, …). */
export class EmbeddedDatabaseError extends Error {
  constructor(fields: Record<string, unknown>) {
    super(String(fields.message ?? 'embedded database error'))
    for (const [key, value] of Object.entries(fields)) {
      if (key !== 'message' && key !== 'stack') Object.defineProperty(this, key, { value, enumerable: true })
    }
  }
}

const resourceLimits = { maxYoungGenerationSizeMb: 4 }

/** The embedded database on its own thread: statements in, results out, one at a time in order. */
export class PGliteThread {
  readonly #worker: Worker
  readonly #pending = new Map<number, { resolve: (reply: WorkerReply) => void; reject: (error: Error) => void }>()
  #nextId = 1
  #failed: Error | undefined
  #inTransaction = false

  private constructor(worker: Worker) {
    this.#worker = worker
    worker.on('message', (reply: WorkerReply) => {
      const waiting = this.#pending.get(reply.id)
      if (!waiting) return
      this.#pending.delete(reply.id)
      if (this.#pending.size === 0) worker.unref()
      if (reply.ok) this.#inTransaction = reply.inTransaction
      waiting.resolve(reply)
    })
    const fail = (error: Error) => {
      this.#failed ??= error
      for (const waiting of this.#pending.values()) waiting.reject(error)
      this.#pending.clear()
    }
    worker.on('error', fail)
    worker.on('exit', (code) => fail(new Error(`the embedded database's thread ended (exit code ${code})`)))
    // Idle, it does not keep the process alive; a statement under way does.
    worker.unref()
  }

  /** Starts the thread and opens the database there. */
  static async open(options: EmbeddedOpenOptions): Promise<PGliteThread> {
    const workerData: WorkerOptions = { ...options, code: await pgliteCode() }
    const worker = startModuleWorker(import.meta.url, 'pglite-worker', { workerData, resourceLimits })
    const opened = await new Promise<WorkerReply>((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
      worker.once('exit', (code) => reject(new Error(`the embedded database's thread ended (exit code ${code})`)))
    })
    if (!opened.ok) {
      await worker.terminate()
      throw new EmbeddedDatabaseError(opened.error)
    }
    return new PGliteThread(worker)
  }

  /**
   * Whether the database answers: at once while a statement runs (its thread is alive, and a statement may run
   * for a minute, a bulk change's), else by `select 1`.
   */
  async ping(): Promise<void> {
    if (this.#failed) throw this.#failed
    if (this.#pending.size > 0) return
    await this.query('select 1')
  }

  /** Whether a transaction was open after the last statement answered. */
  get inTransaction(): boolean {
    return this.#inTransaction
  }

  /** One statement; `input`, COPY's input, is handed to the database's thread (its buffer is not usable after). */
  async query<Row>(sql: string, parameters: readonly unknown[] = [], input?: Uint8Array): Promise<EmbeddedResult<Row>> {
    const blob =
      input && input.byteOffset === 0 && input.byteLength === input.buffer.byteLength
        ? (input.buffer as ArrayBuffer)
        : input?.slice().buffer
    const reply = await this.#send({ id: 0, op: 'query', sql, parameters: [...parameters], ...(blob ? { blob } : {}) })
    if (!reply.ok) throw new Error('unreachable')
    return {
      rows: (reply.rows ?? []) as Row[],
      affectedRows: reply.affectedRows ?? 0,
      ...(reply.command ? { command: reply.command } : {}),
      ...(reply.blob ? { blob: new Blob([reply.blob]) } : {}),
    }
  }

  async close(): Promise<void> {
    if (this.#failed) return
    await this.#send({ id: 0, op: 'close' })
    // Idle, the thread is unreferenced: referenced again, its end keeps the process alive until it has ended.
    this.#worker.ref()
    await this.#worker.terminate()
  }

  #send(request: WorkerRequest): Promise<WorkerReply> {
    if (this.#failed) return Promise.reject(this.#failed)
    const id = this.#nextId++
    const message = { ...request, id }
    return new Promise<WorkerReply>((resolve, reject) => {
      this.#pending.set(id, {
        resolve: (reply) => (reply.ok ? resolve(reply) : reject(new EmbeddedDatabaseError(reply.error))),
        reject,
      })
      this.#worker.ref()
      const transfer = message.op === 'query' && message.blob ? [message.blob] : []
      this.#worker.postMessage(message, transfer)
    })
  }
}
