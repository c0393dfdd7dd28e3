import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import Type, { type TSchema } from 'typebox'
import { MAX_TEXT_LENGTH } from '../../domain/limits.js'
import { NullableNumber, problemResponses } from '../../http/schemas.js'
import { StringEnum } from '../../http/validation.js'
import type { Kind } from '../kinds/kind.js'
import { glasses, kindByPath, kinds } from '../kinds/kinds.js'
import { FACET_VALUES, facetFields } from './facet-fields.js'
import { searchFacets } from './facets.js'
import { searchBodySchema } from './search-routes.js'
import { MAX_SUGGESTIONS, suggest } from './suggest.js'

/*
 * What a search form needs beyond the search: the drop-down values of every field under the current filters
 * (facets, one endpoint per kind beside its search), and suggestions for what is typed into one field.
 */

const FacetValueSchema = Type.Object({ value: Type.String(), count: Type.Integer() })

const TextFacetSchema = Type.Object({
  values: Type.Array(FacetValueSchema, {
    description: `The most frequent values (at most ${FACET_VALUES}), by count then value`,
  }),
  distinct: Type.Integer({ description: 'How many distinct values there are in all' }),
})

const NumericFacetSchema = Type.Object({ min: NullableNumber(), max: NullableNumber() })

const pascal = (path: string) => path.replace(/(^|-)([a-z])/g, (_m, _dash, letter: string) => letter.toUpperCase())

/** The facets answer of a kind: every text and numeric field either mode can show (price-list mode fewer). */
function facetsSchema(kind: Kind) {
  const { text, numeric } = facetFields(kind, false)
  const optional = (schema: TSchema) => Type.Optional(schema)
  return Type.Object(
    {
      total: Type.Integer({ description: 'Items matching every filter' }),
      text: Type.Object(Object.fromEntries(text.map((field) => [field.name, optional(TextFacetSchema)])), {
        description: "Per text field: its values under every filter but the field's own",
      }),
      numeric: Type.Object(Object.fromEntries(numeric.map((field) => [field.name, optional(NumericFacetSchema)])), {
        description: 'Per numeric field: its least and greatest value under every filter',
      }),
    },
    { title: `${kind.title} facets` },
  )
}

const SuggestionsSchema = Type.Object(
  {
    suggestions: Type.Array(
      Type.Object({
        value: Type.String(),
        count: Type.Integer({ description: 'Items with this value' }),
        match: StringEnum(['prefix', 'substring', 'similar'] as const, {
          description: 'prefix: starts with the text; substring: contains it; similar: close by trigrams (a typo)',
        }),
      }),
    ),
  },
  { title: 'Suggestions' },
)

export async function facetRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  for (const kind of kinds) {
    app.post(
      `/api/v2/good/nomenclature/search/${kind.path}/facets`,
      {
        schema: {
          tags: ['nomenclature'],
          operationId: `facets${pascal(kind.path)}`,
          summary: `Drop-down values of the ${kind.title.toLowerCase()} search`,
          description:
            'The same body as the search. For each text field, its distinct values with their counts under every ' +
            "filter except the field's own (so a drop-down keeps offering the alternatives); for each numeric " +
            'field, its least and greatest value under all of them. Cached until the data changes.',
          body: searchBodySchema(kind),
          response: { 200: facetsSchema(kind), ...problemResponses(400, 415, 503) },
        },
      },
      async (request) => {
        const body = request.body
        return searchFacets(
          app.db.read,
          kind,
          { byPriceList: body.byPriceList, filters: body, exact: body.exact },
          app.resultCache,
          app.searchIndex,
        )
      },
    )
  }

  app.get(
    '/api/v2/good/nomenclature/suggest',
    {
      schema: {
        tags: ['nomenclature'],
        operationId: 'suggest',
        summary: 'Suggestions for what is typed into a field',
        description:
          'The values of one text field of a kind for the text typed: those starting with it first, then those ' +
          'containing it, then those similar to it by trigrams (so "essilr" finds "Essilor"); case and ё/е are ' +
          `ignored. At most ${MAX_SUGGESTIONS}, each with how many items have it.`,
        querystring: Type.Object({
          kind: StringEnum(kinds.map((k) => k.path) as [string, ...string[]], {
            description: 'The product kind',
            examples: [glasses.path],
          }),
          field: Type.String({
            minLength: 1,
            maxLength: 64,
            description: 'A text item field of the kind (brand, …)',
            examples: ['brand'],
          }),
          // The first letters of the brand the frames' search example names.
          q: Type.String({
            maxLength: MAX_TEXT_LENGTH,
            description: 'What was typed',
            examples: [String(glasses.example.brand).slice(0, 3).toLowerCase()],
          }),
          byPriceList: Type.Optional(
            Type.Boolean({
              default: false,
              description: 'true: values of the price list; false: of priced goods',
              examples: [false],
            }),
          ),
          limit: Type.Optional(
            Type.Integer({ minimum: 1, maximum: MAX_SUGGESTIONS, default: MAX_SUGGESTIONS, examples: [5] }),
          ),
        }),
        response: { 200: SuggestionsSchema, ...problemResponses(400, 503) },
      },
    },
    async (request) => {
      const query = request.query
      const kind = kindByPath.get(query.kind) as Kind
      return {
        suggestions: await suggest(
          app.db.read,
          kind,
          { field: query.field, q: query.q, byPriceList: query.byPriceList ?? false, limit: query.limit },
          app.resultCache,
          app.searchIndex,
        ),
      }
    },
  )
}
