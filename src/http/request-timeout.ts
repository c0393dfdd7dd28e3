import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { runAsRequestWork, WorkAbandonedError } from '../db/request-work.js'

/*
 * Every request is answered by `REQUEST_TIMEOUT_MS` (a route may set its own bound, `config.timeoutMs`). The
 * timer starts when the request's headers are in and is stopped by its response closing — never by the request's
 * own `close`, which Node emits as soon as a body has been read (Fastify's handler timeout relies on it, so a
 * request with a body was never answered). When it fires:
 * - a body still arriving gets a 408 and the connection is closed (Node's `requestTimeout` would do the same a
 *   moment later);
 * - otherwise the request gets its 503 problem with `Retry-After` at once: a handler still running is left
 *   behind (its result is dropped), and so is a hook or a parser;
 * - an answer already under way (a streamed export) is left to finish, database work included.
 * Otherwise the request's AbortSignal aborts, which cancels its database work (db/request-work.ts): a running
 * statement is cancelled and no further one, COMMIT included, runs. The signal also aborts when the client leaves
 * before its answer is complete.
 *
 * The deadline also governs the connection: while a request is handled its socket may sit idle (no byte either
 * way) for the request's own deadline plus {@link SOCKET_GRACE_MS}, so a bulk change allowed 5 minutes is not cut
 * at the ordinary request's socket timeout, and the 503 always goes out before a stuck socket is closed.
 */

/** How much longer than its request's deadline a socket may stay idle: the answer goes first. */
export const SOCKET_GRACE_MS = 5_000

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's own answer deadline in ms, instead of `REQUEST_TIMEOUT_MS` (which 0 still turns off). */
    timeoutMs?: number
  }
}

/** The request outlived its deadline; answered with a 503 (or a 408 while its body was still arriving). */
export class RequestTimeoutError extends Error {
  override name = 'RequestTimeoutError'
  constructor(readonly timeoutMs: number) {
    super(`the request took longer than ${timeoutMs} ms`)
  }
}

/** The client closed the connection before its answer was complete. */
export class ClientGoneError extends Error {
  override name = 'ClientGoneError'
  constructor() {
    super('the client closed the connection before its answer was complete')
  }
}

interface RequestState {
  readonly controller: AbortController
  /** Its body (if any) has been read and parsed. */
  parsed: boolean
  handling: boolean
}

const states = new WeakMap<FastifyRequest, RequestState>()

/**
 * The signal that aborts when the request is given up: timed out (answered) or left by its client. Long work that
 * is not database work (it is cancelled anyway) should stop when it aborts.
 */
export function requestSignal(request: FastifyRequest): AbortSignal {
  let state = states.get(request)
  if (!state) {
    state = { controller: new AbortController(), parsed: false, handling: false }
    states.set(request, state)
  }
  return state.controller.signal
}

/** True when the error is how an abandoned request's work ends (the answer is already given, or nobody waits). */
export function isAbandonment(error: unknown): boolean {
  return error instanceof WorkAbandonedError || error instanceof RequestTimeoutError || error instanceof ClientGoneError
}

/**
 * Registers the deadline of every request. Call first, before any other hook and before the routes, so the timer
 * starts as early as possible and every route's handler is covered.
 */
export function registerRequestTimeout(app: FastifyInstance): void {
  const defaultTimeoutMs = app.config.requestTimeoutMs

  app.addHook('onRequest', (request, reply, done) => {
    const signal = requestSignal(request)
    const state = states.get(request) as RequestState
    const routeTimeout = request.routeOptions.config?.timeoutMs
    const timeoutMs = defaultTimeoutMs > 0 ? (routeTimeout ?? defaultTimeoutMs) : 0
    let finished = false
    const timer = timeoutMs > 0 ? setTimeout(() => onTimeout(request, reply, state, timeoutMs), timeoutMs) : undefined
    // The socket's idle bound follows this request's deadline (Node restores its keep-alive bound once answered).
    const socket = request.raw.socket
    if (typeof socket?.setTimeout === 'function') socket.setTimeout(timeoutMs > 0 ? timeoutMs + SOCKET_GRACE_MS : 0)
    reply.raw.once('finish', () => {
      finished = true
    })
    reply.raw.once('close', () => {
      clearTimeout(timer)
      if (!finished && !signal.aborted) state.controller.abort(new ClientGoneError())
    })
    // Everything this request runs from here on (hooks, parser, handler) is its database work.
    runAsRequestWork(signal, done)
  })

  app.addHook('preValidation', (request, _reply, done) => {
    const state = states.get(request)
    if (state) state.parsed = true
    done()
  })

  // The handler runs against the deadline: when the signal aborts first, the request is answered from its reason.
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod
    route.handler = function deadlineHandler(this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      const state = states.get(request)
      if (!state) return handler.call(this, request, reply)
      state.handling = true
      const signal = state.controller.signal
      if (signal.aborted) return Promise.reject(signal.reason)
      return new Promise((resolve, reject) => {
        const onAbort = () => reject(signal.reason)
        signal.addEventListener('abort', onAbort, { once: true })
        Promise.resolve()
          .then(() => handler.call(this, request, reply))
          .then(resolve, reject)
          .finally(() => signal.removeEventListener('abort', onAbort))
      })
    } as RouteHandlerMethod
  })
}

function onTimeout(request: FastifyRequest, reply: FastifyReply, state: RequestState, timeoutMs: number): void {
  const error = new RequestTimeoutError(timeoutMs)
  // An answer is under way (a streamed file, whose pages are read as it goes): it is the answer, left to finish.
  if (reply.sent || reply.raw.headersSent) return
  const hasBody =
    Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined
  if (!state.parsed && hasBody && !request.raw.complete) {
    // The body is still arriving: the client is too slow, not the service.
    state.controller.abort(error)
    reply.header('connection', 'close')
    reply.send(new RequestBodyTimeoutError(timeoutMs))
    return
  }
  // A running handler is answered through its rejection (deadlineHandler); anything before it directly.
  state.controller.abort(error)
  if (!state.handling) reply.send(error)
}

/** The request's body did not arrive within its deadline (408). */
export class RequestBodyTimeoutError extends Error {
  override name = 'RequestBodyTimeoutError'
  constructor(readonly timeoutMs: number) {
    super(`the request body did not arrive within ${timeoutMs} ms`)
  }
}
