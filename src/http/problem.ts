import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
import { isDatabaseUnavailable } from '../db/database-errors.js'
import {
  type Language,
  type MessageKey,
  messageText,
  negotiateLanguage,
  translate,
  translateTitle,
} from '../domain/messages.js'
import { defaultProblemCode, type ProblemCode, problemTypeUri } from './problem-types.js'
import { isAbandonment, RequestBodyTimeoutError, RequestTimeoutError } from './request-timeout.js'

/*
 * Every error leaves the service as RFC 9457 problem details (`application/problem+json`), from one handler,
 * with the members a client of Spring Boot's default error body reads beside them (`timestamp`, `error`,
 * `message`, `path`) and a stable `code` (and `type` URI) per kind of refusal (problem-types.ts).
 * Code throws a ProblemError (or one of the constructors below); anything else is classified here, and what is
 * not understood becomes a 500 that says nothing of the internals. The same shape covers what never reaches a
 * route: unknown paths (404), known paths with another method (405 with `Allow`), URLs that do not decode and
 * requests the HTTP parser refuses.
 */

export interface FieldError {
  readonly field: string
  readonly message: string
}

export class ProblemError extends Error {
  override name = 'ProblemError'
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly extra: {
      /** The kind of refusal; without it, the general kind of the status. */
      readonly code?: ProblemCode
      readonly errors?: readonly FieldError[]
      readonly headers?: Readonly<Record<string, string>>
      readonly properties?: Readonly<Record<string, unknown>>
    } = {},
  ) {
    super(detail)
  }
}

export const badRequest = (detail: string, errors?: readonly FieldError[]) =>
  new ProblemError(400, detail, errors ? { errors } : {})

/** A 400 for one field, with the field named in `errors`. */
export const invalidField = (field: string, message: string) =>
  new ProblemError(400, messageText('validation.field', { field, message }), { errors: [{ field, message }] })

/** The `field message; …` list a validation detail quotes its field errors in. */
export const listFieldErrors = (errors: readonly FieldError[]): string =>
  errors.map((e) => `${e.field} ${e.message}`).join('; ')

/** A 401 with its `WWW-Authenticate` challenge (RFC 6750 for Bearer tokens). */
export const unauthorized = (detail: string, challenge: string) =>
  new ProblemError(401, detail, { headers: { 'www-authenticate': challenge } })
export const forbidden = (detail: string, headers?: Record<string, string>) =>
  new ProblemError(403, detail, headers ? { headers } : {})
/** A 404 of a resource the path names (an entry, a change); an unknown path is `not-found`. */
export const entryNotFound = (detail: string) => new ProblemError(404, detail, { code: 'entry-not-found' })
export const conflict = (code: ProblemCode, detail: string, properties?: Record<string, unknown>) =>
  new ProblemError(409, detail, properties ? { code, properties } : { code })
export const preconditionFailed = (detail: string) => new ProblemError(412, detail, { code: 'stale-etag' })
export const unsupportedMediaType = (detail: string, accepted: readonly string[] = ['application/json']) =>
  new ProblemError(415, detail, { headers: { accept: accepted.join(', ') } })
export const unprocessable = (code: ProblemCode, detail: string, properties?: Record<string, unknown>) =>
  new ProblemError(422, detail, properties ? { code, properties } : { code })
/** A 429; the rate limiter has already set `Retry-After` and the `X-RateLimit-*` headers on the reply. */
export const tooManyRequests = (detail: string) => new ProblemError(429, detail)
export const serviceUnavailable = (detail: string, code: ProblemCode = 'database-unavailable') =>
  new ProblemError(503, detail, { code, headers: { 'retry-after': '5' } })

export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  instance: string
  code: ProblemCode
  errors?: FieldError[]
  [key: string]: unknown
}

interface ProblemExtra {
  code?: ProblemCode | undefined
  errors?: readonly FieldError[] | undefined
  headers?: Readonly<Record<string, string>> | undefined
  properties?: Readonly<Record<string, unknown>> | undefined
}

/**
 * The body of a problem: RFC 9457's members, the code, then Spring Boot's default error members (`timestamp`,
 * `error` = the reason phrase, `message` = the detail, `path` = the request path), so a client written against
 * either shape reads it.
 */
