import { Ajv, type Options } from 'ajv'
import addFormats from 'ajv-formats'
import type { FastifyInstance, FastifySchema } from 'fastify'
import Type, { type TSchema } from 'typebox'

/*
 * Two validators, as Spring binds them: a JSON body keeps its types (a string is not a boolean, and null stays
 * null, so `byPriceList: null` is an error rather than `false`), while query and path values are text and are
 * converted to the declared type (`priceFrom=1500` is a number; `priceFrom=x` is a 400).
 */

const common: Options = {
  allErrors: true,
  verbose: true,
  strict: false,
  allowUnionTypes: true,
  useDefaults: true,
  removeAdditional: false,
}

function newAjv(options: Options): Ajv {
  const ajv = new Ajv({ ...common, ...options })
  ;(addFormats as unknown as (ajv: Ajv) => void)(ajv)
  return ajv
}

/** Installs the validator compilers; shared schemas added with `app.addSchema` are visible to both. */
export function registerValidation(app: FastifyInstance): void {
  const bodyAjv = newAjv({ coerceTypes: false })
  const textAjv = newAjv({ coerceTypes: 'array' })
  const added = new Set<string>()
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : textAjv
    for (const shared of Object.values(app.getSchemas()) as { $id?: string }[]) {
      const key = `${httpPart === 'body' ? 'b' : 't'}:${shared.$id}`
      if (shared.$id && !added.has(key)) {
        ajv.addSchema(shared)
        added.add(key)
      }
    }
    return ajv.compile(schema) as never
  })
}

/** A string restricted to the given values; errors list them. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: Record<string, unknown> = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options })

export type RouteSchema = FastifySchema & { tags?: string[]; operationId?: string; summary?: string }
export type { TSchema }
