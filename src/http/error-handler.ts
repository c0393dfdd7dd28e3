import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify'
import { isDatabaseUnavailable } from '../db/database-errors.js'
import { type MessageKey, message, messageOf } from '../domain/messages.js'
import { type AjvError, fieldErrors } from './field-errors.js'
import { bodyTypesOf, mediaTypeDetail } from './media-types.js'
import { listFieldErrors, ProblemError, pathOf, problemBody, sendProblem, unsupportedMediaType } from './problem.js'
import { isAbandonment, RequestBodyTimeoutError, RequestTimeoutError } from './request-timeout.js'

/*
 * Errors become problems here: those a handler or a hook throws (the error handler), and those raised before
 * routing (server options: a URL that does not decode, requests the HTTP parser refuses).
 */

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

/**
 * Registers the one error handler: a ProblemError is answered as it says; anything else is classified (validation,
 * body parsing, deadlines, the database) and what is not understood becomes a 500 that says nothing of the
 * internals.
 */
export function registerErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError & { code?: string }, request, reply) => {
    if (error instanceof ProblemError) {
      return sendProblem(reply, request, error.status, error.detail, error.extra)
    }
    if (error.validation) {
      if (error.validationContext === 'body' && (request.body === undefined || request.body === null)) {
        return sendProblem(reply, request, 400, message('request.bodyRequired'), {
          errors: [{ field: '(body)', message: message('validation.required') }],
        })
      }
      const errors = fieldErrors(error.validation as unknown as AjvError[])
      const context = error.validationContext ?? 'request'
      const detail =
        errors.length > 0
          ? messageOf(invalidContext[context] ?? 'validation.invalidRequest', { errors: listFieldErrors(errors) })
          : message('validation.invalid', { where: context })
      return sendProblem(reply, request, 400, detail, { errors })
    }
    const code = String(error.code ?? '')
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      const { detail, extra } = unsupportedMediaType(mediaTypeDetail(request), bodyTypesOf(request))
      return sendProblem(reply, request, 415, detail, extra)
    }
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      const limit = request.routeOptions.bodyLimit ?? app.config.bodyLimit
      return sendProblem(reply, request, 413, message('request.bodyTooLarge', { limit }))
    }
    if (code.startsWith('FST_ERR_CTP_') || error instanceof SyntaxError) {
      return sendProblem(reply, request, 400, messageOf(bodyErrorDetails[code] ?? 'request.notJson'), {
        code: 'malformed-body',
      })
    }
    if (error instanceof RequestBodyTimeoutError) {
      request.log.info({ timeoutMs: error.timeoutMs }, 'request body timed out')
      return sendProblem(reply, request, 408, message('request.notInTime'))
    }
    if (isAbandonment(error) && !(error instanceof RequestTimeoutError)) {
      // The client left (or the work was abandoned): nobody reads this answer; the log says what happened.
      request.log.info({ reason: error.message }, 'request abandoned; its database work was cancelled')
      return sendProblem(reply, request, 503, message('request.abandoned'), { headers: { 'retry-after': '5' } })
    }
    if (error instanceof RequestTimeoutError || code === 'FST_ERR_HANDLER_TIMEOUT') {
      const timeoutMs = error instanceof RequestTimeoutError ? error.timeoutMs : app.config.requestTimeoutMs
      request.log.warn({ timeoutMs }, 'request timed out; its database work was cancelled')
      return sendProblem(reply, request, 503, message('request.timedOut'), {
        code: 'service-timeout',
        headers: { 'retry-after': '5' },
        properties: { requestId: request.id },
      })
    }
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: { code, message: error.message } }, 'database unavailable')
      return sendProblem(reply, request, 503, message('request.databaseUnavailable'), {
        headers: { 'retry-after': '5' },
        properties: { requestId: request.id },
      })
    }
    if (/^\d{5}$/.test(code) && isInputDatabaseError(code)) {
      return sendProblem(reply, request, 400, message('request.valueOutOfRange'), {
        code: 'value-out-of-range',
      })
    }
    if (code === '23505') {
      return sendProblem(reply, request, 409, message('request.duplicateKey'), { code: 'duplicate-key' })
    }
    if (code === '40001' || code === '40P01') {
      return sendProblem(reply, request, 409, message('request.concurrentChange'))
    }
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
    if (status === 500) {
      // The log line (which carries the request id) has the error; the body only the id to quote.
      request.log.error({ err: error }, 'unhandled error')
      return sendProblem(reply, request, 500, message('request.unexpected'), {
        properties: { requestId: request.id },
      })
    }
    return sendProblem(reply, request, status, error.message)
  })
}

/**
 * Server options that keep errors raised before routing in the same shape: a URL that does not decode (400) and
 * requests the HTTP parser refuses (400, 408 on a request timeout, 431 for oversized headers).
 */
export const problemServerOptions = {
  frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
    const detail = error.code === 'FST_ERR_BAD_URL' ? message('request.badUrl') : error.message
    sendProblem(reply, request, 400, detail, { code: 'malformed-request' })
  },
  clientErrorHandler(error: Error & { code?: string; rawPacket?: unknown }, socket: Socket) {
    if (error.code === 'ECONNRESET' || socket.destroyed) return
    const status = error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400
    const detail =
      status === 408
        ? message('request.notInTime')
        : status === 431
          ? message('request.headersTooLarge')
          : message('request.notHttp')
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