export function problemBody(status: number, detail: string, instance: string, extra: ProblemExtra = {}): ProblemBody {
  const code = extra.code ?? defaultProblemCode(status)
  const title = STATUS_CODES[status] ?? 'Error'
  const body: ProblemBody = { type: problemTypeUri(code), title, status, detail, instance, code }
  if (extra.errors && extra.errors.length > 0) body.errors = [...extra.errors]
  if (extra.properties) Object.assign(body, extra.properties)
  Object.assign(body, { timestamp: new Date().toISOString(), error: title, message: detail, path: instance })
  return body
}

/** Sends a problem response; bypasses the route's response schema, which describes its success only. */
export function sendProblem(
  reply: FastifyReply,
  request: FastifyRequest,
  status: number,
  detail: string,
  extra: ProblemExtra = {},
): FastifyReply {
  for (const [name, value] of Object.entries(extra.headers ?? {})) reply.header(name, value)
  const language = requestLanguage(request)
  const body = localise(problemBody(status, detail, instancePath(request), extra), language)
  return reply
    .header('content-language', language)
    .code(status)
    .type('application/problem+json; charset=utf-8')
    .serializer((payload: unknown) => JSON.stringify(payload))
    .send(body)
}

/** The language a request's answer speaks: its `Accept-Language`, else `MESSAGES_LANGUAGE`. */
export function requestLanguage(request: FastifyRequest): Language {
  const fallback = (request.server as Partial<FastifyInstance>).config?.messagesLanguage ?? 'en'
  return negotiateLanguage(request.headers['accept-language'], fallback)
}

/**
 * A problem's human texts in the language (messages.ts); codes, fields and values stay as they are, and so does
 * `error`, Spring's English reason phrase.
 */
function localise(body: ProblemBody, language: Language): ProblemBody {
  if (language === 'en') return body
  const title = translateTitle(body.status, body.title, language)
  const detail = translate(body.detail, language)
  const localised: ProblemBody = { ...body, title, detail, message: detail }
  if (body.errors) {
    localised.errors = body.errors.map((error) => ({ ...error, message: translate(error.message, language) }))
  }
  if (Array.isArray(body.problems)) {
    localised.problems = (body.problems as { message: string }[]).map((problem) => ({
      ...problem,
      message: translate(problem.message, language),
    }))
  }
  return localised
}

/** The request path without its query string (the `instance` of a problem). */
export function instancePath(request: FastifyRequest): string {
  return pathOf(request.raw.url ?? request.url)
}

/**
 * Whether the URL's query string percent-decodes to UTF-8: every `%` starts two hex digits, and the bytes they
 * make are valid UTF-8 (`%FF` and a cut sequence such as `%E0%A4%A` are not).
 */
export function queryDecodes(url: string): boolean {
  const queryStart = url.indexOf('?')
  if (queryStart === -1 || url.indexOf('%', queryStart) === -1) return true
  try {
    decodeURIComponent(url.slice(queryStart + 1))
    return true
  } catch {
    return false
  }
}

function pathOf(url: string): string {
  const queryStart = url.indexOf('?')
  return queryStart === -1 ? url : url.slice(0, queryStart)
}

interface AjvError {
  instancePath: string
  keyword: string
  message?: string
  params: Record<string, unknown>
  data?: unknown
}

/** The JSON types whose messages the catalogue words (`validation.string`, …). */
const typeMessages = new Set([
  'validation.string',
  'validation.integer',
  'validation.number',
  'validation.boolean',
  'validation.object',
  'validation.array',
])

/** Ajv's limit keywords and their messages. */
const limitMessages: Readonly<Record<string, MessageKey>> = {
  maxLength: 'validation.maxLength',
  minLength: 'validation.minLength',
  maxItems: 'validation.maxItems',
  minItems: 'validation.minItems',
  minimum: 'validation.atLeast',
  maximum: 'validation.atMost',
  exclusiveMinimum: 'validation.greaterThan',
}

