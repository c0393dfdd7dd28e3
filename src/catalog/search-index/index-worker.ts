import { type MessagePort, parentPort, workerData } from 'node:worker_threads'
import type { ReadQuery } from '../../db/database.js'
import { kindByPath, kinds } from '../kinds/kinds.js'
import type { FilterValues, SearchRequest } from '../search/search-query.js'
import type { IndexedSearch } from './conditions.js'
import { glassListingReader } from './glass-listing-reader.js'
import type { IndexClient, IndexDatabase } from './index-database.js'
import {
  crossedError,
  crossingLogger,
  type DatabaseAsk,
  type FromIndex,
  type FromReplicaToIndex,
  type IndexCall,
  type ToIndex,
  type ToReplicaFromIndex,
  uncrossedError,
} from './index-protocol.js'
import type { IndexThreadOptions } from './index-thread.js'
import { type KindVersions, readVersions } from './kind-versions.js'
import { Publisher } from './replica.js'
import { SearchIndex } from './search-index.js'

/*
 * The search index's own thread (index-thread.ts explains why): holds the index, loads it, and answers what the
 * service's thread asks. Its database is the service's, reached by messages: each statement and each slice of
 * COPY's output crosses, so a load reads in one snapshot exactly as it would on the service's thread.
 */

const port = parentPort
if (!port) throw new Error('index-worker.ts runs as a worker thread')
const options: IndexThreadOptions = workerData

let nextAsk = 1
const asked = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>()
const post = (message: FromIndex) => port.postMessage(message)

function ask(question: DatabaseAsk): Promise<unknown> {
  const id = nextAsk++
  return new Promise((resolve, reject) => {
    asked.set(id, { resolve, reject })
    post({ type: 'db', id, ...question })
  })
}

const readQuery: ReadQuery = async <Row>(text: string, parameters?: readonly unknown[]) =>
  (await ask({ op: 'read', text, parameters: parameters ?? [] })) as Row[]

/**
 * The versions the service's thread read for the latest question (after it arrived, so at least as new as any
 * earlier question's): what the index compares what it holds with.
 */
let latestVersions: Map<string, KindVersions> | undefined

const database: IndexDatabase = {
  driver: options.driver,
  readQuery,
  currentVersions: async () => latestVersions ?? (await readVersions(readQuery)),
  async rawTransaction(fn, transactionOptions) {
    const tx = (await ask({ op: 'begin', read: transactionOptions?.read === true })) as number
    const client: IndexClient = {
      query: async <Row>(text: string, parameters?: readonly unknown[]) =>
        (await ask({ op: 'query', tx, text, parameters: parameters ?? [] })) as Row[],
      async *copyOut(query) {
        const copy = (await ask({ op: 'copy', tx, query })) as number
        let done = false
        try {
          while (!done) {
            const slice = (await ask({ op: 'copy-next', copy })) as { text: string; done: boolean }
            done = slice.done
            if (slice.text !== '') yield slice.text
          }
        } finally {
          if (!done) await ask({ op: 'copy-close', copy }).catch(() => {})
        }
      },
    }
    let result: Awaited<ReturnType<typeof fn>>
    try {
      result = await fn(client)
    } catch (error) {
      await ask({ op: 'end', tx, commit: false }).catch(() => {})
      throw error
    }
    await ask({ op: 'end', tx, commit: true })
    return result
  },
}

const log = crossingLogger(post)

let hold = options.holdFirstReadMs ?? 0

// The search threads beside this one (search-threads.ts): each kind's tables are published to them as they change.
// A thread started again in place of one that stopped gets a channel of its own (`search-thread`), and everything.
const replicaPorts: MessagePort[] = [...(options.replicaPorts ?? [])]
const publishers = replicaPorts.map(() => new Publisher())
const published = new Map<string, IndexedSearch>()
/** The tables of each kind whose warm-up is done: what was built of them is given to a thread that starts. */
const warmed = new Map<string, IndexedSearch>()
/** Per search thread, whether it was given the database's normal forms (`norm`), once probed. */
const normSent = replicaPorts.map(() => false)

