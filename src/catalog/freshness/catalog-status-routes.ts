import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import Type, { type Static } from 'typebox'
import { NullableInteger, NullableString, problemResponses } from '../../http/schemas.js'
import { kinds } from '../kinds/kinds.js'
import { readCatalogStates } from './catalog-state.js'

const KindStatusSchema = Type.Object({
  kind: Type.String({ description: 'The kind, as in /search/{kind}' }),
  items: Type.Integer({ description: 'Rows of the matview: priced SKUs (per zone for zoned kinds)' }),
  priceEntries: Type.Integer({ description: 'Entries of the price list' }),
  refreshedAt: NullableString({ format: 'date-time', description: 'When the matview was last refreshed' }),
  changedAt: NullableString({ format: 'date-time', description: 'When the price list or nomenclature last changed' }),
  stale: Type.Boolean({ description: 'Changes since the last refresh are not in the matview yet' }),
  lastRefreshMs: NullableInteger({ description: 'How long the last refresh took' }),
  dataGeneration: Type.Integer({ description: 'Grows with every committed write to the kind' }),
  refreshedGeneration: Type.Integer({ description: 'The data generation the matview shows' }),
})

export const CatalogStatusSchema = Type.Object(
  { kinds: Type.Array(KindStatusSchema) },
  { title: 'Nomenclature status' },
)
export type CatalogStatus = Static<typeof CatalogStatusSchema>

/** `GET /api/v2/good/nomenclature/status`: per kind, the matview's size and freshness. */
export async function catalogStatusRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/api/v2/good/nomenclature/status',
    {
      schema: {
        tags: ['nomenclature'],
        operationId: 'nomenclatureStatus',
        summary: 'Per kind: matview items, price entries, last refresh and whether it is stale',
        description:
          'A write to a price list or nomenclature makes its matview stale; a background refresh follows within ' +
          'about a second. Matview searches (`byPriceList=false`) show the data as of `refreshedAt`.',
        response: { 200: CatalogStatusSchema, ...problemResponses(503) },
      },
    },
    async (): Promise<CatalogStatus> => {
      // The primary, not a replica: the state is about what was written.
      const db = app.db.primary
      const states = new Map((await readCatalogStates(db)).map((state) => [state.kind, state]))
      const result: CatalogStatus['kinds'] = []
      for (const kind of kinds) {
        const { rows } = await sql<{ items: number | string; entries: number | string }>`
          SELECT (SELECT count(*) FROM ${sql.table(kind.matview)}) AS items,
                 (SELECT count(*) FROM ${sql.table(kind.priceTable)}) AS entries`.execute(db)
        const state = states.get(kind.path)
        result.push({
          kind: kind.path,
          items: Number(rows[0]?.items ?? 0),
          priceEntries: Number(rows[0]?.entries ?? 0),
          refreshedAt: state?.refreshedAt?.toISOString() ?? null,
          changedAt: state?.changedAt?.toISOString() ?? null,
          stale: state?.stale ?? false,
          lastRefreshMs: state?.refreshMs ?? null,
          dataGeneration: state?.dataGeneration ?? 0,
          refreshedGeneration: state?.refreshedGeneration ?? 0,
        })
      }
      return { kinds: result }
    },
  )
}
