import { STATUS_CODES } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  joinTexts,
  keyOf,
  type Language,
  type MessageKey,
  message,
  negotiateLanguage,
  render,
  type Text,
  titleText,
} from '../domain/messages.js'
import { defaultProblemCode, type ProblemCode, problemTypeUri } from './problem-types.js'

/*
 * Every error leaves the service as RFC 9457 problem details (`application/problem+json`), with the members a
 * client of Spring Boot's default error body reads beside them (`timestamp`, `error`, `message`, `path`) and a
 * stable `code` (and `type` URI) per kind of refusal (problem-types.ts). This module makes and sends them; code
 * throws a ProblemError (or one of the constructors below), and the error handler (error-handler.ts) answers it
 * and classifies everything else. The same shape covers what never reaches a route (route-fallbacks.ts).
 * A problem carries its texts as messages (key and values, messages.ts) and is put into words here, once, in the
 * request's language; the detail's key goes along as `messageKey`.
 */

/** A field's error as raised: its message is put into words when the problem is answered. */
export interface FieldError {
  readonly field: string
  readonly message: Text
}

export class ProblemError extends Error {
  override name = 'ProblemError'
  constructor(
    readonly status: number,
    readonly detail: Text,
    readonly extra: {
      /** The kind of refusal; without it, the general kind of the status. */
      readonly code?: ProblemCode
      readonly errors?: readonly FieldError[]
      readonly headers?: Readonly<Record<string, string>>
      readonly properties?: Readonly<Record<string, unknown>>
    } = {},
  ) {
    super(render(detail))
  }
}

export const badRequest = (detail: Text, errors?: readonly FieldError[]) =>
  new ProblemError(400, detail, errors ? { errors } : {})

/** A 400 for one field, with the field named in `errors`. */
export const invalidField = (field: string, text: Text) =>
  new ProblemError(400, message('validation.field', { field, message: text }), { errors: [{ field, message: text }] })

/** The `field message; …` list a validation detail quotes its field errors in. */
export const listFieldErrors = (errors: readonly FieldError[]): Text =>
  joinTexts(
    errors.map((e) => [e.field, ' ', e.message]),
    '; ',
  )

/** A 401 with its `WWW-Authenticate` challenge (RFC 6750 for Bearer tokens). */
export const unauthorized = (detail: Text, challenge: string) =>
  new ProblemError(401, detail, { headers: { 'www-authenticate': challenge } })
export const forbidden = (detail: Text, headers?: Record<string, string>) =>
  new ProblemError(403, detail, headers ? { headers } : {})
/** A 404 of a resource the path names (an entry, a change); an unknown path is `not-found`. */
export const entryNotFound = (detail: Text) => new ProblemError(404, detail, { code: 'entry-not-found' })
export const conflict = (code: ProblemCode, detail: Text, properties?: Record<string, unknown>) =>
  new ProblemError(409, detail, properties ? { code, properties } : { code })
export const preconditionFailed = (detail: Text) => new ProblemError(412, detail, { code: 'stale-etag' })
export const unsupportedMediaType = (detail: Text, accepted: readonly string[] = ['application/json']) =>
  new ProblemError(415, detail, { headers: { accept: accepted.join(', ') } })
export const unprocessable = (code: ProblemCode, detail: Text, properties?: Record<string, unknown>) =>
  new ProblemError(422, detail, properties ? { code, properties } : { code })
/** A 429; the rate limiter has already set `Retry-After` and the `X-RateLimit-*` headers on the reply. */
export const tooManyRequests = (detail: Text) => new ProblemError(429, detail)
export const serviceUnavailable = (detail: Text, code: ProblemCode = 'database-unavailable') =>
  new ProblemError(503, detail, { code, headers: { 'retry-after': '5' } })

export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  instance: string
  code: ProblemCode
  messageKey?: MessageKey
  errors?: { field: string; message: string }[]
  [key: string]: unknown
}

interface ProblemExtra {
  code?: ProblemCode | undefined
  errors?: readonly FieldError[] | undefined
  headers?: Readonly<Record<string, string>> | undefined
  properties?: Readonly<Record<string, unknown>> | undefined
}

/**
 * The body of a problem in the language (English unless said): RFC 9457's members, the code, the detail's message
 * key, then Spring Boot's default error members (`timestamp`, `error` = the English reason phrase, `message` = the
 * detail, `path` = the request path), so a client written against either shape reads it. Codes, fields and values
 * stay as they are in every language.
 */
export function problemBody(
  status: number,
  detail: Text,
  instance: string,
  extra: ProblemExtra = {},
  language: Language = 'en',
): ProblemBody {
  const code = extra.code ?? defaultProblemCode(status)
  const reason = STATUS_CODES[status] ?? 'Error'
  const title = language === 'en' ? reason : titleText(status, reason, language)
  const words = render(detail, language)
  const body: ProblemBody = { type: problemTypeUri(code), title, status, detail: words, instance, code }
  const messageKey = keyOf(detail)
  if (messageKey) body.messageKey = messageKey
  if (extra.errors && extra.errors.length > 0) {
    body.errors = extra.errors.map((error) => ({ field: error.field, message: render(error.message, language) }))
  }
  if (extra.properties) Object.assign(body, renderProperties(extra.properties, language))
  Object.assign(body, { timestamp: new Date().toISOString(), error: reason, message: words, path: instance })
  return body
}

/** An import's `problems` (each with its message) in words; other members as they are. */
function renderProperties(properties: Readonly<Record<string, unknown>>, language: Language): Record<string, unknown> {
  if (!Array.isArray(properties.problems)) return properties
  const problems = (properties.problems as { message: Text }[]).map((problem) => ({
    ...problem,
    message: render(problem.message, language),
  }))
  return { ...properties, problems }
}

/** Sends a problem response in the request's language; bypasses the route's response schema (its success only). */
export function sendProblem(
  reply: FastifyReply,
  request: FastifyRequest,
  status: number,
  detail: Text,
  extra: ProblemExtra = {},
): FastifyReply {
  for (const [name, value] of Object.entries(extra.headers ?? {})) reply.header(name, value)
  const language = requestLanguage(request)
  const body = problemBody(status, detail, instancePath(request), extra, language)
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

/** The request path without its query string (the `instance` of a problem). */
export function instancePath(request: FastifyRequest): string {
  return pathOf(request.raw.url ?? request.url)
}

/** A URL without its query string. */
export function pathOf(url: string): string {
  const queryStart = url.indexOf('?')
  return queryStart === -1 ? url : url.slice(0, queryStart)
}