function publish(kind: string, tables: IndexedSearch, only?: number): void {
  const probed = index.probedNorm
  replicaPorts.forEach((replicaPort, at) => {
    if (only !== undefined && at !== only) return
    const publisher = publishers[at] as Publisher
    try {
      if (probed && !normSent[at]) {
        replicaPort.postMessage({ type: 'norm', ...probed.probe } satisfies ToReplicaFromIndex)
        normSent[at] = true
      }
      replicaPort.postMessage({
        type: 'tables',
        ...publisher.publish(kind, tables),
      } satisfies ToReplicaFromIndex)
    } catch (error) {
      // The thread keeps what it held (older versions: nothing is asked of it for this kind) until a later publication.
      publisher.forget(kind)
      log.warn({ err: error, kind }, 'search index: tables not published to a search thread')
    }
  })
}

function giveBuilt(kind: string, tables: IndexedSearch, only?: number): void {
  replicaPorts.forEach((replicaPort, at) => {
    if (only !== undefined && at !== only) return
    const built = (publishers[at] as Publisher).built(kind, tables)
    try {
      if (built) replicaPort.postMessage({ type: 'built', ...built } satisfies ToReplicaFromIndex)
    } catch (error) {
      log.warn({ err: error, kind }, 'search index: what was built not published to a search thread')
    }
  })
}

function listen(at: number): void {
  ;(replicaPorts[at] as MessagePort).on('message', (message: FromReplicaToIndex) => {
    ;(publishers[at] as Publisher).forget(message.kind)
    const tables = published.get(message.kind)
    if (tables) publish(message.kind, tables, at)
  })
}
for (let at = 0; at < replicaPorts.length; at++) listen(at)

/** A search thread started in place of the one at `at`: every kind held is published to it whole. */
function replaceSearchThread(at: number, replicaPort: MessagePort): void {
  replicaPorts[at]?.close()
  replicaPorts[at] = replicaPort
  publishers[at] = new Publisher()
  normSent[at] = false
  listen(at)
  for (const [kind, tables] of published) {
    publish(kind, tables, at)
    if (warmed.get(kind) === tables) giveBuilt(kind, tables, at)
  }
}

const index = new SearchIndex(database, log, {
  enabled: true,
  timezone: options.timezone,
  kinds,
  listing: options.listingKind ? glassListingReader(options.listingKind) : undefined,
  snapshotDir: options.snapshotDir,
  onTables: (kind, tables) => {
    if (replicaPorts.length === 0) return
    published.set(kind.path, tables)
    publish(kind.path, tables)
  },
  onWarmed: (kind, tables) => {
    if (replicaPorts.length === 0) return
    warmed.set(kind.path, tables)
    giveBuilt(kind.path, tables)
  },
  onLoad: ({ kind, phase }) => {
    post({ type: 'load', kind, phase, kindsLoaded: index.status.kindsLoaded })
    if (phase === 'reading' && hold > 0) {
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, hold)
      hold = 0
    }
  },
})

function kindOf(path: string) {
  const kind = kindByPath.get(path)
  if (!kind) throw new Error(`no kind '${path}'`)
  return kind
}

async function answer(call: IndexCall): Promise<unknown> {
  switch (call.method) {
    case 'search':
      return index.search(kindOf(call.kind), call.request as SearchRequest)
    case 'facets':
      return index.facets(kindOf(call.kind), call.byPriceList, call.filters as FilterValues, call.exact)
    case 'listing':
      return index.listing(call.request)
    case 'suggestions': {
      const kind = kindOf(call.kind)
      const field = kind.valueFields.find((candidate) => candidate.name === call.field)
      if (!field) return undefined
      return index.suggestions(kind, field, call.byPriceList, call.query, call.limit)
    }
    case 'catchUp':
      return index.catchUp()
    case 'close':
      return index.close()
  }
}

port.on('message', (message: ToIndex) => {
  if (message.type === 'db-reply') {
    const waiting = asked.get(message.id)
    asked.delete(message.id)
    if (message.error) waiting?.reject(uncrossedError(message.error))
    else waiting?.resolve(message.result)
    return
  }
  if (message.type === 'search-thread') {
    replaceSearchThread(message.at, message.port)
    return
  }
  const { id } = message
  if (message.versions) latestVersions = message.versions
  answer(message).then(
    (result) => post({ type: 'reply', id, result, loads: { ...index.loads } }),
    (error: unknown) => post({ type: 'reply', id, error: crossedError(error), loads: { ...index.loads } }),
  )
})
