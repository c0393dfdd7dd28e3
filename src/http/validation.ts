import type { FastifyInstance, FastifyRequest, FastifyServerOptions } from 'fastify'
import Type, { type TSchema } from 'typebox'
import { hasLoneSurrogate } from '../domain/key-text.js'
import { message } from '../domain/messages.js'
import { convertBody, convertQuery, keepBodyText } from './input-conversion.js'
import { type FieldError, listFieldErrors, ProblemError } from './problem.js'

/*
 * One validator, without Ajv's own coercions (they differ from Spring's: Ajv turns null into false, 0 or "", so
 * `byPriceList: null` would pass). Values are first converted the way the Spring service read them, by the type
 * each field declares (input-conversion.ts): Jackson's coercions for JSON bodies, Spring's conversions for query
 * parameters. Validation then sees the canonical request.
 */

/**
 * Fastify's own Ajv (its validator compiler, with the standard formats and the schemas shared with
 * `app.addSchema`), configured so: every error listed, Ajv's coercions off, defaults applied, nothing removed.
 */
export const validationServerOptions = {
  ajv: {
    customOptions: {
      allErrors: true,
      verbose: true,
      strict: false,
      allowUnionTypes: true,
      useDefaults: true,
      removeAdditional: false,
      coerceTypes: false,
    },
    // `decimal` (OpenAPI's format registry) marks an exact decimal for the conversion; its pattern checks it.
    onCreate: (ajv) => {
      ajv.addFormat('decimal', true)
    },
  },
} satisfies Pick<FastifyServerOptions, 'ajv'>

/** Converts the body and the query to their route's declared types (input-conversion.ts), before validation. */
function convertInput(request: FastifyRequest): void {
  const schema = request.routeOptions.schema
  if (schema?.body && request.body !== undefined) request.body = convertBody(schema.body, request.body)
  if (schema?.querystring) request.query = convertQuery(schema.querystring, request.query)
}

/**
 * Installs the JSON body parsers, the conversion of the input and the check that refuses NUL characters (the
 * validator is Fastify's, set by {@link validationServerOptions}). Bodies are JSON only: `application/json` and the
 * `application/*+json` types, as Spring's Jackson converter reads them; any other type is a 415 (a route that
 * reads another type adds its own parser). An empty JSON body is no body, so a POST without one (a revert) works
 * with or without `Content-Type: application/json`; a route with a body schema then answers that it is required.
 */
export function registerValidation(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser(['application/json', 'text/plain'])
  const parseJsonOrNothing = (
    request: FastifyRequest,
    body: string | Buffer,
    done: (error: Error | null, body?: unknown) => void,
  ) => {
    let text: string
    try {
      text = decodeUtf8(body)
    } catch (error) {
      return done(error as Error)
    }
    if (text.trim() === '') return done(null, undefined)
    parseJson(request, text, (error, parsed) => {
      if (!error) {
        keepBodyText(parsed, text)
        return done(null, parsed)
      }
      done(
        isPlainJson(text)
          ? new ProblemError(400, message('request.forbiddenProperty'), { code: 'malformed-body' })
          : error,
      )
    })
  }
  // Bytes, not text: Node would decode invalid UTF-8 to U+FFFD silently, and a key would be stored so.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, parseJsonOrNothing)
  app.addContentTypeParser(/^application\/[a-z0-9!#$&^_.-]+\+json$/i, { parseAs: 'buffer' }, parseJsonOrNothing)
  app.addHook('preValidation', async (request) => {
    refuseInvalidText(request)
    convertInput(request)
  })
}

/** A string restricted to the given values; errors list them. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

/**
 * The `exact` list of a search or a filter (beyond the contract): which of the text filters `names` are compared
 * whole, i.e. the normal forms equal (trimmed, lower case, `ё` as `е`, invisible characters removed, no-break
 * spaces made spaces, NFC), rather than as substrings. A name without its filter set changes nothing; an unknown
 * one is a 400 naming it.
 */
export const ExactFiltersSchema = (names: readonly string[], example: string, options: Record<string, unknown> = {}) =>
  Type.Array(StringEnum(names), {
    ...options,
    description:
      `Text filters compared whole rather than as substrings (beyond the contract): their normal forms equal ` +
      `(trimmed, case and ё/е ignored, no-break spaces as spaces), e.g. ${example}. Allowed: ${names.join(', ')}`,
  })

export type { TSchema }

/*
 * PostgreSQL text cannot hold U+0000, so a NUL anywhere in a request's values would fail in the database; an
 * unpaired surrogate (a JSON escape such as "\ud800") is no character at all, and would be stored as U+FFFD.
 * Both are refused before validation, naming the field, on every route: query, path and JSON body alike.
 */
function refuseInvalidText(request: FastifyRequest): void {
  const errors: FieldError[] = []
  const check = (text: string, field: string) => {
    if (text.includes('\u0000')) errors.push({ field, message: message('validation.nul') })
    else if (hasLoneSurrogate(text)) {
      errors.push({ field, message: message('validation.loneSurrogate') })
    }
  }
  const visit = (value: unknown, field: string, depth: number): void => {
    if (errors.length >= 10 || depth > 64) return
    if (typeof value === 'string') {
      check(value, field || '(body)')
    } else if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) visit(item, field ? `${field}.${index}` : String(index), depth + 1)
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        const name = key.replaceAll('\u0000', '\\0').replace(/[\ud800-\udfff]/gu, '\ufffd')
        if (key !== name || hasLoneSurrogate(key)) check(key, field ? `${field}.${name}` : name)
        visit(item, field ? `${field}.${name}` : name, depth + 1)
      }
    }
  }
  visit(request.query, '', 0)
  visit(request.params, '', 0)
  if (request.body !== null && typeof request.body === 'object') visit(request.body, '', 0)
  if (errors.length > 0) {
    throw new ProblemError(400, message('validation.invalidRequest', { errors: listFieldErrors(errors) }), {
      errors,
    })
  }
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * A JSON body's text. JSON is UTF-8 (RFC 8259): bytes that do not decode are a 400 naming the fields whose
 * values hold them (read leniently to find them), rather than text with U+FFFD in their place.
 */
function decodeUtf8(body: string | Buffer): string {
  if (typeof body === 'string') return body
  try {
    return strictUtf8.decode(body)
  } catch {
    const fields: FieldError[] = []
    try {
      collectReplaced(JSON.parse(body.toString('utf8')), '', fields, 0)
    } catch {
      // Not JSON either: the body as a whole is named.
    }
    if (fields.length === 0) fields.push({ field: '(body)', message: message('validation.utf8') })
    throw new ProblemError(400, message('request.notUtf8', { errors: listFieldErrors(fields) }), {
      code: 'malformed-body',
      errors: fields,
    })
  }
}

/** The fields whose values hold U+FFFD (where undecodable bytes were), at most 10. */
function collectReplaced(value: unknown, field: string, found: FieldError[], depth: number): void {
  if (found.length >= 10 || depth > 64) return
  if (typeof value === 'string') {
    if (value.includes('\ufffd')) found.push({ field: field || '(body)', message: message('validation.utf8') })
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const name = field ? `${field}.${key}` : key
      if (key.includes('\ufffd')) found.push({ field: name, message: message('validation.utf8') })
      else collectReplaced(item, name, found, depth + 1)
    }
  }
}

/** Whether the text is JSON at all (the secure parser refused it for a forbidden property name, then). */
function isPlainJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}
