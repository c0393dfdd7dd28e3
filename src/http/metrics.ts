import type { FastifyInstance } from 'fastify'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import packageJson from '../../package.json' with { type: 'json' }
import { readCatalogStates } from '../catalog/catalog-state.js'
import type { RefreshEvent } from '../catalog/matview-refresh.js'
import type { PoolStats } from '../db/database.js'

/*
 * Prometheus metrics (`/actuator/prometheus`). Each application has its own registry (tests build many apps in
 * one process); the Node.js process metrics are the process's, so they live in one registry per process and
 * are merged in at scrape time. HTTP request metrics use Micrometer's name and labels
 * (`http_server_requests_seconds{method,uri,status,outcome}`), so dashboards of the Spring service keep working;
 * `uri` is the route pattern, never the raw URL, so the label set stays bounded.
 */

/** How long a scrape waits for the database before reporting it down (a scrape must not hang). */
const DATABASE_CHECK_TIMEOUT_MS = 2000

let processRegistry: Registry | undefined

/** The process metrics (CPU, memory, event loop, GC), collected once per process. */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry()
    collectDefaultMetrics({ register: processRegistry })
  }
  return processRegistry
}

/** Micrometer's `outcome` tag. */
function outcomeOf(status: number): string {
  if (status < 200) return 'INFORMATIONAL'
  if (status < 300) return 'SUCCESS'
  if (status < 400) return 'REDIRECTION'
  if (status < 500) return 'CLIENT_ERROR'
  return 'SERVER_ERROR'
}

/** Rejects after `ms` unless `promise` settles first. */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

export interface ServiceMetrics {
  /** This application's registry (without the process metrics). */
  readonly registry: Registry
  /** Records one matview refresh (pass to the matview refresher). */
  observeMatviewRefresh(event: RefreshEvent): void
  /** Reads what is read at scrape time (database, matview freshness), then renders every metric as text. */
  scrape(): Promise<{ contentType: string; body: string }>
}

/**
 * Creates the application's metrics and the hook that times every request. Call it before registering the
 * routes, so the hook covers them; the scrape endpoint is in operations-routes.ts.
 */
