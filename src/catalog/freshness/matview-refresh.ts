import type { FastifyInstance } from 'fastify'
import { type Kysely, sql } from 'kysely'
import { tryLockForTransaction } from '../../db/advisory-lock.js'
import { outsideRequest } from '../../db/request-work.js'
import type { Tables } from '../../db/tables.js'
import type { Kind } from '../kinds/kind.js'
import { kinds as allKinds } from '../kinds/kinds.js'
import { refreshMatview } from './catalog-repository.js'
import { readCatalogStates } from './catalog-state.js'

/*
 * Keeps every kind's matview fresh in the background. Writes mark a kind stale in the database (catalog-state.ts);
 * this loop notices (at once after a local write, and by polling for other instances' and tools' writes), waits
 * a moment so a burst of writes costs one refresh, and refreshes CONCURRENTLY, so searches keep reading the old
 * matview meanwhile. Across instances one kind is refreshed by one of them at a time (advisory lock); the others
 * see it fresh afterwards. If the data moved during a refresh, another follows.
 *
 * On the embedded database a refresh holds the one connection, so other queries wait for it.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route writes a price list or nomenclature: the refresher looks for stale matviews right after it. */
    writesCatalog?: boolean
  }
}

export interface RefreshEvent {
  readonly kind: Kind
  /** `performance.now()` after the lock was taken, and after the refresh, before its transaction commits. */
  readonly startedAt: number
  readonly finishedAt: number
}

export interface MatviewRefresherOptions {
  readonly kinds?: readonly Kind[]
  /** How long to wait after noticing a stale kind before refreshing it (coalesces a burst of writes). */
  readonly delayMs: number
  /** How often to look at the catalog state for writes this process did not make. */
  readonly pollMs?: number
  readonly log?: { warn(object: object, message: string): void; debug(object: object, message: string): void }
  /** Called after each refresh, while the lock is still held (observability; tests check exclusivity with it). */
  readonly onRefreshed?: (event: RefreshEvent) => void
}

const LOCK_PURPOSE = 'optics.matview-refresh'
const MAX_BACKOFF_MS = 60_000

interface KindSlot {
  timer?: NodeJS.Timeout
  running?: Promise<void>
  failures: number
  retryAt: number
}

/** The background refresher of one process. `start()` once, `poke()` after local writes, `stop()` on close. */
export class MatviewRefresher {
  readonly #db: Kysely<Tables>
  readonly #options: MatviewRefresherOptions
  readonly #kinds: readonly Kind[]
  readonly #slots = new Map<string, KindSlot>()
  #poll?: NodeJS.Timeout
  #checking?: Promise<void>
  #checkAgain = false
  #stopped = true

  constructor(db: Kysely<Tables>, options: MatviewRefresherOptions) {
    this.#db = db
    this.#options = options
    this.#kinds = options.kinds ?? allKinds
    for (const kind of this.#kinds) this.#slots.set(kind.path, { failures: 0, retryAt: 0 })
  }

  /** Starts polling and looks for stale kinds at once. */
  start(): void {
    if (!this.#stopped) return
    this.#stopped = false
    this.#poll = setInterval(() => this.poke(), this.#options.pollMs ?? 1000)
    this.#poll.unref()
    this.poke()
  }

  /** Looks at the catalog state now (after a local write); cheap, and coalesced with a look already under way. */
  poke(): void {
    if (this.#stopped) return
    if (this.#checking) {
      this.#checkAgain = true
      return
    }
    this.#checking = this.#check().finally(() => {
      this.#checking = undefined
      if (this.#checkAgain) {
        this.#checkAgain = false
        this.poke()
      }
    })
  }

  /** Stops polling, cancels scheduled refreshes and waits for the ones under way. */
  async stop(): Promise<void> {
    this.#stopped = true
    clearInterval(this.#poll)
    for (const slot of this.#slots.values()) clearTimeout(slot.timer)
    await this.#checking
    await Promise.all([...this.#slots.values()].map((slot) => slot.running))
  }

  async #check(): Promise<void> {
    let states: Awaited<ReturnType<typeof readCatalogStates>>
    try {
      states = await readCatalogStates(this.#db)
    } catch (error) {
      this.#options.log?.debug({ err: error }, 'matview refresh: catalog state unreadable')
      return
    }
    const now = Date.now()
    for (const state of states) {
      const slot = this.#slots.get(state.kind)
      const kind = this.#kinds.find((candidate) => candidate.path === state.kind)
      if (!slot || !kind || !state.stale || slot.timer || slot.running || this.#stopped) continue
      const delay = Math.max(this.#options.delayMs, slot.retryAt - now)
      slot.timer = setTimeout(() => this.#run(kind, slot), delay)
      slot.timer.unref()
    }
  }

  #run(kind: Kind, slot: KindSlot): void {
    slot.timer = undefined
    if (this.#stopped) return
    slot.running = this.#refresh(kind)
      .then((outcome) => {
        slot.failures = 0
        // Another instance is refreshing this kind: look again when it should be done, not sooner.
        slot.retryAt = outcome === 'busy' ? Date.now() + (this.#options.pollMs ?? 1000) : 0
      })
      .catch((error: unknown) => {
        slot.failures += 1
        slot.retryAt = Date.now() + Math.min(MAX_BACKOFF_MS, 1000 * 2 ** slot.failures)
        this.#options.log?.warn({ err: error, kind: kind.path }, 'matview refresh failed; will retry')
      })
      .finally(() => {
        slot.running = undefined
        // The data may have moved during the refresh: look again (schedules another refresh if so).
        this.poke()
      })
  }

  /** One refresh of one kind, unless another instance holds the kind's lock or made it fresh meanwhile. */
  async #refresh(kind: Kind): Promise<'refreshed' | 'busy' | 'fresh'> {
    return this.#db.transaction().execute(async (trx) => {
      if (!(await tryLockForTransaction(trx, LOCK_PURPOSE, kind.matview))) return 'busy'
      const state = (await readCatalogStates(trx)).find((candidate) => candidate.kind === kind.path)
      if (!state?.stale) return 'fresh'
      // A large kind may take longer to refresh than the service's statement timeout allows a request.
      await sql`SET LOCAL statement_timeout = 0`.execute(trx)
      const startedAt = performance.now()
      await refreshMatview(trx, kind, { concurrently: true })
      const finishedAt = performance.now()
      this.#options.log?.debug({ kind: kind.path, ms: Math.round(finishedAt - startedAt) }, 'matview refreshed')
      this.#options.onRefreshed?.({ kind, startedAt, finishedAt })
      return 'refreshed'
    })
  }
}

/**
 * Runs the refresher with the application: started when the app is ready, stopped when it closes, poked after
 * every successful request of a route marked `config: { writesCatalog: true }`. Does nothing when
 * `MATVIEW_REFRESH=off`. Call before registering the routes, so the hook covers them. `onRefreshed` sees every
 * refresh this instance makes (metrics).
 */
export function registerMatviewRefresh(
  app: FastifyInstance,
  options: Pick<MatviewRefresherOptions, 'onRefreshed'> = {},
): void {
  if (app.config.matviewRefresh === 'off') return
  const refresher = new MatviewRefresher(app.db.primary, {
    delayMs: app.config.matviewRefreshDelayMs,
    log: app.log,
    ...options,
  })
  app.addHook('onReady', async () => refresher.start())
  app.addHook('onClose', async () => refresher.stop())
  app.addHook('onResponse', async (request, reply) => {
    // Background work: not the request's (whose database work ends with it).
    if (request.routeOptions.config?.writesCatalog && reply.statusCode < 400) outsideRequest(() => refresher.poke())
  })
}