/** Turns schema validation errors into one `{field, message}` per field, in words a front-end developer reads. */
export function fieldErrors(validation: readonly AjvError[]): FieldError[] {
  const byField = new Map<string, string>()
  for (const error of validation) {
    let field = error.instancePath.replace(/^\//, '').replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~')
    let message: string
    if (error.keyword === 'required') {
      const missing = String(error.params.missingProperty ?? '')
      field = field ? `${field}.${missing}` : missing
      message = messageText('validation.required')
    } else if (error.keyword === 'type' && error.data === null) {
      message = messageText('validation.notNull')
    } else if (error.keyword === 'type') {
      const expected = String(error.params.type ?? '')
        .split(',')
        .filter((t) => t !== 'null')
      const single = expected.includes('number') ? 'number' : expected.length === 1 ? expected[0] : undefined
      message =
        single && typeMessages.has(`validation.${single}`)
          ? messageText(`validation.${single}` as MessageKey)
          : messageText('validation.type', { type: expected.join(' or ') || 'value' })
    } else if (error.keyword === 'pattern' && error.params.pattern && String(error.params.pattern).includes('\\d')) {
      message = messageText('validation.number')
    } else if (error.keyword === 'enum' || error.keyword === 'const') {
      const allowed = (error.params.allowedValues as unknown[] | undefined) ?? [error.params.allowedValue]
      message = messageText('validation.oneOf', { allowed: allowed.map(String).join(', ') })
    } else if (error.keyword in limitMessages) {
      const limit = String(error.params.limit)
      message = messageText(limitMessages[error.keyword] as MessageKey, { limit, min: limit, max: limit, bound: limit })
    } else if (error.keyword === 'additionalProperties') {
      message = messageText('validation.additionalProperty', { property: String(error.params.additionalProperty) })
    } else if (error.keyword === 'anyOf') {
      continue
    } else {
      message = error.message ?? messageText('validation.invalidValue')
    }
    if (field === '') field = '(body)'
    if (!byField.has(field)) byField.set(field, message)
  }
  return [...byField].map(([field, message]) => ({ field, message }))
}

/** PostgreSQL error classes that input can cause (a number out of range, a NUL byte, text too long): 400. */
function isInputDatabaseError(code: string): boolean {
  return code.startsWith('22') || code === '54000'
}

/** Detail of the 400 for Fastify's own body errors; anything else a parser throws is malformed JSON. */
const bodyErrorDetails: Readonly<Record<string, MessageKey>> = {
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'request.contentLength',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'request.bodyEmpty',
}

/** The detail of a validation error by the part of the request at fault. */
const invalidContext: Readonly<Record<string, MessageKey>> = {
  body: 'validation.invalidBody',
  querystring: 'validation.invalidQuery',
  params: 'validation.invalidParams',
  headers: 'validation.invalidHeaders',
}

/** Registers the one error handler, the 404/405 handler and the route table behind `Allow`. */
export function registerProblemHandlers(app: FastifyInstance): void {
  const routes = new RouteTable()
  routeTables.set(app, routes)
  app.addHook('onRoute', (route) => {
    if (route.schema) route.schema = withEdgeProblems(route.url, route.schema as Record<string, unknown>, route.config)
    routes.add(route.method, route.url, { schema: route.schema as never, config: route.config as never })
  })

  app.setErrorHandler((error: FastifyError & { code?: string }, request, reply) => {
    if (error instanceof ProblemError) {
      return sendProblem(reply, request, error.status, error.detail, error.extra as never)
    }
    if (error.validation) {
      if (error.validationContext === 'body' && (request.body === undefined || request.body === null)) {
        return sendProblem(reply, request, 400, messageText('request.bodyRequired'), {
          errors: [{ field: '(body)', message: messageText('validation.required') }],
        })
      }
      const errors = fieldErrors(error.validation as unknown as AjvError[])
      const context = error.validationContext ?? 'request'
      const detail =
        errors.length > 0
          ? messageText(invalidContext[context] ?? 'validation.invalidRequest', { errors: listFieldErrors(errors) })
          : messageText('validation.invalid', { where: context })
      return sendProblem(reply, request, 400, detail, { errors })
    }
    const code = String(error.code ?? '')
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      const { detail, extra } = unsupportedMediaType(mediaTypeDetail(request), bodyTypesOf(request))
      return sendProblem(reply, request, 415, detail, extra as never)
    }
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      const limit = request.routeOptions.bodyLimit ?? app.config.bodyLimit
      return sendProblem(reply, request, 413, messageText('request.bodyTooLarge', { limit }))
    }
    if (code.startsWith('FST_ERR_CTP_') || error instanceof SyntaxError) {
      return sendProblem(reply, request, 400, messageText(bodyErrorDetails[code] ?? 'request.notJson'), {
        code: 'malformed-body',
      })
    }
    if (error instanceof RequestBodyTimeoutError) {
      request.log.info({ timeoutMs: error.timeoutMs }, 'request body timed out')
      return sendProblem(reply, request, 408, messageText('request.notInTime'))
    }
    if (isAbandonment(error) && !(error instanceof RequestTimeoutError)) {
      // The client left (or the work was abandoned): nobody reads this answer; the log says what happened.
      request.log.info({ reason: error.message }, 'request abandoned; its database work was cancelled')
      return sendProblem(reply, request, 503, messageText('request.abandoned'), { headers: { 'retry-after': '5' } })
    }
    if (error instanceof RequestTimeoutError || code === 'FST_ERR_HANDLER_TIMEOUT') {
      const timeoutMs = error instanceof RequestTimeoutError ? error.timeoutMs : app.config.requestTimeoutMs
      request.log.warn({ timeoutMs }, 'request timed out; its database work was cancelled')
      return sendProblem(reply, request, 503, messageText('request.timedOut'), {
        code: 'service-timeout',
        headers: { 'retry-after': '5' },
        properties: { requestId: request.id },
      })
    }
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: { code, message: error.message } }, 'database unavailable')
      return sendProblem(reply, request, 503, messageText('request.databaseUnavailable'), {
        headers: { 'retry-after': '5' },
        properties: { requestId: request.id },
      })
    }
    if (/^\d{5}$/.test(code) && isInputDatabaseError(code)) {
      return sendProblem(reply, request, 400, messageText('request.valueOutOfRange'), {
        code: 'value-out-of-range',
      })
    }
    if (code === '23505') {
      return sendProblem(reply, request, 409, messageText('request.duplicateKey'), { code: 'duplicate-key' })
    }
    if (code === '40001' || code === '40P01') {
      return sendProblem(reply, request, 409, messageText('request.concurrentChange'))
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
    if (status === 500) {
      // The log line (which carries the request id) has the error; the body only the id to quote.
      request.log.error({ err: error }, 'unhandled error')
      return sendProblem(reply, request, 500, messageText('request.unexpected'), {
        properties: { requestId: request.id },
      })
    }
    return sendProblem(reply, request, status, error.message)
  })

  // OPTIONS asks which methods a path has, answered as Spring does (200 with `Allow`). A CORS preflight is left
  // to CORS when it is configured; without it, the preflight gets the same answer, with no CORS headers.
  const answerOptions = (request: FastifyRequest, reply: FastifyReply) => {
    const allowed = routes.methodsFor(request.url)
    if (allowed.length === 0)
      return sendProblem(reply, request, 404, messageText('request.noResource', { path: instancePath(request) }))
    return reply.code(200).header('allow', allowed.join(', ')).send()
  }
  // A query string that does not percent-decode is refused as such a path is (the router's FST_ERR_BAD_URL),
  // before authentication, rather than read with U+FFFD or the escape left as it was.
  app.addHook('onRequest', async (request) => {
    if (!queryDecodes(request.raw.url ?? request.url)) {
      throw new ProblemError(400, messageText('request.badQuery'), {
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
      throw new ProblemError(
        404,
        messageText('request.noRoute', { method: request.method, path: instancePath(request) }),
      )
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
        messageText('request.noRoute', { method: request.method, path: instancePath(request) }),
      )
    }
    return sendProblem(
      reply,
      request,
      405,
      messageText('request.methodNotAllowed', {
        method: request.method,
        path: instancePath(request),
        allowed: allowed.join(', '),
      }),
      { headers: { allow: allowed.join(', ') } },
    )
  })
}

