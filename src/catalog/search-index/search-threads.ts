import { MessageChannel, type MessagePort, type Worker } from 'node:worker_threads'
import type { FastifyBaseLogger } from 'fastify'
import { startModuleWorker } from '../../domain/module-worker.js'
import { type FromReplica, type IndexCall, type ToReplica, uncrossedError } from './index-protocol.js'
import type { KindVersions } from './kind-versions.js'
import type { ReplicaThreadOptions } from './replica-worker.js'

/*
 * The search threads beside the index's own (SEARCH_THREADS; replica.ts, replica-worker.ts), as the service's thread
 * sees them: which kinds' tables each holds, at which versions, and how many questions each has in hand. A question
 * goes to the least busy thread that holds its kind at the versions it must read; the index's thread answers what
 * none holds yet.
 */

/** A search thread's answer: `behind` where it could not answer (the index's thread then does). */
export type ThreadAnswer = { readonly behind: true } | { readonly behind: false; readonly result: unknown }

class SearchThread {
  readonly worker: Worker
  /** Per kind, the versions of the tables it holds. */
  readonly held = new Map<string, { readonly matviewVersion: number; readonly dataGeneration: number }>()
  readonly pending = new Map<number, { resolve: (answer: ThreadAnswer) => void; reject: (error: Error) => void }>()
  failed = false

  constructor(worker: Worker) {
    this.worker = worker
  }

  holds(kind: string, wanted: KindVersions): boolean {
    const held = this.held.get(kind)
    return (
      !this.failed &&
      !!held &&
      held.matviewVersion >= wanted.matviewVersion &&
      held.dataGeneration >= wanted.dataGeneration
    )
  }
}

/**
 * How long a stopped search thread waits to start again: the first wait after a stop, the next one after each
 * further stop in a row, the last one from then on.
 */
const RESTART_WAITS_MS = [1_000, 5_000, 30_000, 120_000]

/** A thread that ran this long without stopping starts its next restart from the first wait again. */
const RAN_WELL_MS = 60_000

/**
 * The young generation of the index's thread and of each search thread (a V8 semi-space of 8 MiB). Left to itself,
 * V8 grows it while a load or a restore keeps much of what it allocates, up to 128 MiB a thread, and keeps it so
 * afterwards: at a million SKUs, restored, the index's thread held 128 MiB of young generation with 2 MiB in use.
 * Their answers allocate little (scratch.ts), so a small one costs no measured throughput.
 */
export const searchThreadLimits = { maxYoungGenerationSizeMb: 24 }

export class SearchThreads {
  readonly #threads: SearchThread[] = []
  /** The index's ends of the threads' channels, as first started (for index-worker.ts to publish through). */
  readonly ports: MessagePort[] = []
  readonly #options: Omit<ReplicaThreadOptions, 'port'>
  readonly #log: FastifyBaseLogger
  /** Hands the index's thread the channel to a thread started again at `at` (its `search-thread` message). */
  readonly #restarted: (at: number, port: MessagePort) => void
  /** Per thread: its stops in a row, and when it last started. */
  readonly #stops: { inRow: number; started: number }[] = []
  #closed = false
  #nextId = 1

