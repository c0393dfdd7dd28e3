import { AsyncLocalStorage } from 'node:async_hooks'
import { finished } from 'node:stream'

/*
 * A request's database work ends with the request. The HTTP layer runs each request inside a scope holding its
 * AbortSignal (http/request-timeout.ts); every connection lent while that scope is active is guarded: once the
 * signal aborts (the request timed out and was answered, or its client left), a statement still running is
 * cancelled on the server, and every further statement of that work, COMMIT included, is refused, so its
 * transaction rolls back and nothing is committed after the answer. Only ROLLBACK still passes.
 *
 * Work shared between requests (the search index's loads, the background matview refresher, a count several
 * requests wait for) must not die with the request that happened to start it: it runs {@link outsideRequest}.
 */

const scope = new AsyncLocalStorage<AbortSignal>()

/** The request's work was abandoned: its answer is given (or nobody waits for it). Carries the signal's reason. */
export class WorkAbandonedError extends Error {
  override name = 'WorkAbandonedError'
  constructor(readonly reason: unknown) {
    super('the request was abandoned; its database work is cancelled')
  }
}

/** Runs `fn` (and everything it starts) as the work of a request that `signal` abandons. */
export function runAsRequestWork<T>(signal: AbortSignal, fn: () => T): T {
  return scope.run(signal, fn)
}

/** Runs `fn` (and everything it starts) as nobody's request: work shared between requests, or background work. */
export function outsideRequest<T>(fn: () => T): T {
  return scope.exit(fn)
}

interface PoolClient {
  query(...args: any[]): any
  release(...args: any[]): void
}

const rollback = /^\s*rollback\b/i

/**
 * Wraps a pool's `connect` so that clients lent to a request's work are guarded (see above). `cancel` asks the
 * server to cancel the statement a client is running (none for the embedded database, whose statements run
 * synchronously). A client whose statement was cancelled is destroyed on release rather than reused, so a late
 * cancel can never hit another request's statement.
 */
export function guardedConnect<C extends PoolClient>(
  connect: () => Promise<C>,
  cancel?: (client: C) => Promise<unknown>,
): () => Promise<C> {
  return async () => {
    const signal = scope.getStore()
    const client = await connect()
    if (!signal) return client
    if (signal.aborted) {
      client.release()
      throw new WorkAbandonedError(signal.reason)
    }
    let running = 0
    let cancelled = false
    const onAbort = () => {
      if (running === 0 || !cancel) return
      cancelled = true
      cancel(client).catch(() => {})
    }
    signal.addEventListener('abort', onAbort, { once: true })
    const query = (...args: unknown[]) => {
      const [first] = args
      const submittable = typeof first === 'object' && first !== null && 'submit' in first
      if (signal.aborted && !(typeof first === 'string' && rollback.test(first))) {
        const error = new WorkAbandonedError(signal.reason)
        if (submittable) throw error
        return Promise.reject(error)
      }
      running++
      const result = client.query(...args)
      if (submittable && result && typeof result.on === 'function') {
        finished(result, () => running--)
        return result
      }
      // A statement cancelled because the request was given up fails as that, not as a database error.
      return Promise.resolve(result)
        .catch((error: unknown) => {
          throw signal.aborted ? new WorkAbandonedError(signal.reason) : error
        })
        .finally(() => running--)
    }
    const release = (...args: unknown[]) => {
      signal.removeEventListener('abort', onAbort)
      if (cancelled) client.release(true)
      else client.release(...args)
    }
    return new Proxy(client, {
      get(target, property) {
        if (property === 'query') return query
        if (property === 'release') return release
        const value = Reflect.get(target, property, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
  }
}
