import { STATUS_CODES } from 'node:http'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

/*
 * Every error leaves the service as RFC 9457 problem details (`application/problem+json`), from one handler.
 * Code throws a ProblemError (or one of the constructors below); anything else is classified here, and what is
 * not understood becomes a 500 that says nothing of the internals.
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
  new ProblemError(400, `${field}: ${message}`, { errors: [{ field, message }] })

export const notFound = (detail: string) => new ProblemError(404, detail)
export const conflict = (detail: string, properties?: Record<string, unknown>) =>
  new ProblemError(409, detail, properties ? { properties } : {})
export const preconditionFailed = (detail: string) => new ProblemError(412, detail)
export const unprocessable = (detail: string, properties?: Record<string, unknown>) =>
  new ProblemError(422, detail, properties ? { properties } : {})
export const serviceUnavailable = (detail: string) => new ProblemError(503, detail, { headers: { 'retry-after': '5' } })

export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  instance: string
  errors?: FieldError[]
  [key: string]: unknown
}

export function problemBody(
  status: number,
  detail: string,
  instance: string,
  extra: { errors?: readonly FieldError[]; properties?: Readonly<Record<string, unknown>> } = {},
): ProblemBody {
  const body: ProblemBody = {
    type: 'about:blank',
    title: STATUS_CODES[status] ?? 'Error',
    status,
    detail,
    instance,
  }
  if (extra.errors && extra.errors.length > 0) body.errors = [...extra.errors]
  if (extra.properties) Object.assign(body, extra.properties)
  return body
}

/** Sends a problem response; bypasses the route's response schema, which describes its success only. */
export function sendProblem(
  reply: FastifyReply,
  request: FastifyRequest,
  status: number,
  detail: string,
  extra: {
    errors?: readonly FieldError[]
    headers?: Readonly<Record<string, string>>
    properties?: Readonly<Record<string, unknown>>
  } = {},
): FastifyReply {
  for (const [name, value] of Object.entries(extra.headers ?? {})) reply.header(name, value)
  const body = problemBody(status, detail, instancePath(request), extra)
  return reply
    .code(status)
    .type('application/problem+json; charset=utf-8')
    .serializer((payload: unknown) => JSON.stringify(payload))
    .send(body)
}

/** The request path without its query string (the `instance` of a problem). */
export function instancePath(request: FastifyRequest): string {
  const url = request.raw.url ?? request.url
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

/** Turns schema validation errors into one `{field, message}` per field, in words a front-end developer reads. */
export function fieldErrors(validation: readonly AjvError[]): FieldError[] {
  const byField = new Map<string, string>()
  for (const error of validation) {
    let field = error.instancePath.replace(/^\//, '').replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~')
    let message: string
    if (error.keyword === 'required') {
      const missing = String(error.params.missingProperty ?? '')
      field = field ? `${field}.${missing}` : missing
      message = 'is required'
    } else if (error.keyword === 'type' && error.data === null) {
      message = 'must not be null'
    } else if (error.keyword === 'type') {
      const expected = String(error.params.type ?? '')
        .split(',')
        .filter((t) => t !== 'null')
      message = `must be ${expected.length > 1 ? `a ${expected.join(' or ')}` : `a ${expected[0] ?? 'value'}`}`
      if (expected.includes('string') && expected.includes('number')) message = 'must be a number'
    } else if (error.keyword === 'pattern' && error.params.pattern && String(error.params.pattern).includes('\\d')) {
      message = 'must be a number'
    } else if (error.keyword === 'enum' || error.keyword === 'const') {
      const allowed = (error.params.allowedValues as unknown[] | undefined) ?? [error.params.allowedValue]
      message = `must be one of ${allowed.map(String).join(', ')}`
    } else if (error.keyword === 'anyOf') {
      continue
    } else {
      message = error.message ?? 'is invalid'
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

/** PostgreSQL or driver errors meaning "the database is not reachable now". */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = String((error as { code?: unknown }).code ?? '')
  const message = String((error as { message?: unknown }).message ?? '')
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code) ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P03' ||
    // statement_timeout: the database did not answer in time (a lock held too long, an overloaded server).
    code === '57014' ||
    /timeout exceeded when trying to connect|Connection terminated|connection is closed|Client has encountered a connection error/i.test(
      message,
    )
  )
}

/** Registers the one error handler and the 404 handler. */
export function registerProblemHandlers(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { code?: string }, request, reply) => {
    if (error instanceof ProblemError) {
      return sendProblem(reply, request, error.status, error.detail, error.extra as never)
    }
    if (error.validation) {
      const errors = fieldErrors(error.validation as unknown as AjvError[])
      const where = error.validationContext === 'body' ? 'request body' : (error.validationContext ?? 'request')
      const detail =
        errors.length > 0
          ? `Invalid ${where}: ${errors.map((e) => `${e.field} ${e.message}`).join('; ')}`
          : `Invalid ${where}`
      return sendProblem(reply, request, 400, detail, { errors })
    }
    const code = String(error.code ?? '')
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return sendProblem(reply, request, 415, `Content-Type must be application/json`, {
        headers: { accept: 'application/json' },
      })
    }
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendProblem(reply, request, 413, 'The request body is larger than allowed')
    }
    if (code.startsWith('FST_ERR_CTP_') || error instanceof SyntaxError) {
      return sendProblem(reply, request, 400, 'The request body is not valid JSON')
    }
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: { code, message: error.message } }, 'database unavailable')
      return sendProblem(reply, request, 503, 'The database is unavailable; try again shortly', {
        headers: { 'retry-after': '5' },
      })
    }
    if (/^\d{5}$/.test(code) && isInputDatabaseError(code)) {
      return sendProblem(reply, request, 400, 'A value in the request is out of range or not allowed')
    }
    if (code === '23505') return sendProblem(reply, request, 409, 'An entry with the same key already exists')
    if (code === '40001' || code === '40P01') {
      return sendProblem(reply, request, 409, 'A concurrent change conflicted with this one; try again')
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
    if (status === 500) {
      request.log.error({ err: error }, 'unhandled error')
      return sendProblem(reply, request, 500, 'An unexpected error occurred; it has been logged')
    }
    return sendProblem(reply, request, status, error.message)
  })

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, request, 404, `No resource at ${request.method} ${instancePath(request)}`),
  )
}