export function registerMetrics(app: FastifyInstance): ServiceMetrics {
  const registry = new Registry()

  const requests = new Histogram({
    name: 'http_server_requests_seconds',
    help: 'HTTP requests: duration by method, route pattern, status and outcome',
    labelNames: ['method', 'uri', 'status', 'outcome'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  })
  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode
    // Spring writes path variables as `{id}`; so do we, for dashboards that group by them.
    const pattern = request.routeOptions.url?.replace(/:(\w+)/g, '{$1}')
    const uri = pattern ?? (status === 404 ? 'NOT_FOUND' : 'UNKNOWN')
    requests.observe(
      { method: request.method, uri, status: String(status), outcome: outcomeOf(status) },
      reply.elapsedTime / 1000,
    )
  })

  new Gauge({
    name: 'optics_info',
    help: 'The running service: version and database driver (always 1)',
    labelNames: ['version', 'driver'] as const,
    registers: [registry],
    collect() {
      this.set({ version: packageJson.version, driver: app.db.driver }, 1)
    },
  })

  // The search index and the read routing count in place; each scrape adds what they counted since the last one.
  const countedInPlace = <L extends string>(
    name: string,
    help: string,
    label: L,
    read: () => Readonly<Record<string, number>>,
  ) => {
    const seen = new Map<string, number>()
    return new Counter({
      name,
      help,
      labelNames: [label] as const,
      registers: [registry],
      collect() {
        for (const [value, count] of Object.entries(read())) {
          const delta = count - (seen.get(value) ?? 0)
          if (delta > 0) this.inc({ [label]: value } as Record<L, string>, delta)
          seen.set(value, count)
        }
      },
    })
  }
  countedInPlace(
    'optics_search_index_answers_total',
    'Searches, facets, suggestions and listings answered from the in-memory index or from SQL',
    'source',
    () => ({ ...app.searchIndex.served }),
  )
  countedInPlace(
    'optics_search_index_loads_total',
    'Tables of the search index read in full, or brought forward by the rows a write changed',
    'how',
    () => ({ ...app.searchIndex.loads }),
  )

  const routing = app.db.readRouting
  if (routing) {
    countedInPlace(
      'optics_read_routing_total',
      'Reads routed with a read replica: answered by the replica, by the primary as the replica lagged beyond DATABASE_READ_MAX_WAIT_MS, or by the primary as the replica was down',
      'target',
      () => ({ ...routing.stats.reads }),
    )
    new Gauge({
      name: 'optics_read_replica_up',
      help: 'Whether the read replica answers (1) or reads go to the primary (0)',
      registers: [registry],
      collect() {
        this.set(routing.stats.replicaUp ? 1 : 0)
      },
    })
    new Gauge({
      name: 'optics_read_replica_lag_bytes',
      help: 'Bytes of WAL the read replica had still to replay when a read last asked it (0: caught up)',
      registers: [registry],
      collect() {
        this.set(routing.stats.lastLagBytes)
      },
    })
  }

  const poolGauge = (name: string, help: string, read: (stats: PoolStats) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['pool'] as const,
      registers: [registry],
      collect() {
        for (const stats of app.db.poolStats()) this.set({ pool: stats.pool }, read(stats))
      },
    })
  poolGauge('optics_db_pool_connections', 'Open database connections, busy or idle', (stats) => stats.total)
  poolGauge('optics_db_pool_idle_connections', 'Idle database connections', (stats) => stats.idle)
  poolGauge('optics_db_pool_waiting_requests', 'Callers waiting for a database connection', (stats) => stats.waiting)
  poolGauge('optics_db_pool_max_connections', 'Largest number of database connections', (stats) => stats.max)

  const databaseUp = new Gauge({
    name: 'optics_database_up',
    help: 'Whether the database answered the last scrape (1) or not (0)',
    registers: [registry],
  })
  const refreshSeconds = new Histogram({
    name: 'optics_matview_refresh_seconds',
    help: 'Matview refreshes by this instance: duration per kind',
    labelNames: ['kind'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  })
  const stale = new Gauge({
    name: 'optics_matview_stale',
    help: 'Whether the kind has changes its matview does not show yet (1) or not (0)',
    labelNames: ['kind'] as const,
    registers: [registry],
  })
  const staleSeconds = new Gauge({
    name: 'optics_matview_stale_seconds',
    help: 'While stale: seconds since the matview was last refreshed (an upper bound on how long searches have missed changes); 0 when fresh',
    labelNames: ['kind'] as const,
    registers: [registry],
  })

  /** One read of the catalog state tells both whether the database answers and how fresh each matview is. */
  async function readDatabaseGauges(): Promise<void> {
    stale.reset()
    staleSeconds.reset()
    try {
      const states = await withTimeout(readCatalogStates(app.db.primary), DATABASE_CHECK_TIMEOUT_MS, 'catalog state')
      databaseUp.set(1)
      const now = Date.now()
      for (const state of states) {
        stale.set({ kind: state.kind }, state.stale ? 1 : 0)
        const since = state.refreshedAt ?? state.changedAt
        staleSeconds.set({ kind: state.kind }, state.stale && since ? Math.max(0, (now - since.getTime()) / 1000) : 0)
      }
    } catch {
      databaseUp.set(0)
    }
  }

  return {
    registry,
    observeMatviewRefresh(event) {
      refreshSeconds.observe({ kind: event.kind.path }, (event.finishedAt - event.startedAt) / 1000)
    },
    async scrape() {
      await readDatabaseGauges()
      const merged = Registry.merge([processMetrics(), registry])
      return { contentType: merged.contentType, body: await merged.metrics() }
    },
  }
}
