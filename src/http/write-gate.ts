import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { requestSignal } from './request-timeout.js'

/*
 * Writes never take the connection pool hostage. A write waiting on row locks (a PUT on entries a bulk change
 * holds, say) keeps its connection for as long as it waits; thirty of them used to fill the pool, and reads then
 * got `503 database unavailable` after the pool's wait. So the routes that write (`config.writesCatalog`) run at
 * most half the primary pool's connections at a time; the others queue here, in the service, holding nothing,
 * until a slot frees or their request's deadline answers them (503 at `REQUEST_TIMEOUT_MS`). Reads always have the
 * other half. The embedded database has one connection, which everything shares in turn anyway: one slot.
 */

/** A counting semaphore whose waits end when a signal aborts. */
export class Semaphore {
  #free: number
  readonly #waiting: (() => void)[] = []

  constructor(readonly size: number) {
    this.#free = size
  }

  /** Waiting callers now. */
  get waiting(): number {
    return this.#waiting.length
  }

  /** Resolves with the release of a slot once one is free; rejects with the signal's reason if it aborts first. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted()
    if (this.#free > 0) {
      this.#free--
      return this.#releaser()
    }
    await new Promise<void>((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = () => {
        const index = this.#waiting.indexOf(grant)
        if (index !== -1) this.#waiting.splice(index, 1)
        reject(signal?.reason)
      }
      this.#waiting.push(grant)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
    return this.#releaser()
  }

  #releaser(): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      const next = this.#waiting.shift()
      if (next) next()
      else this.#free++
    }
  }
}

/**
 * Puts every write route behind the write slots (half the primary pool, at least one). Register before the
 * request deadline (request-timeout.ts), whose handler wrapper must be the outer one so the wait counts as handling.
 */
export function registerWriteGate(app: FastifyInstance): Semaphore {
  const primary = app.db.poolStats().find((pool) => pool.pool === 'primary')
  const slots = new Semaphore(Math.max(1, Math.floor((primary?.max ?? 2) / 2)))
  app.addHook('onRoute', (route) => {
    if (!(route.config as { writesCatalog?: boolean } | undefined)?.writesCatalog) return
    const handler = route.handler as RouteHandlerMethod
    route.handler = async function writeSlotHandler(
      this: FastifyInstance,
      request: FastifyRequest,
      reply: FastifyReply,
    ) {
      const release = await slots.acquire(requestSignal(request))
      try {
        return await handler.call(this, request, reply)
      } finally {
        release()
      }
    } as RouteHandlerMethod
  })
  return slots
}
