import { type MessagePort, parentPort, workerData } from 'node:worker_threads'
import { kinds } from '../kinds/kinds.js'
import type { IndexedSearch } from './conditions.js'
import { glassListingReader } from './glass-listing-reader.js'
import {
  crossedError,
  crossingLogger,
  type FromReplica,
  type FromReplicaToIndex,
  type ToReplica,
  type ToReplicaFromIndex,
} from './index-protocol.js'
import { computeAnswer, holdsVersions, localNormOf, questionOfCall, textsToNormalise } from './questions.js'
import { ReplicaTables } from './replica.js'
import { ProbedNorm } from './text.js'
import { warmTablesAnswering } from './warm-up.js'

/*
 * A search thread (SEARCH_THREADS, replica.ts): answers the questions the service's thread routes to it from the
 * tables the index's thread publishes to it. It reads no database: a question it cannot answer from what it holds
 * (older tables, a text only the database normalises) goes back to be answered by the index's thread.
 */

/** What a search thread is given at its start. */
export interface ReplicaThreadOptions {
  readonly timezone: string
  readonly listingKind?: string | undefined
  /** Its channel to the index's thread. */
  readonly port: MessagePort
}

const parent = parentPort
if (!parent) throw new Error('replica-worker.ts runs as a worker thread')
const options: ReplicaThreadOptions = workerData
const post = (message: FromReplica) => parent.postMessage(message)
const log = crossingLogger(post)

const replica = new ReplicaTables(kinds)
const context = { kinds: new Map(kinds.map((kind) => [kind.path, kind])), ...options }
let localNorm = localNormOf(undefined)
const listingReader = options.listingKind ? glassListingReader(options.listingKind) : undefined

/**
 * Kinds read or restored in full, warmed once the index's thread has warmed them and given what it built (so no
 * warm-up slows the first load, and what it built is one copy): this thread builds only what is left.
 */
const toWarm = new Map<string, IndexedSearch>()
let warming = false

async function warm(): Promise<void> {
  if (warming || replica.kindsHeld < kinds.length) return
  warming = true
  try {
    for (const [path, tables] of toWarm) {
      toWarm.delete(path)
      const kind = context.kinds.get(path)
      if (!kind) continue
      const reader = listingReader?.kind === path ? listingReader : undefined
      await warmTablesAnswering(kind, tables, reader, () => replica.tables(path) === tables)
    }
  } catch (error) {
    log.warn({ err: error }, 'search thread: a warm-up failed')
  } finally {
    warming = false
  }
  if (toWarm.size > 0) void warm()
}

options.port.on('message', (message: ToReplicaFromIndex) => {
  if (message.type === 'norm') {
    localNorm = localNormOf(new ProbedNorm(message.characters, message.answers))
    return
  }
  if (message.type === 'built') {
    try {
      const tables = replica.adoptBuilt(message)
      if (tables) {
        toWarm.set(message.kind, tables)
        void warm()
      }
    } catch (error) {
      log.warn({ err: error, kind: message.kind }, 'search thread: what the index built not taken')
    }
    return
  }
  try {
    const tables = replica.install(message)
    post({
      type: 'installed',
      kind: message.kind,
      held: { matviewVersion: tables.matview.matviewVersion, dataGeneration: tables.prices.dataGeneration },
    })
    toWarm.delete(message.kind)
  } catch (error) {
    log.warn({ err: error, kind: message.kind }, 'search thread: tables not installed; asking for them whole')
    post({ type: 'installed', kind: message.kind })
    options.port.postMessage({ type: 'resend', kind: message.kind } satisfies FromReplicaToIndex)
  }
})

parent.on('message', (message: ToReplica) => {
  const { id } = message
  try {
    const question = questionOfCall(message.call, context)
    if (!question) {
      post({ type: 'reply', id })
      return
    }
    const tables = replica.tables(question.kind.path)
    if (
      !tables ||
      !holdsVersions(tables, message.wanted, question.reads) ||
      textsToNormalise(question, localNorm).size > 0
    ) {
      post({ type: 'reply', id, behind: true })
      return
    }
    const result = computeAnswer(question, tables, (text) => localNorm(text) as string)
    post({ type: 'reply', id, result })
  } catch (error) {
    post({ type: 'reply', id, error: crossedError(error) })
  }
})