/**
 * Adds to a route's documented responses the problems answered before its handler runs, so the OpenAPI document
 * shows them without every route listing them: on the API 401 (with authentication on) and 429 (with a rate
 * limit), 403 on its writes (the role), and 413 and 415 wherever a body is read.
 */
function withEdgeProblems(
  url: string,
  schema: Record<string, unknown>,
  config: { writesCatalog?: boolean; readsPurchasePrices?: boolean } | undefined,
): Record<string, unknown> {
  const statuses: number[] = []
  if (url.startsWith('/api/')) statuses.push(401, 429)
  if (url.startsWith('/api/') && (config?.writesCatalog || config?.readsPurchasePrices)) statuses.push(403)
  if (schema.body) statuses.push(413, 415)
  const response = { ...(schema.response as Record<string, unknown> | undefined) }
  let added = false
  for (const status of statuses) {
    if (response[status] === undefined) {
      response[status] = { $ref: 'Problem' }
      added = true
    }
  }
  return added ? { ...schema, response } : schema
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The media types the route's body may have, when not JSON (the route adds their parsers). */
    bodyTypes?: readonly string[]
  }
}

/** The body media types a route reads: its own, else JSON. */
export function bodyTypesOf(request: FastifyRequest): readonly string[] {
  return request.routeOptions.config?.bodyTypes ?? ['application/json']
}

