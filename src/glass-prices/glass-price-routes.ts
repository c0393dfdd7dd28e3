import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { type Kysely, sql } from 'kysely'
import Type from 'typebox'
import type { Tables } from '../db/tables.js'
import { inTransaction } from '../db/transaction.js'
import { message, render } from '../domain/messages.js'
import { answerWrite, kyselySql, type WriteOutcome } from '../http/idempotency.js'
import { PageSchema, pagingQueryProperties, parsePageRequest } from '../http/page.js'
import { principalName } from '../http/principal.js'
import { entryNotFound, requestLanguage } from '../http/problem.js'
import { problemResponses } from '../http/schemas.js'
import { applyBulkPriceChange, previewBulkPriceChange, validateBulkChange } from './bulk-price-change.js'
import { parseGlassPriceFilter } from './glass-price-filter.js'
import {
  createGlassPrice,
  deleteGlassPrice,
  entryTag,
  findGlassPrice,
  listGlassPrices,
  parseId,
  toEntry,
  updateGlassPrice,
  validateGlassPriceInput,
} from './glass-price-repository.js'
import {
  BatchIdParamsSchema,
  BulkChangeBodySchema,
  BulkChangePreviewSchema,
  BulkChangeQuerySchema,
  ChangeEntrySchema,
  ChangeLogQuerySchema,
  EntryHistoryItemSchema,
  EntryIdParamsSchema,
  GlassPriceEntrySchema,
  GlassPriceInputSchema,
  GlassPriceListItemSchema,
  GlassPriceListQuerySchema,
  LISTING_DEFAULT_SIZE,
  PriceChangeSchema,
  RevertResultSchema,
  roundingsBeyondContract,
  ScheduledChangeSchema,
  ScheduledIdParamsSchema,
} from './glass-price-schemas.js'
import { changeEntries, entryHistory, hasHistory, listChanges, parseChangeLogFilter } from './price-history.js'
import { revertChange } from './revert-change.js'
import {
  cancelScheduledChange,
  findScheduledChange,
  listScheduledChanges,
  scheduleBulkChange,
} from './scheduled-changes.js'
import { type JobOperation, prefersAsync, WriteJobSchema } from './write-jobs.js'

/*
 * The glass price list endpoints (`/api/v2/glasses/prices…`). The static paths (`/list`, `/changes`) win over
 * `/:id` in the router, whatever the registration order; the handlers unpack, call one function and answer.
 */

const base = '/api/v2/glasses/prices'
const tags = ['glass price list']

const EmptyBody = { type: 'null', description: 'Empty body' } as const

const ifMatchHeader = Type.Object({
  'if-match': Type.Optional(
    Type.String({
      description: 'The ETag of the version this write expects; a stale one → 412 (absent: last write wins)',
    }),
  ),
})

function pageOf(query: Record<string, unknown>, maxSize: number) {
  return parsePageRequest(query, { defaultSize: LISTING_DEFAULT_SIZE, maxSize })
}