  /**
   * Starts `count` search threads; `restarted`: how a thread started again in place of one that stopped is given
   * to the index's thread.
   */
  constructor(
    count: number,
    options: Omit<ReplicaThreadOptions, 'port'>,
    log: FastifyBaseLogger,
    restarted: (at: number, port: MessagePort) => void,
  ) {
    this.#options = options
    this.#log = log
    this.#restarted = restarted
    for (let at = 0; at < count; at++) {
      this.#stops.push({ inRow: 0, started: Date.now() })
      this.ports.push(this.#start(at))
    }
  }

  /** Starts the thread at `at`; returns the index's end of its channel. */
  #start(at: number): MessagePort {
    const { port1, port2 } = new MessageChannel()
    const worker = startModuleWorker(import.meta.url, 'replica-worker', {
      workerData: { ...this.#options, port: port2 } satisfies ReplicaThreadOptions,
      transferList: [port2],
      resourceLimits: searchThreadLimits,
    })
    worker.unref()
    const thread = new SearchThread(worker)
    worker.on('message', (message: FromReplica) => this.#received(thread, message))
    worker.on('error', (error) => this.#fail(thread, at, error))
    worker.on('exit', (code) => this.#fail(thread, at, new Error(`a search thread exited (code ${code})`)))
    this.#threads[at] = thread
    ;(this.#stops[at] as { started: number }).started = Date.now()
    return port1
  }

  /** Stops the thread at `at` as a failure would (its share goes to the index's thread until it is started again). */
  async stop(at: number): Promise<void> {
    await this.#threads[at]?.worker.terminate()
  }

  /** How many search threads run now (a stopped one is not counted until it is started again). */
  get running(): number {
    return this.#threads.filter((thread) => !thread.failed).length
  }

  /**
   * The least busy search thread holding the kind at `wanted`, if it has no more questions in hand than `indexBusy`
   * (the index's thread's, which also loads); else undefined (the index's thread answers).
   */
  pick(kind: string, wanted: KindVersions, indexBusy: number): SearchThread | undefined {
    let best: SearchThread | undefined
    for (const thread of this.#threads) {
      if (!thread.holds(kind, wanted)) continue
      if (!best || thread.pending.size < best.pending.size) best = thread
    }
    return best && best.pending.size <= indexBusy ? best : undefined
  }

  ask(thread: SearchThread, call: IndexCall, wanted: KindVersions): Promise<ThreadAnswer> {
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      thread.pending.set(id, { resolve, reject })
      thread.worker.postMessage({ type: 'call', id, call, wanted } satisfies ToReplica)
    })
  }

  /** Each running search thread's used heap, in bytes, by name (`search-1`, …). */
  async heaps(): Promise<Record<string, number>> {
    const heaps: Record<string, number> = {}
    await Promise.all(
      this.#threads.map(async (thread, at) => {
        if (thread.failed) return
        const used = await usedHeap(thread.worker)
        if (used !== undefined) heaps[`search-${at + 1}`] = used
      }),
    )
    return heaps
  }

  async close(): Promise<void> {
    this.#closed = true
    await Promise.all(
      this.#threads.map(async (thread) => {
        thread.failed = true
        this.#release(thread)
        await thread.worker.terminate()
      }),
    )
  }

  #received(thread: SearchThread, message: FromReplica): void {
    switch (message.type) {
      case 'reply': {
        const waiting = thread.pending.get(message.id)
        thread.pending.delete(message.id)
        if (message.error) waiting?.reject(uncrossedError(message.error))
        else if (message.behind) waiting?.resolve({ behind: true })
        else waiting?.resolve({ behind: false, result: message.result })
        return
      }
      case 'installed':
        if (message.held) thread.held.set(message.kind, message.held)
        else thread.held.delete(message.kind)
        return
      case 'log':
        logLine(this.#log, message.line)
        return
    }
  }

  #fail(thread: SearchThread, at: number, error: Error): void {
    if (thread.failed) return
    thread.failed = true
    this.#release(thread)
    if (this.#closed) return
    const stops = this.#stops[at] as { inRow: number; started: number }
    if (Date.now() - stops.started >= RAN_WELL_MS) stops.inRow = 0
    const wait = RESTART_WAITS_MS[Math.min(stops.inRow, RESTART_WAITS_MS.length - 1)] as number
    stops.inRow++
    this.#log.error(
      { err: error, thread: `search-${at + 1}`, restartInMs: wait },
      "search index: a search thread stopped; the index's thread answers its share until it is started again",
    )
    setTimeout(() => {
      if (this.#closed || this.#threads[at] !== thread) return
      this.#restarted(at, this.#start(at))
    }, wait).unref()
  }

  /** Questions in hand of a stopped thread go to the index's thread. */
  #release(thread: SearchThread): void {
    for (const waiting of thread.pending.values()) waiting.resolve({ behind: true })
    thread.pending.clear()
    thread.held.clear()
  }
}

const levelNames: Record<number, 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal'> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
}

/** A line another thread's logger wrote, written as the service's own at the level it is set to now. */
export function logLine(log: FastifyBaseLogger, line: string): void {
  try {
    const { level, msg, ...fields } = JSON.parse(line) as { level: number; msg?: string } & Record<string, unknown>
    log[levelNames[level] ?? 'info'](fields, msg ?? '')
  } catch {
    log.info(line)
  }
}

/** A worker's used JavaScript heap, in bytes; undefined where it is not running (or Node.js cannot tell). */
export async function usedHeap(worker: Worker): Promise<number | undefined> {
  try {
    return (await worker.getHeapStatistics()).used_heap_size
  } catch {
    return undefined
  }
}