/** Why a body's media type is refused, naming what the route reads. */
export function mediaTypeDetail(request: FastifyRequest): string {
  const given = request.headers['content-type']
  const wanted = bodyTypesOf(request).join(' or ')
  return given
    ? messageText('request.mediaType', { given: given.split(';')[0]?.trim() ?? '', wanted })
    : messageText('request.noMediaType', { wanted })
}

function isCorsPreflight(request: FastifyRequest): boolean {
  return request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined
}

/** A route as registered: its method, URL pattern and options (schema, config). */
export interface KnownRoute {
  readonly method: string
  readonly url: string
  readonly options: {
    readonly schema?: Record<string, unknown> | undefined
    readonly config?: Record<string, unknown> | undefined
  }
}

/** The order methods are listed in `Allow`. */
const methodOrder = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/**
 * Every route of the application (registered after the problem handlers), and a router of their patterns that
 * tells which methods a concrete path has. Catch-all `*` routes (the CORS preflight) match every path, so they
 * are listed but do not make a path known.
 */
class RouteTable {
  readonly routes: KnownRoute[] = []
  private readonly router = FindMyWay({ ignoreTrailingSlash: false })
  private readonly methods = new Set<string>()
  private readonly seen = new Set<string>()

  add(method: string | string[], url: string, options: KnownRoute['options']): void {
    for (const one of Array.isArray(method) ? method : [method]) {
      const key = `${one} ${url}`
      if (this.seen.has(key)) continue
      this.seen.add(key)
      this.routes.push({ method: one, url, options })
      if (url === '*') continue
      this.router.on(one as HTTPMethod, url, () => {})
      this.methods.add(one)
    }
  }

  /** The methods the path answers (HEAD wherever GET is, and OPTIONS); empty for an unknown path. */
  methodsFor(url: string): string[] {
    const path = pathOf(url)
    const found = new Set<string>()
    for (const method of this.methods) {
      const match = this.router.find(method as HTTPMethod, path)
      if (match && !hasEmptyParameter(match.params)) found.add(method)
    }
    if (found.size === 0) return []
    if (found.has('GET')) found.add('HEAD')
    found.add('OPTIONS')
    return [...found].sort((a, b) => rank(a) - rank(b))
  }
}

/** Whether a path parameter matched an empty segment (the catch-all `*` aside). */
function hasEmptyParameter(params: unknown): boolean {
  if (params === null || typeof params !== 'object') return false
  return Object.entries(params).some(([name, value]) => name !== '*' && value === '')
}

function rank(method: string): number {
  const index = methodOrder.indexOf(method)
  return index === -1 ? methodOrder.length : index
}

const routeTables = new WeakMap<FastifyInstance, RouteTable>()

/** Every route of an app built with {@link registerProblemHandlers}: method, URL pattern, schema and config. */
export function routesOf(app: FastifyInstance): readonly KnownRoute[] {
  return routeTables.get(app)?.routes ?? []
}

/**
 * Server options that keep errors raised before routing in the same shape: a URL that does not decode (400) and
 * requests the HTTP parser refuses (400, 408 on a request timeout, 431 for oversized headers).
 */
export const problemServerOptions = {
  frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const detail = error.code === 'FST_ERR_BAD_URL' ? messageText('request.badUrl') : error.message
    sendProblem(reply, request, 400, detail, { code: 'malformed-request' })
  },
  clientErrorHandler(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket) {
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
    const detail =
      status === 408
        ? messageText('request.notInTime')
        : status === 431
          ? messageText('request.headersTooLarge')
          : messageText('request.notHttp')
    const target =
      /^[A-Z]+ (\S+) HTTP\//.exec(Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString('latin1') : '')?.[1] ?? ''
    const extra = status === 400 ? { code: 'malformed-request' as const } : {}
    const body = JSON.stringify(problemBody(status, detail, pathOf(target), extra))
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
    }
    socket.destroy()
  },
} satisfies Pick<FastifyServerOptions, 'frameworkErrors' | 'clientErrorHandler'>
