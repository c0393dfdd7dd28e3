import Type, { type TSchema } from 'typebox'
import { PROBLEM_CODES, problemTypes, problemTypeUri } from './problem-types.js'

/*
 * Schema pieces shared by the routes. Nullable scalars use JSON Schema type arrays (`["string","null"]`) rather
 * than `anyOf`: validation errors then name one expectation, the serializer takes its fast path, and OpenAPI 3.1
 * reads them as they are.
 */

export const NullableString = (options: Record<string, unknown> = {}) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], ...options })

export const NullableNumber = (options: Record<string, unknown> = {}) =>
  Type.Unsafe<number | null>({ type: ['number', 'null'], ...options })

export const NullableInteger = (options: Record<string, unknown> = {}) =>
  Type.Unsafe<number | null>({ type: ['integer', 'null'], ...options })

/** A decimal written as a JSON number or as a numeric string (`"1500.00"`, as Jackson accepts for BigDecimal). */
const decimalPattern = '^\\s*[-+]?(\\d+(\\.\\d*)?|\\.\\d+)\\s*$'

/**
 * The longest decimal text accepted: far beyond any price or measure, and far below what PostgreSQL `numeric`
 * overflows at (a 140,000-digit "number" is refused here rather than by the database).
 */
export const MAX_DECIMAL_TEXT = 64

export const DecimalInput = (options: Record<string, unknown> = {}) =>
  Type.Unsafe<number | string>({
    type: ['number', 'string'],
    format: 'decimal',
    pattern: decimalPattern,
    maxLength: MAX_DECIMAL_TEXT,
    ...options,
  })

export const NullableDecimalInput = (options: Record<string, unknown> = {}) =>
  Type.Unsafe<number | string | null>({
    type: ['number', 'string', 'null'],
    format: 'decimal',
    pattern: decimalPattern,
    maxLength: MAX_DECIMAL_TEXT,
    ...options,
  })

/** RFC 9457 problem details, as every error response carries them, with Spring Boot's default error members. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({
      description: 'The kind of refusal as a stable URI: `urn:optics-catalog:problem:` followed by `code`',
      examples: [problemTypeUri('duplicate-key')],
    }),
    title: Type.String({ description: 'The reason phrase of the status, in the language of `Content-Language`' }),
    status: Type.Integer(),
    detail: Type.String({ description: 'What went wrong, in words (Russian or English, as `Content-Language` says)' }),
    instance: Type.String({ description: 'The request path' }),
    code: Type.Unsafe<string>({
      type: 'string',
      enum: PROBLEM_CODES,
      description: `The kind of refusal, stable: ${PROBLEM_CODES.map((code) => `\`${code}\`: ${problemTypes[code]}`).join('; ')}`,
    }),
    messageKey: Type.Optional(
      Type.String({
        description:
          "The key of the detail's message in the service's catalogue (`entry.notFound`, `import.problems`), the " +
          'same in every language; absent when the detail is a library’s own words',
        examples: ['entry.notFound'],
      }),
    ),
    errors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
        description: 'Validation errors, one per offending field',
      }),
    ),
    timestamp: Type.String({ format: 'date-time', description: "When it was answered (Spring Boot's error body)" }),
    error: Type.String({
      description: "The HTTP reason phrase in English, whatever the language (Spring Boot's error body)",
    }),
    message: Type.String({ description: "The detail, as `detail` (Spring Boot's error body)" }),
    path: Type.String({ description: "The request path, as `instance` (Spring Boot's error body)" }),
  },
  { $id: 'Problem', additionalProperties: true, description: 'RFC 9457 problem details (application/problem+json)' },
)

/** The error responses a route documents besides its success. */
export function problemResponses(...statuses: number[]): Record<number, TSchema> {
  return Object.fromEntries(statuses.map((status) => [status, Type.Ref('Problem')]))
}