/** The glass price list: listing, CRUD, bulk change, history and revert. */
export async function glassPriceRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  // Route flags of auth.ts: writes need prices:write; reads of purchase prices and history may need prices:read.
  const writes = { writesCatalog: true }
  // Bulk changes and reverts of hundreds of thousands of entries take tens of seconds: their own deadline.
  const longWrites = { writesCatalog: true, timeoutMs: app.config.longWriteTimeoutMs }
  // The bulk change's dry run writes nothing: a reader may preview it.
  const bulkChange = { ...longWrites, previewsWithDryRun: true }
  const readsPurchasePrices = { readsPurchasePrices: true }
  /** A long write: a job when the client prefers `respond-async`, else answered when done. */
  const writeOrJob = (
    request: FastifyRequest,
    reply: FastifyReply,
    operation: JobOperation,
    write: (db: Kysely<Tables>) => Promise<WriteOutcome>,
  ) =>
    prefersAsync(request)
      ? app.writeJobs.start(request, reply, operation, (complete) =>
          inTransaction(app.db.primary, async (trx) => {
            // A job has no deadline, and its statements none either (as the upload's).
            await sql`SET LOCAL statement_timeout = 0`.execute(trx)
            await complete(kyselySql(trx), await write(trx))
          }),
        )
      : answerWrite(request, reply, app.db.primary, (db) =>
          inTransaction(db, async (trx) => {
            // Its statements may take as long as its request (LONG_WRITE_TIMEOUT_MS), not the pool's short
            // statement_timeout: a deadline that is given up cancels them anyway (request-timeout.ts).
            if (app.db.driver === 'postgres') {
              await sql`SET LOCAL statement_timeout = ${sql.raw(String(app.config.longWriteTimeoutMs))}`.execute(trx)
            }
            return write(trx)
          }),
        )

  app.get(
    `${base}/jobs/:id`,
    {
      config: readsPurchasePrices,
      schema: {
        tags,
        operationId: 'getGlassPriceJob',
        summary: 'A write run as a job (Prefer: respond-async): its state, and its result or problem',
        description:
          'running, then succeeded (`result`: the status, headers and body the synchronous call answers; `batch`: ' +
          'the change it wrote) or failed (`problem`; nothing was written). A job whose instance stopped is failed ' +
          '(`job-lost`).',
        params: Type.Object({ id: Type.String({ description: 'The job id', examples: ['12'] }) }),
        response: { 200: WriteJobSchema, ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => {
      const id = parseId(request.params.id)
      const job = await app.writeJobs.find(id)
      if (!job) throw entryNotFound(message('job.notFound', { id }))
      return job
    },
  )

  app.get(
    `${base}/list`,
    {
      config: readsPurchasePrices,
      schema: {
        tags,
        operationId: 'listGlassPrices',
        summary: 'A page of the glass price list, filtered and sorted',
        description:
          'Filters: case-insensitive substrings (whole where `exact` names them), inclusive price ranges ' +
          '(from > to → 400). Paging as Spring Data ' +
          '(`page` from 0, `size` default 20).',
        querystring: GlassPriceListQuerySchema,
        response: { 200: PageSchema(GlassPriceListItemSchema), ...problemResponses(400, 503) },
      },
    },
    async (request) => {
      const query = request.query
      const requested = query.sortColumn !== undefined || query.sortDirection !== undefined
      const sortColumn = query.sortColumn ?? 'ID'
      const sortDirection = query.sortDirection ?? 'ASC'
      const page = pageOf(request.query, app.config.maxPageSize)
      return listGlassPrices(
        app.db.read,
        {
          filter: parseGlassPriceFilter(query),
          // The envelope's `sort` says whether the request asked for an order, as Spring's does.
          page: {
            ...page,
            sort: requested
              ? [{ property: sortColumn, direction: sortDirection === 'DESC' ? 'desc' : 'asc', ignoreCase: false }]
              : [],
          },
          sortColumn,
          sortDirection,
          timezone: app.config.businessTimezone,
        },
        { totals: app.resultCache, pages: app.pageCache },
        app.searchIndex,
      )
    },
  )

  app.post(
    `${base}/list`,
    {
      config: bulkChange,
      schema: {
        tags,
        operationId: 'changeGlassPrices',
        summary: 'Bulk price change of the entries the filters select',
        description:
          'new = round_half_up((base × (coefficient ?? 1) + (difference ?? 0)) / step) × step, step 1 | 10 | 100. ' +
          "The query filters are the listing's; the body's priceFrom/priceTo bound the BASE price (inclusive). " +
          'All or nothing: 422 naming the entries when any would get a value ≤ 0. Answers 200 with an empty body ' +
          'and the headers X-Changed-Count and X-Price-Change-Batch; with `dryRun=true`, the preview and no write. ' +
          `Beyond the contract: \`percent\` instead of the coefficient, ${roundingsBeyondContract()} and ` +
          '`direction` UP; with a future `effectiveAt`, 202 with the scheduled change (applied then, to what the ' +
          'filters select then; cancel it with DELETE …/scheduled/{id}).',
        querystring: BulkChangeQuerySchema,
        body: BulkChangeBodySchema,
        response: {
          200: { ...BulkChangePreviewSchema, description: 'Empty body; with dryRun=true, the preview' },
          202: {
            ...Type.Union([WriteJobSchema, ScheduledChangeSchema]),
            description:
              'Prefer: respond-async: the job, which Location names; a future effectiveAt: the scheduled change, ' +
              'which Location names',
          },
          ...problemResponses(400, 409, 415, 422, 503),
        },
      },
    },
    async (request, reply) => {
      const query = request.query
      const filter = parseGlassPriceFilter(query)
      const { rule, effectiveAt } = validateBulkChange(request.body)
      if (query.dryRun) {
        const preview = await previewBulkPriceChange(app.db.primary, filter, rule)
        // The reasons are words for the price manager: in the language of the request, as problems are.
        const language = requestLanguage(request)
        reply.header('content-language', language)
        return {
          ...preview,
          reasons: preview.reasons.map((reason) => ({ ...reason, message: render(reason.message, language) })),
        }
      }
      if (effectiveAt !== undefined) {
        return answerWrite(request, reply, app.db.primary, async (db) => {
          const scheduled = await scheduleBulkChange(db, filter, rule, effectiveAt, principalName(request))
          return { status: 202, headers: { location: `${base}/scheduled/${scheduled.id}` }, body: scheduled }
        })
      }
      return writeOrJob(request, reply, 'bulk-change', async (db) => {
        const result = await applyBulkPriceChange(db, filter, rule, principalName(request))
        return {
          status: 200,
          headers: { 'x-changed-count': String(result.changedCount), 'x-price-change-batch': String(result.batch) },
        }
      })
    },
  )

  app.post(
    base,
    {
      config: writes,
      schema: {
        tags,
        operationId: 'createGlassPrice',
        summary: 'Create an entry',
        description: 'One entry per manufacturer, brand and model, case-insensitively (duplicate → 409).',
        body: GlassPriceInputSchema,
        response: { 200: GlassPriceEntrySchema, ...problemResponses(400, 409, 415, 503) },
      },
    },
    async (request, reply) => {
      const input = validateGlassPriceInput(request.body)
      return answerWrite(request, reply, app.db.primary, async (db) => {
        const row = await createGlassPrice(db, input, principalName(request))
        return { status: 200, headers: { etag: entryTag(row) }, body: toEntry(row) }
      })
    },
  )

  app.get(
    `${base}/changes`,
    {
      config: readsPurchasePrices,
      schema: {
        tags,
        operationId: 'listGlassPriceChanges',
        summary: 'The changes (batches) of the glass price list, newest first',
        description:
          'A scheduled bulk change appears here once applied (its parameters carry `scheduled` and `effectiveAt`); ' +
          'while pending, cancelled or refused it is listed by GET …/scheduled. Beyond the contract, narrowed by ' +
          'who made the change (`user`), the days it was made on (`from`, `to`) and its kinds (`action`); the ' +
          'entries a change touched are listed by GET …/changes/{batch}/entries.',
        querystring: ChangeLogQuerySchema,
        response: { 200: PageSchema(PriceChangeSchema), ...problemResponses(400, 503) },
      },
    },
    async (request) =>
      listChanges(
        app.db.primary,
        pageOf(request.query, app.config.maxPageSize),
        parseChangeLogFilter(request.query),
        app.config.businessTimezone,
      ),
  )

  app.get(
    `${base}/changes/:batch/entries`,
    {
      config: readsPurchasePrices,
      schema: {
        tags,
        operationId: 'listGlassPriceChangeEntries',
        summary: 'The entries a change touched, by id, with what it wrote field by field (old → new)',
        description:
          "Beyond the contract. Each entry's key is as it is now, or as last recorded when the entry was deleted " +
          'since (`exists` false); its `changes` are the values before and after this change, prices as numbers.',
        params: BatchIdParamsSchema,
        querystring: Type.Object(pagingQueryProperties(LISTING_DEFAULT_SIZE)),
        response: { 200: PageSchema(ChangeEntrySchema), ...problemResponses(400, 404, 503) },
      },
    },
    async (request) =>
      changeEntries(
        app.db.primary,
        parseId(request.params.batch, 'batch'),
        pageOf(request.query, app.config.maxPageSize),
      ),
  )

  app.get(
    `${base}/scheduled`,
    {
      config: readsPurchasePrices,
      schema: {
        tags,
        operationId: 'listScheduledGlassPriceChanges',
        summary:
          'Bulk changes and uploads scheduled with an effective date-time: the pending ones first (soonest first), then the rest',
        querystring: Type.Object(pagingQueryProperties(LISTING_DEFAULT_SIZE)),
        response: { 200: PageSchema(ScheduledChangeSchema), ...problemResponses(503) },
      },
    },
    async (request) => listScheduledChanges(app.db.primary, pageOf(request.query, app.config.maxPageSize)),
  )

  app.get(
    `${base}/scheduled/:id`,
    {
      config: readsPurchasePrices,
      schema: {
        tags,
        operationId: 'getScheduledGlassPriceChange',
        summary: 'A scheduled bulk change or upload: pending, applied (with its change), cancelled or failed',
        params: ScheduledIdParamsSchema,
        response: { 200: ScheduledChangeSchema, ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => findScheduledChange(app.db.primary, parseId(request.params.id)),
  )

  app.delete(
    `${base}/scheduled/:id`,
    {
      config: writes,
      schema: {
        tags,
        operationId: 'cancelScheduledGlassPriceChange',
        summary: 'Cancel a pending scheduled bulk change or upload (409 once it ran, failed or was cancelled)',
        params: ScheduledIdParamsSchema,
        response: { 200: ScheduledChangeSchema, ...problemResponses(400, 404, 409, 503) },
      },
    },
    async (request, reply) => {
      const id = parseId(request.params.id)
      return answerWrite(request, reply, app.db.primary, async (db) => ({
        status: 200,
        headers: {},
        body: await cancelScheduledChange(db, id, principalName(request)),
      }))
    },
  )

  app.post(
    `${base}/changes/:batch/revert`,
    {
      config: longWrites,
      schema: {
        tags,
        operationId: 'revertGlassPriceChange',
        summary: 'Revert a change: restore the entries that still hold its values',
        description:
          'Entries edited or deleted since are left alone and listed as conflicts (409 when that is every one). ' +
          'The revert is itself a change; a change can be reverted once (again → 409).',
        params: BatchIdParamsSchema,
        response: {
          200: RevertResultSchema,
          202: { ...WriteJobSchema, description: 'Prefer: respond-async: the job, which Location names' },
          ...problemResponses(400, 404, 409, 503),
        },
      },
    },
    async (request, reply) => {
      const batch = parseId(request.params.batch, 'batch')
      return writeOrJob(request, reply, 'revert', async (db) => ({
        status: 200,
        headers: {},
        body: await revertChange(db, batch, principalName(request)),
      }))
    },
  )

  app.get(
    `${base}/:id`,
    {
      config: readsPurchasePrices,
      schema: {
        tags,
        operationId: 'getGlassPrice',
        summary: 'Read an entry',
        params: EntryIdParamsSchema,
        response: { 200: GlassPriceEntrySchema, ...problemResponses(400, 404, 503) },
      },
    },
    async (request, reply) => {
      const id = parseId(request.params.id)
      const row = await findGlassPrice(app.db.primary, id)
      if (!row) throw entryNotFound(message('entry.notFound', { id }))
      reply.header('etag', entryTag(row))
      return toEntry(row)
    },
  )

  app.put(
    `${base}/:id`,
    {
      config: writes,
      schema: {
        tags,
        operationId: 'updateGlassPrice',
        summary: 'Replace an entry',
        params: EntryIdParamsSchema,
        headers: ifMatchHeader,
        body: GlassPriceInputSchema,
        response: { 200: GlassPriceEntrySchema, ...problemResponses(400, 404, 409, 412, 415, 503) },
      },
    },
    async (request, reply) => {
      const id = parseId(request.params.id)
      const input = validateGlassPriceInput(request.body)
      return answerWrite(request, reply, app.db.primary, async (db) => {
        const row = await updateGlassPrice(db, id, input, principalName(request), ifMatch(request))
        return { status: 200, headers: { etag: entryTag(row) }, body: toEntry(row) }
      })
    },
  )

  app.delete(
    `${base}/:id`,
    {
      config: writes,
      schema: {
        tags,
        operationId: 'deleteGlassPrice',
        summary: 'Delete an entry (its history stays)',
        params: EntryIdParamsSchema,
        headers: ifMatchHeader,
        response: { 200: EmptyBody, ...problemResponses(400, 404, 412, 503) },
      },
    },
    async (request, reply) => {
      const id = parseId(request.params.id)
      return answerWrite(request, reply, app.db.primary, async (db) => {
        await deleteGlassPrice(db, id, principalName(request), ifMatch(request))
        return { status: 200, headers: {} }
      })
    },
  )

  app.get(
    `${base}/:id/history`,
    {
      config: readsPurchasePrices,
      schema: {
        tags,
        operationId: 'glassPriceHistory',
        summary: "An entry's changes, newest first (also after it was deleted)",
        params: EntryIdParamsSchema,
        querystring: Type.Object(pagingQueryProperties(LISTING_DEFAULT_SIZE)),
        response: { 200: PageSchema(EntryHistoryItemSchema), ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => {
      const id = parseId(request.params.id)
      const db = app.db.primary
      if (!(await findGlassPrice(db, id)) && !(await hasHistory(db, id))) {
        throw entryNotFound(message('entry.noHistory', { id }))
      }
      return entryHistory(db, id, pageOf(request.query, app.config.maxPageSize))
    },
  )
}

function ifMatch(request: FastifyRequest): string | undefined {
  const value = request.headers['if-match']
  return Array.isArray(value) ? value.join(',') : value
}
