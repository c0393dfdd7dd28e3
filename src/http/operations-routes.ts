import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import Type, { type Static } from 'typebox'
import packageJson from '../../package.json' with { type: 'json' }
import { message } from '../domain/messages.js'
import { metricNames, parseTag, readMetrics, STATISTICS, type TagFilter, viewMetric } from './actuator-metrics.js'
import { type ServiceMetrics, withTimeout } from './metrics.js'
import { invalidField, ProblemError } from './problem.js'
import { problemResponses } from './schemas.js'
import { StringEnum } from './validation.js'

/*
 * Spring Boot Actuator's paths, so existing deployments keep their probes and scrapes:
 *   health      the service and its database (503 DOWN while the database does not answer)
 *   liveness    the process runs (never depends on the database: restarting would not bring it back)
 *   readiness   the instance can serve: the database answers (with a read replica: the primary or the replica)
 *               and the search index's first load has finished
 *   info        name, version, database driver, uptime
 *   prometheus  metrics (metrics.ts)
 *   metrics     the same metrics as Spring Boot shows Micrometer's meters (actuator-metrics.ts)
 * Database checks give up after a bound, so a probe never hangs while the database is unreachable.
 */

const DATABASE_CHECK_TIMEOUT_MS = 2000

const tags = ['operations']

const StatusSchema = Type.Union([Type.Literal('UP'), Type.Literal('DOWN')])
const HealthSchema = Type.Object({ status: StatusSchema })
type Health = Static<typeof HealthSchema>

const SearchIndexComponentSchema = Type.Object(
  {
    status: StatusSchema,
    details: Type.Object({
      state: Type.Union(
        [Type.Literal('off'), Type.Literal('loading'), Type.Literal('loaded'), Type.Literal('failed')],
        {
          description:
            '`loading` until every kind has been loaded once (searches are answered from SQL meanwhile); `failed`: ' +
            'the index stopped and every search is answered from SQL',
        },
      ),
      kindsLoaded: Type.Integer({ description: 'Kinds whose tables the index holds now' }),
      kinds: Type.Integer(),
      reading: Type.Array(Type.String(), {
        description: 'Kinds whose tables are being read in full now (their searches are answered from SQL meanwhile)',
      }),
    }),
  },
  { description: 'The in-memory search index: DOWN while its first load runs' },
)

const ReadinessSchema = Type.Object({
  status: StatusSchema,
  components: Type.Object(
    {
      searchIndex: SearchIndexComponentSchema,
      primary: Type.Optional(Type.Object({ status: StatusSchema })),
      readReplica: Type.Optional(Type.Object({ status: StatusSchema })),
    },
    { description: 'As Spring Boot shows components; the primary and the replica with a read replica' },
  ),
})
type Readiness = Static<typeof ReadinessSchema>
const status = (up: boolean): 'UP' | 'DOWN' => (up ? 'UP' : 'DOWN')

const InfoSchema = Type.Object({
  app: Type.Object({ name: Type.String(), version: Type.String(), description: Type.String() }),
  node: Type.Object({ version: Type.String() }),
  database: Type.Object({
    driver: Type.String({ description: '`postgres` (a server) or `pglite` (the embedded database)' }),
    readReplica: Type.Boolean({ description: 'Searches and listings read from a replica' }),
  }),
  startedAt: Type.String({ format: 'date-time' }),
  uptimeSeconds: Type.Number(),
})
type Info = Static<typeof InfoSchema>

const MetricNamesSchema = Type.Object({
  names: Type.Array(Type.String(), { description: 'The metrics that have a value, sorted' }),
})

const MetricSchema = Type.Object({
  name: Type.String(),
  description: Type.Union([Type.String(), Type.Null()]),
  baseUnit: Type.Union([Type.String(), Type.Null()], { description: '`seconds`, `bytes`, or null' }),
  measurements: Type.Array(
    Type.Object({
      statistic: StringEnum(STATISTICS),
      value: Type.Number(),
    }),
  ),
  availableTags: Type.Array(Type.Object({ tag: Type.String(), values: Type.Array(Type.String()) }), {
    description: 'The tags of the series measured, besides those asked for, with their values',
  }),
})

const MetricParamsSchema = Type.Object({
  name: Type.String({ description: 'A name of `GET /actuator/metrics`', examples: ['http.server.requests'] }),
})

const MetricQuerySchema = Type.Object({
  tag: Type.Optional(
    Type.Array(Type.String(), {
      description: 'Narrows the measurements to the series with this tag, `key:value`; repeatable (all must hold)',
      examples: [['method:GET']],
    }),
  ),
})

/** The tags of `?tag=key:value…`; a malformed one is a 400 naming `tag`. */
function tagFilters(tags: readonly string[] | undefined): TagFilter[] {
  return (tags ?? []).map((text) => {
    const tag = parseTag(text)
    if (!tag) throw invalidField('tag', message('actuator.tagForm', { value: text }))
    return tag
  })
}

export interface OperationsRoutesOptions {
  readonly metrics: ServiceMetrics
}

