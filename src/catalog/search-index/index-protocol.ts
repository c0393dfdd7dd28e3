import type { MessagePort } from 'node:worker_threads'
import type { FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import type { Text } from '../../domain/messages.js'
import { ProblemError } from '../../http/problem.js'
import type { IndexedListing } from './glass-listing.js'
import type { KindVersions } from './kind-versions.js'
import type { PublishedBuilt, PublishedKind } from './replica.js'
import type { SearchIndexLoads } from './service-types.js'

/*
 * The messages between the service's thread and the search index's own thread (index-thread.ts, index-worker.ts).
 * Everything crosses by structured clone: plain objects, arrays, Maps, strings and numbers; a kind crosses as its
 * path, a field as its name.
 */

/** The index's answers, as the service's thread asks for them. */
export type IndexCall =
  | { readonly method: 'search'; readonly kind: string; readonly request: unknown }
  | {
      readonly method: 'facets'
      readonly kind: string
      readonly byPriceList: boolean
      readonly filters: unknown
      readonly exact: readonly string[] | undefined
    }
  | { readonly method: 'listing'; readonly request: IndexedListing & { readonly timezone: string } }
  | {
      readonly method: 'suggestions'
      readonly kind: string
      readonly field: string
      readonly byPriceList: boolean
      readonly query: string
      readonly limit: number
    }
  | { readonly method: 'catchUp' }
  | { readonly method: 'close' }

/** The service's thread to the index's. */
export type ToIndex =
  | ({
      readonly type: 'call'
      readonly id: number
      /**
       * The kinds' versions, read by the service's thread after the request arrived (a question's; a load reads its
       * own): the index answers only if it holds them (or newer), as if it had read them itself.
       */
      readonly versions?: Map<string, KindVersions>
    } & IndexCall)
  | { readonly type: 'db-reply'; readonly id: number; readonly result?: unknown; readonly error?: CrossedError }
  /** A search thread started again in place of one that stopped: its channel, to publish every kind to whole. */
  | { readonly type: 'search-thread'; readonly at: number; readonly port: MessagePort }

/** What the index's thread asks of the database, through the service's thread. */
export type DatabaseAsk =
  | { readonly op: 'begin'; readonly read: boolean }
  | { readonly op: 'query'; readonly tx: number; readonly text: string; readonly parameters: readonly unknown[] }
  | { readonly op: 'copy'; readonly tx: number; readonly query: string }
  | { readonly op: 'copy-next'; readonly copy: number }
  | { readonly op: 'copy-close'; readonly copy: number }
  | { readonly op: 'end'; readonly tx: number; readonly commit: boolean }
  | { readonly op: 'read'; readonly text: string; readonly parameters: readonly unknown[] }

/** The index's thread to the service's. */
export type FromIndex =
  | {
      readonly type: 'reply'
      readonly id: number
      readonly result?: unknown
      readonly error?: CrossedError
      readonly loads: SearchIndexLoads
    }
  | ({ readonly type: 'db'; readonly id: number } & DatabaseAsk)
  | { readonly type: 'load'; readonly kind: string; readonly phase: 'reading' | 'done'; readonly kindsLoaded: number }
  | { readonly type: 'log'; readonly line: string }

/** The service's thread to a search thread (replica-worker.ts): a question, with the versions its kind must show. */
export interface ToReplica {
  readonly type: 'call'
  readonly id: number
  readonly call: IndexCall
  readonly wanted: KindVersions
}

/** A search thread to the service's. */
export type FromReplica =
  /** `behind`: the thread holds older tables, or the question needs the database: the index's thread answers. */
  | {
      readonly type: 'reply'
      readonly id: number
      readonly result?: unknown
      readonly error?: CrossedError
      readonly behind?: true
    }
  /** The kind's tables it holds now (none: it dropped them, and waits for them whole). */
  | {
      readonly type: 'installed'
      readonly kind: string
      readonly held?: { readonly matviewVersion: number; readonly dataGeneration: number }
    }
  | { readonly type: 'log'; readonly line: string }

/** The index's thread to a search thread, on a channel of their own: the tables, and how to normalise text. */
export type ToReplicaFromIndex =
  | ({ readonly type: 'tables' } & PublishedKind)
  | ({ readonly type: 'built' } & PublishedBuilt)
  | { readonly type: 'norm'; readonly characters: readonly string[]; readonly answers: readonly string[] }

/** A search thread to the index's: it lost a kind's tables (a publication it could not install), send them whole. */
export interface FromReplicaToIndex {
  readonly type: 'resend'
  readonly kind: string
}

/**
 * A thread's logger: every line crosses to the service's thread (`post` a `log` message), whose logger writes it as
 * its own at the level it is set to now.
 */
export function crossingLogger(
  post: (message: { readonly type: 'log'; readonly line: string }) => void,
): FastifyBaseLogger {
  return pino(
    { level: 'trace', base: undefined, timestamp: false },
    { write: (line: string) => post({ type: 'log', line }) },
  )
}

/**
 * An error as it crosses: its message, the SQLSTATE `code` where the database gave one, and a refusal's problem
 * (a request the index finds invalid is refused as it would be on the service's thread), its texts still messages
 * (key and values, plain data) that the problem handler puts into the request's language.
 */
export interface CrossedError {
  readonly message: string
  readonly problem?: { readonly status: number; readonly detail: Text; readonly extra: ProblemError['extra'] }
  readonly name?: string
  readonly code?: string
  readonly stack?: string
}

export function crossedError(error: unknown): CrossedError {
  if (!(error instanceof Error)) return { message: String(error) }
  if (error instanceof ProblemError) {
    return { message: error.message, problem: { status: error.status, detail: error.detail, extra: error.extra } }
  }
  const code = 'code' in error ? error.code : undefined
  return {
    message: error.message,
    name: error.name,
    ...(typeof code === 'string' ? { code } : {}),
    ...(error.stack ? { stack: error.stack } : {}),
  }
}

/** The error again, on the receiving side. */
export function uncrossedError(crossed: CrossedError): Error {
  if (crossed.problem) return new ProblemError(crossed.problem.status, crossed.problem.detail, crossed.problem.extra)
  const error = new Error(crossed.message)
  if (crossed.name) error.name = crossed.name
  if (crossed.code) Object.assign(error, { code: crossed.code })
  if (crossed.stack) error.stack = crossed.stack
  return error
}
