import { type RawBuilder, type SqlBool, sql } from 'kysely'
import type { Filter } from '../catalog/kinds/kind.js'
import { glasses } from '../catalog/kinds/kinds.js'
import { entryCondition, textMatchSql } from '../catalog/search/search-query.js'
import { compareDecimal, type DecimalValue, parseDecimal } from '../domain/decimal.js'
import {
  GLASS_PRICE_BAND_FIELDS,
  GLASS_PRICE_FILTERS,
  GLASS_PRICE_TEXT_FILTERS,
  type GlassPriceFilter,
  type GlassPriceFilterSource,
  type GlassPriceTextFilter,
} from '../domain/glass-price-fields.js'
import { canonicalText } from '../domain/key-text.js'
import { message } from '../domain/messages.js'
import { badRequest, type FieldError, listFieldErrors } from '../http/problem.js'

/*
 * The glass price list's filters, as the service reads them: the listing shows, the bulk change changes and the
 * export writes exactly the entries these conditions select, so what the price manager sees is what changes. The
 * filters themselves are described in domain/glass-price-fields.ts; this reads and translates that description.
 */

export {
  GLASS_PRICE_TEXT_FILTERS,
  type GlassPriceFilter,
  type GlassPriceTextFilter,
} from '../domain/glass-price-fields.js'

const textFilters = GLASS_PRICE_TEXT_FILTERS
const ranges = GLASS_PRICE_BAND_FIELDS.map((field) => [field.from.parameter, field.to.parameter] as const)

/**
 * Reads the filters from query parameters (as validated by `glassPriceFilterQueryProperties`, or raw from a CLI).
 * Text is brought to the keys' one form (domain/key-text.ts), so a filter typed with a no-break space finds its
 * entries. Blank values are absent. Throws a 400 naming the fields when a value is not a number or a range is reversed.
 */
export function parseGlassPriceFilter(query: Readonly<Record<string, unknown>>): GlassPriceFilter {
  const filter: Record<string, string> = {}
  const errors: FieldError[] = []
  for (const name of textFilters) {
    const value = query[name]
    if (value === undefined || value === null) continue
    const trimmed = canonicalText(String(value)).trim()
    if (trimmed !== '') filter[name] = trimmed
  }
  const exact = readExact(query.exact, errors).filter((name) => filter[name] !== undefined)
  const decimals: Record<string, DecimalValue> = {}
  for (const name of ranges.flat()) {
    const value = query[name]
    if (value === undefined || value === null || String(value).trim() === '') continue
    const parsed = typeof value === 'number' || typeof value === 'string' ? parseDecimal(value) : undefined
    if (!parsed) {
      errors.push({ field: name, message: message('validation.number') })
      continue
    }
    decimals[name] = parsed
    filter[name] = parsed.text
  }
  for (const [from, to] of ranges) {
    const low = decimals[from]
    const high = decimals[to]
    if (low && high && compareDecimal(low, high) > 0) {
      errors.push({ field: from, message: message('validation.notGreaterThan', { other: to }) })
    }
  }
  if (errors.length > 0) {
    throw badRequest(message('validation.invalidFilters', { errors: listFieldErrors(errors) }), errors)
  }
  return exact.length > 0 ? { ...filter, exact } : filter
}

/**
 * The text filters `exact` names (a list, or one name; a command line may separate names with commas), in the
 * order of {@link GLASS_PRICE_TEXT_FILTERS}. An unknown name is an error naming it (the API's schema refuses it
 * first, in the same words).
 */
function readExact(value: unknown, errors: FieldError[]): GlassPriceTextFilter[] {
  if (value === undefined || value === null) return []
  const names = (Array.isArray(value) ? value : [value]).flatMap((item) => String(item).split(','))
  const given = names.map((name) => name.trim()).filter((name) => name !== '')
  const unknown = given.filter((name) => !(textFilters as readonly string[]).includes(name))
  if (unknown.length > 0) {
    errors.push({
      field: 'exact',
      message: message('validation.unknownNames', { names: unknown.join(', '), allowed: textFilters.join(', ') }),
    })
  }
  return textFilters.filter((name) => given.includes(name))
}

/**
 * The frames kind's filter a SKU-attribute source names (its price-list mode is what the listing reads). A name the
 * kind lacks is a programming error, caught by the description's test.
 */
export function skuFilterOf(source: Extract<GlassPriceFilterSource, { from: 'sku' }>): Filter {
  const filter = glasses.filters.find((candidate) => candidate.name === source.filter)
  if (!filter) throw new Error(`glass price filter source: the frames kind has no filter ${source.filter}`)
  return filter
}

/**
 * The SQL conditions of a filter on the glass price list aliased `e` (`glasses_price as e`); AND them all.
 * Substrings match as the nomenclature search does (case, `ё`, `%` and `_` literal), exact text on equal normal
 * forms; ranges are inclusive. A filter on the SKUs' attribute selects the entries pricing at least one matching
 * SKU of the catalogue, as the frames' price-list search does.
 */
export function glassPriceFilterConditions(filter: GlassPriceFilter): RawBuilder<SqlBool>[] {
  const conditions: RawBuilder<SqlBool>[] = []
  for (const field of GLASS_PRICE_FILTERS as readonly (typeof GLASS_PRICE_FILTERS)[number][]) {
    const { source } = field
    switch (field.match) {
      case 'text': {
        const text = filter[field.name]
        if (text === undefined) break
        const exact = filter.exact?.includes(field.name) ?? false
        conditions.push(
          source.from === 'entry'
            ? textMatchSql(sql.ref(`e.${source.column}`), text, exact)
            : entryCondition(glasses, skuFilterOf(source), text, exact),
        )
        break
      }
      case 'band':
        for (const [bound, operator] of [
          [filter[field.from.parameter], '>='],
          [filter[field.to.parameter], '<='],
        ] as const) {
          if (bound !== undefined) {
            conditions.push(sql<SqlBool>`${sql.ref(`e.${field.source.column}`)} ${sql.raw(operator)} ${bound}::numeric`)
          }
        }
        break
      default:
        unknownMatch(field)
    }
  }
  return conditions
}

/** A described filter no translation here knows: a type error, and at run time a failure rather than no filter. */
function unknownMatch(field: never): never {
  throw new Error(`glass price filter ${JSON.stringify(field)}: no SQL for its match`)
}

/** The conditions joined with AND (`TRUE` when there are none), for hand-written statements. */
export function glassPriceWhereSql(conditions: readonly RawBuilder<SqlBool>[]): RawBuilder<SqlBool> {
  return conditions.length === 0 ? sql<SqlBool>`TRUE` : sql<SqlBool>`${sql.join(conditions, sql` AND `)}`
}
