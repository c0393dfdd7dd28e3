import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'

/*
 * Every request has an id: the caller's `X-Request-Id` when it is sane (a proxy or the front end correlating its
 * own logs), a new UUID otherwise. The id is in every log line of the request and echoed on every response.
 * The header is untrusted input that ends up in logs and response headers: only short ids of URL-safe
 * characters are kept, so nobody can forge log lines, split headers or bloat the logs with it.
 */

const REQUEST_ID_HEADER = 'x-request-id'

const saneRequestId = /^[A-Za-z0-9._~:/+=@-]{1,128}$/

/** The request's id: the caller's `X-Request-Id` if it is one sane value, else a new UUID. */
export function requestIdOf(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER]
  return typeof given === 'string' && saneRequestId.test(given) ? given : crypto.randomUUID()
}

/**
 * Echoes the id on every response: `onSend` runs for whatever answers the request (a route, the error handler,
 * the 404 handler, a hook that replies early).
 */
export function registerRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    reply.header(REQUEST_ID_HEADER, request.id)
    return payload
  })
}
