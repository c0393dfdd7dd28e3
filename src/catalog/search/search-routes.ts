import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { Kysely } from 'kysely'
import Type, { type TSchema, type TUnsafe } from 'typebox'
import type { Tables } from '../../db/tables.js'
import { MAX_TEXT_LENGTH } from '../../domain/limits.js'
import { type Page, PageSchema, pagingQueryProperties, parsePageRequest } from '../../http/page.js'
import {
  NullableDecimalInput,
  NullableInteger,
  NullableNumber,
  NullableString,
  problemResponses,
} from '../../http/schemas.js'
import { ExactFiltersSchema } from '../../http/validation.js'
import { type PageCaches, readCountedPage } from '../../paged-reads/counted-page.js'
import { readDataVersion, searchReads } from '../freshness/catalog-state.js'
import type { Filter, ItemField, Kind } from '../kinds/kind.js'
import { kinds } from '../kinds/kinds.js'
import type { SearchIndexAnswers } from './index-answers.js'
import { readPrescription } from './prescription.js'
import {
  activeFilters,
  buildSearchQuery,
  DATA_VERSION,
  type ExactFilters,
  type FilterValues,
  type SearchRequest,
  searchCountKey,
} from './search-query.js'

const SEARCH_DEFAULT_SIZE = 10

/**
 * A search body as validated: `byPriceList`, the kind's filters (text, a decimal, or null), and `exact` (the text
 * filters compared whole; ExactFiltersSchema).
 */
export type SearchBody = { readonly byPriceList: boolean; readonly exact?: ExactFilters } & FilterValues

/**
 * The request body of a kind's search: `byPriceList` and the kind's filters; unknown fields are ignored. The
 * filters are named by the descriptor at run time, which TypeBox's static type cannot follow, so the schema states
 * its type ({@link SearchBody}) as the validation guarantees it.
 */
export function searchBodySchema(kind: Kind): TUnsafe<SearchBody> {
  const filters: Record<string, TSchema> = {}
  for (const filter of kind.filters) filters[filter.name] = Type.Optional(filterSchema(filter))
  const schema = Type.Object(
    {
      byPriceList: Type.Boolean({
        description: 'true: search the price list; false: search the matview (priced SKUs)',
      }),
      ...filters,
      exact: Type.Optional(ExactFiltersSchema(textFilterNames(kind), '["brand"]')),
    },
    {
      title: `${kind.title} search`,
      additionalProperties: true,
      examples: [{ byPriceList: false, ...kind.example }],
    },
  )
  return Type.Unsafe<SearchBody>(schema)
}

/** The kind's text filters: those `exact` may name. */
export function textFilterNames(kind: Kind): string[] {
  return kind.filters.filter((filter) => filter.match === 'substring').map((filter) => filter.name)
}

function filterSchema(filter: Filter): TSchema {
  const beyond = filter.prescription ? ' (prescription filter, beyond the contract)' : ''
  if (filter.match === 'substring') {
    return NullableString({
      maxLength: MAX_TEXT_LENGTH,
      description: `Case-insensitive substring (whole where \`exact\` names it); empty = no filter${beyond}`,
    })
  }
  const description =
    filter.match === 'equals'
      ? 'Equal as a number (1.6 = 1.60)'
      : `Covered: a concrete value equal to it, or a range containing it${beyond}`
  return NullableDecimalInput({ description })
}

function itemFieldSchema(field: ItemField): TSchema {
  if (field.source.from === 'price') return Type.Number({ description: 'Retail price, roubles' })
  if (field.type === 'text') return NullableString()
  if (field.type === 'integer') return NullableInteger()
  return NullableNumber()
}

/** The item of a kind's search page: every field present, `null` where unknown. */
function searchItemSchema(kind: Kind) {
  const properties: Record<string, TSchema> = {}
  for (const field of kind.itemFields) properties[field.name] = itemFieldSchema(field)
  return Type.Object(properties, { title: `${kind.title} item` })
}

/** Decimal columns arrive as exact strings; JSON carries them as numbers (display only, no arithmetic). */
function numericFieldsOf(kind: Kind): string[] {
  return kind.itemFields.filter((field) => field.type !== 'text').map((field) => field.name)
}

/** Runs one search: its page and exact total, read as `readCountedPage` says (fenced, cached per version). */
async function searchKind(
  db: Kysely<Tables>,
  kind: Kind,
  request: SearchRequest,
  caches: PageCaches = {},
  index?: SearchIndexAnswers,
): Promise<Page<Record<string, unknown>>> {
  request = { ...request, filters: readPrescription(kind, request.filters) }
  const indexed = await index?.search(kind, request)
  if (indexed) return indexed
  const countKey = searchCountKey(kind, request)
  const numericFields = numericFieldsOf(kind)
  const { page, size, sort } = request.page
  return readCountedPage(
    {
      filtered: activeFilters(kind, request.filters, request.exact).length > 0,
      countKey,
      pageKey: JSON.stringify([countKey, page, size, sort]),
      page: request.page,
      async count() {
        // Built only when a count runs (most requests find their total remembered).
        const result = await buildSearchQuery(db, kind, request).count.executeTakeFirstOrThrow()
        return { value: Number(result.count), version: result[DATA_VERSION] }
      },
      currentVersion: () => readDataVersion(db, kind, searchReads(request.byPriceList)),
      // The natural order has an index on every table a search reads; a requested sort may not.
      walkable: request.page.sort.length === 0,
      async readRows(fenced, walk) {
        const rows = await buildSearchQuery(db, kind, request, { fenced, walk }).page.execute()
        const version = rows[0]?.[DATA_VERSION] as string | undefined
        for (const row of rows) {
          delete row[DATA_VERSION]
          for (const name of numericFields) {
            const value = row[name]
            if (value !== null && value !== undefined) row[name] = Number(value)
          }
        }
        return { rows, version }
      },
    },
    caches,
  )
}

/** The seven search endpoints: one registration per kind descriptor, one handler. */
export async function searchRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  for (const kind of kinds) {
    const body = searchBodySchema(kind)
    app.post(
      `/api/v2/good/nomenclature/search/${kind.path}`,
      {
        schema: {
          tags: ['nomenclature'],
          operationId: `search${kind.path.replace(/(^|-)([a-z])/g, (_m, _dash, letter: string) => letter.toUpperCase())}`,
          summary: `Search ${kind.title.toLowerCase()}`,
          description:
            'A page of items matching the filters, each with its retail price. Paging and sort as Spring Data: ' +
            '`page` (from 0), `size` (default 10), `sort=field[,asc|desc][,ignorecase]` (repeatable, item fields only).',
          querystring: Type.Object({
            ...pagingQueryProperties(SEARCH_DEFAULT_SIZE),
            sort: Type.Optional(
              Type.Array(Type.String(), {
                description: `Sort: ${kind.itemFields.map((f) => f.name).join(', ')}; e.g. retailPrice,desc`,
                examples: [['retailPrice,desc']],
              }),
            ),
          }),
          body,
          response: { 200: PageSchema(searchItemSchema(kind)), ...problemResponses(400, 415, 503) },
        },
      },
      async (request) => {
        const filters = request.body
        return searchKind(
          app.db.read,
          kind,
          {
            byPriceList: filters.byPriceList,
            filters,
            exact: filters.exact,
            page: parsePageRequest(request.query, {
              defaultSize: SEARCH_DEFAULT_SIZE,
              maxSize: app.config.maxPageSize,
            }),
          },
          { totals: app.resultCache, pages: app.pageCache },
          app.searchIndex,
        )
      },
    )
  }
}
