import { STATUS_CODES } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type Language, messageText, negotiateLanguage, translate, translateTitle } from '../domain/messages.js'
import { defaultProblemCode, type ProblemCode, problemTypeUri } from './problem-types.js'

/*
 * Every error leaves the service as RFC 9457 problem details (`application/problem+json`), with the members a
 * client of Spring Boot's default error body reads beside them (`timestamp`, `error`, `message`, `path`) and a
 * stable `code` (and `type` URI) per kind of refusal (problem-types.ts). This module makes and sends them; code
 * throws a ProblemError (or one of the constructors below), and the error handler (error-handler.ts) answers it
 * and classifies everything else. The same shape covers what never reaches a route (route-fallbacks.ts).
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

/** A URL without its query string. */
export function pathOf(url: string): string {
  const queryStart = url.indexOf('?')
  return queryStart === -1 ? url : url.slice(0, queryStart)
}
