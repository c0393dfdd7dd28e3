import { parse as parseQueryString } from 'node:querystring'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { registerCatalogMetrics } from './catalog/freshness/catalog-metrics.js'
import { catalogStatusRoutes } from './catalog/freshness/catalog-status-routes.js'
import { registerMatviewRefresh } from './catalog/freshness/matview-refresh.js'
import { glasses, kinds } from './catalog/kinds/kinds.js'
import { facetRoutes } from './catalog/search/facet-routes.js'
import type { SearchIndexAnswers } from './catalog/search/index-answers.js'
import { kindFormRoutes } from './catalog/search/kind-form-routes.js'
import { searchRoutes } from './catalog/search/search-routes.js'
import { SearchIndexThread } from './catalog/search-index/index-thread.js'
import { SearchIndex } from './catalog/search-index/search-index.js'
import type { ListingIndexAnswers, SearchIndexService } from './catalog/search-index/service-types.js'
import type { Config } from './config.js'
import type { Database } from './db/database.js'
import { glassPriceRoutes } from './glass-prices/glass-price-routes.js'
import { glassPriceTransferRoutes } from './glass-prices/glass-price-transfer-routes.js'
import { ScheduledChanges } from './glass-prices/scheduled-changes.js'
import { WriteJobs } from './glass-prices/write-jobs.js'
import { registerAuthentication } from './http/auth.js'
import { documentEdgeProblems } from './http/edge-problems.js'
import { problemServerOptions, registerErrorHandler } from './http/error-handler.js'
import { registerIdempotency } from './http/idempotency.js'
import { registerJsonContentType } from './http/json-responses.js'
import { LogLevels } from './http/log-levels.js'
import { loggerRoutes } from './http/logger-routes.js'
import { registerMetrics } from './http/metrics.js'
import { registerOpenApi } from './http/openapi.js'
import { operationsRoutes } from './http/operations-routes.js'
import { registerRequestIdHeader, requestIdOf } from './http/request-id.js'
import { registerRequestTimeout } from './http/request-timeout.js'
import { registerRouteFallbacks } from './http/route-fallbacks.js'
import { ProblemSchema } from './http/schemas.js'
import { capConnections, registerSecurity, securityServerOptions } from './http/security.js'
import { registerValidation, validationServerOptions } from './http/validation.js'
import { registerWebApp } from './http/web-app.js'
import { registerWriteGate } from './http/write-gate.js'
import { ResultCache } from './paged-reads/result-cache.js'

declare module 'fastify' {
  interface FastifyInstance {
    readonly config: Config
    readonly db: Database
    /** Totals and other costly results, remembered per data version (exact; see result-cache.ts). */
    readonly resultCache: ResultCache
    /** Whole pages of unselective searches (costly to read), remembered per data version like totals. */
    readonly pageCache: ResultCache
    /** The in-memory search index (catalog/search-index): searches answered without SQL, exactly. */
    readonly searchIndex: SearchIndexService & SearchIndexAnswers & ListingIndexAnswers
    /** Writes run as jobs (`Prefer: respond-async`), polled from any instance. */
    readonly writeJobs: WriteJobs
    /** Bulk changes scheduled for a later time, applied by one instance when due. */
    readonly scheduledChanges: ScheduledChanges
  }
}

export interface AppOptions {
  readonly config: Config
  readonly db: Database
  /** Logger options; tests pass `false`. */
  readonly logger?: FastifyServerOptions['logger']
}

/**
 * Query parameters that may repeat (`sort`, `exact` beyond the contract, an actuator metric's `tag`, the change log's
 * `action`); every other parameter keeps its first value, as Spring reads it.
 */
const repeatableParameters = new Set(['sort', 'exact', 'tag', 'action'])

function parseQuery(text: string): Record<string, unknown> {
  const parsed = parseQueryString(text)
  const query: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(parsed)) {
    query[name] = Array.isArray(value) && !repeatableParameters.has(name) ? value[0] : value
  }
  return query
}

/**
 * Builds the whole HTTP application around an open database. No I/O of its own: the caller opens and migrates
 * the database, and listens (server) or injects (tests).
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config, db } = options
  const app = Fastify({
    logger: options.logger ?? { level: config.logLevel },
    bodyLimit: config.bodyLimit,
    routerOptions: { querystringParser: parseQuery, ignoreTrailingSlash: false },
    // The id comes from requestIdOf, which keeps a sane X-Request-Id and makes one otherwise.
    requestIdHeader: false,
    genReqId: requestIdOf,
    ...problemServerOptions,
    ...validationServerOptions,
    ...securityServerOptions(config),
  })
  app.decorate('config', config)
  app.decorate('db', db)
  const caching = config.resultCache === 'on'
  app.decorate('resultCache', new ResultCache(caching ? config.resultCacheBytes : 0))
  app.decorate('pageCache', new ResultCache(caching ? config.pageCacheBytes : 0))
  const logLevels = new LogLevels(app.log)
  const indexLog = logLevels.child('optics.catalog.search-index')
  const searchIndex: SearchIndexService & SearchIndexAnswers & ListingIndexAnswers =
    config.searchIndex === 'on'
      ? new SearchIndexThread(db, indexLog, {
          timezone: config.businessTimezone,
          listingKind: glasses.path,
          snapshotDir: config.searchIndexSnapshotDir,
          threads: config.searchThreads,
        })
      : new SearchIndex(db, indexLog, { enabled: false, timezone: config.businessTimezone, kinds })
  app.decorate('searchIndex', searchIndex)
  app.addHook('onClose', () => searchIndex.close())
  const writeJobs = new WriteJobs(db, logLevels.child('optics.glass-prices.write-jobs'), '/api/v2/glasses/prices/jobs')
  app.decorate('writeJobs', writeJobs)
  app.addHook('onClose', () => writeJobs.close())
  const scheduledChanges = new ScheduledChanges(db, logLevels.child('optics.glass-prices.scheduled-changes'))
  app.decorate('scheduledChanges', scheduledChanges)
  app.addHook('onReady', async () => scheduledChanges.start())
  app.addHook('onClose', () => scheduledChanges.close())

  // The write gate wraps write handlers first, so the deadline's wrapper is outside it and covers the wait.
  registerWriteGate(app)
  registerRequestTimeout(app)
  registerRequestIdHeader(app)
  const metrics = registerMetrics(app)
  registerValidation(app)
  registerJsonContentType(app)
  registerErrorHandler(app)
  documentEdgeProblems(app)
  registerRouteFallbacks(app)
  app.addSchema(ProblemSchema)
  await registerSecurity(app)
  capConnections(app)
  registerAuthentication(app)
  registerIdempotency(app)
  await registerOpenApi(app)
  registerMatviewRefresh(app, { onRefreshed: registerCatalogMetrics(app, metrics).observeMatviewRefresh })

  await app.register(operationsRoutes, { metrics })
  await app.register(loggerRoutes, { logLevels })
  await app.register(searchRoutes)
  await app.register(facetRoutes)
  await app.register(catalogStatusRoutes)
  await app.register(kindFormRoutes)
  await app.register(glassPriceRoutes)
  await app.register(glassPriceTransferRoutes)
  await registerWebApp(app)

  return app
}