/** The actuator endpoints: health, liveness, readiness, info, and the metrics (Prometheus and Spring's view). */
export async function operationsRoutes(fastify: FastifyInstance, options: OperationsRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const startedAt = new Date()

  async function databaseAnswers(): Promise<boolean> {
    try {
      await withTimeout(app.db.ping(), DATABASE_CHECK_TIMEOUT_MS, 'database ping')
      return true
    } catch {
      return false
    }
  }

  app.get(
    '/actuator/health',
    {
      schema: {
        tags,
        operationId: 'health',
        summary: 'Health of the service and its database',
        response: { 200: HealthSchema, 503: HealthSchema },
      },
    },
    async (_request, reply): Promise<Health> => {
      if (await databaseAnswers()) return { status: 'UP' }
      return reply.code(503).send({ status: 'DOWN' })
    },
  )

  app.get(
    '/actuator/health/liveness',
    {
      schema: {
        tags,
        operationId: 'liveness',
        summary: 'Liveness probe: UP while the process runs',
        description: 'Does not look at the database: a restart would not bring it back.',
        response: { 200: HealthSchema },
      },
    },
    async (): Promise<Health> => ({ status: 'UP' }),
  )

  app.get(
    '/actuator/health/readiness',
    {
      schema: {
        tags,
        operationId: 'readiness',
        summary: 'Readiness probe: UP when the database answers and the search index is loaded',
        description:
          'DOWN (503) while the database does not answer, and while the search index loads at start (requests ' +
          'sent meanwhile are answered from SQL); once shutting down the service stops accepting connections and ' +
          'answers 503 on open ones. With a read replica, `components` shows the primary and the replica, and the ' +
          'instance stays UP while either answers (reads go to the other; writes need the primary).',
        response: { 200: ReadinessSchema, 503: ReadinessSchema },
      },
    },
    async (_request, reply): Promise<Readiness> => {
      const routing = app.db.readRouting
      const [primary, replica] = await Promise.all([
        databaseAnswers(),
        routing
          ? withTimeout(routing.checkReplica(), DATABASE_CHECK_TIMEOUT_MS, 'replica check').catch(() => false)
          : undefined,
      ])
      const index = app.searchIndex.status
      const searchIndex = {
        status: status(!app.searchIndex.warming),
        details: { ...index, reading: [...index.reading] },
      }
      const up = !app.searchIndex.warming && (primary || replica === true)
      const body: Readiness =
        replica === undefined
          ? { status: status(up), components: { searchIndex } }
          : {
              status: status(up),
              components: {
                searchIndex,
                primary: { status: status(primary) },
                readReplica: { status: status(replica) },
              },
            }
      return up ? body : reply.code(503).send(body)
    },
  )

  app.get(
    '/actuator/info',
    {
      schema: {
        tags,
        operationId: 'info',
        summary: 'Name, version, database driver and uptime of the service',
        response: { 200: InfoSchema },
      },
    },
    async (): Promise<Info> => ({
      app: { name: packageJson.name, version: packageJson.version, description: packageJson.description },
      node: { version: process.versions.node },
      database: { driver: app.db.driver, readReplica: app.db.read !== app.db.primary },
      startedAt: startedAt.toISOString(),
      uptimeSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    }),
  )

  app.get(
    '/actuator/prometheus',
    {
      schema: {
        tags,
        operationId: 'prometheus',
        summary: 'Metrics in the Prometheus text format',
        response: { 200: { content: { 'text/plain': { schema: Type.String() } } } },
      },
    },
    async (_request, reply) => {
      const { contentType, body } = await options.metrics.scrape()
      return reply.type(contentType).send(body)
    },
  )

  app.get(
    '/actuator/metrics',
    {
      schema: {
        tags,
        operationId: 'metricNames',
        summary: "Names of the metrics, as Spring Boot's /actuator/metrics lists them",
        description:
          'The metrics of `/actuator/prometheus` under the names Micrometer gives them: the unit suffix ' +
          '(`_seconds`, `_bytes`) dropped for `baseUnit`, a counter without `_total`, dots for underscores ' +
          '(`http_server_requests_seconds` is `http.server.requests`).',
        response: { 200: MetricNamesSchema },
      },
    },
    async () => ({ names: metricNames(await readMetrics(await options.metrics.collect())) }),
  )

  app.get(
    '/actuator/metrics/:name',
    {
      schema: {
        tags,
        operationId: 'metric',
        summary: 'One metric: its statistics, optionally for the series with the given tags, and its other tags',
        description:
          'As Spring Boot answers it: a counter is COUNT, a gauge VALUE, a histogram COUNT, TOTAL_TIME (TOTAL ' +
          'without a time unit) and MAX (the longest over the last one to two minutes, where measured). Over ' +
          'several series the statistics add up, MAX is the largest. `?tag=key:value` (repeatable) keeps the ' +
          'series with those tags; none having them is a 404.',
        params: MetricParamsSchema,
        querystring: MetricQuerySchema,
        response: { 200: MetricSchema, ...problemResponses(400, 404) },
      },
    },
    async (request) => {
      const tags = tagFilters(request.query.tag)
      const metrics = await readMetrics(await options.metrics.collect())
      const view = viewMetric(metrics, request.params.name, tags)
      if (view) return view
      const detail = metrics.has(request.params.name)
        ? message('actuator.noTaggedMetric', {
            name: request.params.name,
            tags: tags.map((tag) => `${tag.key}:${tag.value}`).join(', '),
          })
        : message('actuator.noMetric', { name: request.params.name })
      throw new ProblemError(404, detail)
    },
  )
}
