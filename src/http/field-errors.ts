import { type MessageKey, message, messageOf, type Text } from '../domain/messages.js'
import type { FieldError } from './problem.js'

/*
 * Schema validation errors (Ajv's) in words a front-end developer reads: one `{field, message}` per field, from
 * the message catalogue.
 */

export interface AjvError {
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
  const byField = new Map<string, Text>()
  // A list of names (`exact`): the unknown ones are named together, on the list's own field.
  const unknownNames = new Map<string, { names: string[]; allowed: string }>()
  for (const error of validation) {
    let field = error.instancePath.replace(/^\//, '').replace(/\//g, '.').replace(/~1/g, '/').replace(/~0/g, '~')
    let text: Text
    const item = /^(.+)\.\d+$/.exec(field)
    if (item && error.keyword === 'enum' && typeof error.data === 'string') {
      const list = item[1] as string
      const allowed = ((error.params.allowedValues as unknown[] | undefined) ?? []).map(String).join(', ')
      const entry = unknownNames.get(list) ?? { names: [], allowed }
      if (!entry.names.includes(error.data)) entry.names.push(error.data)
      unknownNames.set(list, entry)
      continue
    }
    if (error.keyword === 'required') {
      const missing = String(error.params.missingProperty ?? '')
      field = field ? `${field}.${missing}` : missing
      text = message('validation.required')
    } else if (error.keyword === 'type' && error.data === null) {
      text = message('validation.notNull')
    } else if (error.keyword === 'type') {
      const expected = String(error.params.type ?? '')
        .split(',')
        .filter((t) => t !== 'null')
      const single = expected.includes('number') ? 'number' : expected.length === 1 ? expected[0] : undefined
      text =
        single && typeMessages.has(`validation.${single}`)
          ? messageOf(`validation.${single}` as MessageKey)
          : message('validation.type', { type: expected.join(' or ') || 'value' })
    } else if (error.keyword === 'pattern' && error.params.pattern && String(error.params.pattern).includes('\\d')) {
      text = message('validation.number')
    } else if (error.keyword === 'enum' || error.keyword === 'const') {
      const allowed = (error.params.allowedValues as unknown[] | undefined) ?? [error.params.allowedValue]
      text = message('validation.oneOf', { allowed: allowed.map(String).join(', ') })
    } else if (error.keyword in limitMessages) {
      const limit = String(error.params.limit)
      text = messageOf(limitMessages[error.keyword] as MessageKey, { limit, min: limit, max: limit, bound: limit })
    } else if (error.keyword === 'additionalProperties') {
      text = message('validation.additionalProperty', { property: String(error.params.additionalProperty) })
    } else if (error.keyword === 'anyOf') {
      continue
    } else {
      text = error.message ?? message('validation.invalidValue')
    }
    if (field === '') field = '(body)'
    if (!byField.has(field)) byField.set(field, text)
  }
  for (const [field, { names, allowed }] of unknownNames) {
    if (!byField.has(field))
      byField.set(field, message('validation.unknownNames', { names: names.join(', '), allowed }))
  }
  return [...byField].map(([field, message]) => ({ field, message }))
}
