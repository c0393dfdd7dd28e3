import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { message } from '../domain/messages.js'
import { instancePath, ProblemError, sendProblem } from './problem.js'
import { hasEmptyParameter, registerRouteTable } from './route-table.js'

/*
 * What never reaches a route, answered as problems as Spring answers it: unknown paths (404), known paths with
 * another method (405 with `Allow`), OPTIONS (200 with `Allow`), a query string that does not decode (400) and a
 * path parameter matched to an empty segment (404).
 */

/** Registers the 404/405 handler, the OPTIONS answers and the checks of the URL, over the route table. */
export function registerRouteFallbacks(app: FastifyInstance): void {
  const routes = registerRouteTable(app)
  // OPTIONS asks which methods a path has, answered as Spring does (200 with `Allow`). A CORS preflight is left
  // to CORS when it is configured; without it, the preflight gets the same answer, with no CORS headers.
  const answerOptions = (request: FastifyRequest, reply: FastifyReply) => {
    const allowed = routes.methodsFor(request.url)
    if (allowed.length === 0)
      return sendProblem(reply, request, 404, message('request.noResource', { path: instancePath(request) }))
    return reply.code(200).header('allow', allowed.join(', ')).send()
  }
  // A query string that does not percent-decode is refused as such a path is (the router's FST_ERR_BAD_URL),
  // before authentication, rather than read with U+FFFD or the escape left as it was.
  app.addHook('onRequest', async (request) => {
    if (!queryDecodes(request.raw.url ?? request.url)) {
      throw new ProblemError(400, message('request.badQuery'), {
        code: 'malformed-request',
      })
    }
  })
  app.addHook('onRequest', async (request, reply) => {
    if (request.method === 'OPTIONS' && !isCorsPreflight(request)) return answerOptions(request, reply)
  })
  // Spring never matches `{id}` to an empty segment: `…/prices/` is no resource, not entry "". Answered after
  // authentication (onRequest), before the body is read.
  app.addHook('preParsing', async (request) => {
    if (hasEmptyParameter(request.params)) {
      throw new ProblemError(404, message('request.noRoute', { method: request.method, path: instancePath(request) }))
    }
  })

  app.setNotFoundHandler((request, reply) => {
    if (request.method === 'OPTIONS') return answerOptions(request, reply)
    const allowed = routes.methodsFor(request.url)
    if (allowed.length === 0) {
      return sendProblem(
        reply,
        request,
        404,
        message('request.noRoute', { method: request.method, path: instancePath(request) }),
      )
    }
    return sendProblem(
      reply,
      request,
      405,
      message('request.methodNotAllowed', {
        method: request.method,
        path: instancePath(request),
        allowed: allowed.join(', '),
      }),
      { headers: { allow: allowed.join(', ') } },
    )
  })
}

/**
 * Whether the URL's query string percent-decodes to UTF-8: every `%` starts two hex digits, and the bytes they
 * make are valid UTF-8 (`%FF` and a cut sequence such as `%E0%A4%A` are not).
 */
function queryDecodes(url: string): boolean {
  const queryStart = url.indexOf('?')
  if (queryStart === -1 || url.indexOf('%', queryStart) === -1) return true
  try {
    decodeURIComponent(url.slice(queryStart + 1))
    return true
  } catch {
    return false
  }
}

function isCorsPreflight(request: FastifyRequest): boolean {
  return request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined
}
