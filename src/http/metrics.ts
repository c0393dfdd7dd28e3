import type { FastifyInstance } from 'fastify'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'
import packageJson from '../../package.json' with { type: 'json' }
import type { PoolStats } from '../db/database.js'

/*
 * Prometheus metrics (`/actuator/prometheus`). Each application has its own registry (tests build many apps in
 * one process); the Node.js process metrics are the process's, so they live in one registry per process and
 * are merged in at scrape time. HTTP request metrics use Micrometer's name and labels
 * (`http_server_requests_seconds{method,uri,status,outcome}`), so dashboards of the Spring service keep working;
 * `uri` is the route pattern, never the raw URL, so the label set stays bounded. Beside the histogram, as Micrometer,
 * `http_server_requests_seconds_max`: the longest request of each series over the last one to two minutes.
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

/** How long a request's duration counts towards `…_max`: Micrometer's default expiry of its time window. */
const MAX_WINDOW_MS = 60_000

/**
 * The largest value per label set over a sliding time window, as Micrometer's `TimeWindowMax`: two windows of
 * `MAX_WINDOW_MS`, the current and the previous one, so a value counts for one to two windows and then fades.
 */
class WindowMax {
  #current = new Map<string, number>()
  #previous = new Map<string, number>()
  #started = Date.now()

  #rotate(): void {
    const elapsed = Date.now() - this.#started
    if (elapsed < MAX_WINDOW_MS) return
    this.#previous = elapsed < 2 * MAX_WINDOW_MS ? this.#current : new Map()
    this.#current = new Map()
    this.#started += Math.floor(elapsed / MAX_WINDOW_MS) * MAX_WINDOW_MS
  }

  record(key: string, value: number): void {
    this.#rotate()
    this.#current.set(key, Math.max(this.#current.get(key) ?? 0, value))
  }

  /** Every label set seen in the window with its largest value; one seen before it reads 0, as Micrometer's does. */
  read(keys: Iterable<string>): Map<string, number> {
    this.#rotate()
    const result = new Map<string, number>()
    for (const key of keys) result.set(key, Math.max(this.#current.get(key) ?? 0, this.#previous.get(key) ?? 0))
    return result
  }
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
  /**
   * Adds a reading of the database that each scrape makes before rendering (a feature sets its own gauges in
   * {@link registry} from it). One that throws or takes longer than the scrape allows reports the database down.
   */
  readAtScrape(read: () => Promise<void>): void
  /** Makes the readings of {@link readAtScrape}, then renders every metric as text. */
  scrape(): Promise<{ contentType: string; body: string }>
  /** Makes the readings of {@link readAtScrape}; answers every metric, the process's too, in one registry. */
  collect(): Promise<Registry>
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
  const longest = new WindowMax()
  const seriesSeen = new Map<string, Record<'method' | 'uri' | 'status' | 'outcome', string>>()
  new Gauge({
    name: 'http_server_requests_seconds_max',
    help: 'HTTP requests: the longest duration by method, route pattern, status and outcome, over the last one to two minutes',
    labelNames: ['method', 'uri', 'status', 'outcome'] as const,
    registers: [registry],
    collect() {
      for (const [key, value] of longest.read(seriesSeen.keys())) this.set(seriesSeen.get(key)!, value)
    },
  })
  app.addHook('onResponse', async (request, reply) => {
    const status = reply.statusCode
    // Spring writes path variables as `{id}`; so do we, for dashboards that group by them.
    const pattern = request.routeOptions.url?.replace(/:(\w+)/g, '{$1}')
    const uri = pattern ?? (status === 404 ? 'NOT_FOUND' : 'UNKNOWN')
    const labels = { method: request.method, uri, status: String(status), outcome: outcomeOf(status) }
    const seconds = reply.elapsedTime / 1000
    requests.observe(labels, seconds)
    const key = `${labels.method} ${uri} ${labels.status}`
    if (!seriesSeen.has(key)) seriesSeen.set(key, labels)
    longest.record(key, seconds)
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
    () => ({ index: app.searchIndex.served.index, sql: app.searchIndex.served.sql }),
  )
  countedInPlace(
    'optics_search_index_answers_by_thread_total',
    "Answers from the in-memory index by the thread that gave them: the index's own, or a search thread beside it (SEARCH_THREADS)",
    'thread',
    () => {
      const { index, threads } = app.searchIndex.served
      return { index: index - threads, search: threads }
    },
  )
  countedInPlace(
    'optics_search_index_loads_total',
    'Tables of the search index read in full, or brought forward by the rows a write changed',
    'how',
    () => ({ ...app.searchIndex.loads }),
  )
  new Gauge({
    name: 'optics_search_index_kinds',
    help: 'Kinds whose tables the search index holds (`loaded`), and whose tables it reads in full now (`reading`: their searches go to SQL meanwhile)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const status = app.searchIndex.status
      this.set({ state: 'loaded' }, status.kindsLoaded)
      this.set({ state: 'reading' }, status.reading.length)
    },
  })

  new Gauge({
    name: 'optics_search_index_thread_heap_bytes',
    help: "JavaScript heap used by each of the search index's threads: its own (`index`) and the search threads beside it (`search-1`, …; SEARCH_THREADS)",
    labelNames: ['thread'] as const,
    registers: [registry],
    async collect() {
      this.reset()
      for (const [thread, bytes] of Object.entries((await app.searchIndex.threadHeaps?.()) ?? {})) {
        this.set({ thread }, bytes)
      }
    },
  })

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
  const readings: (() => Promise<void>)[] = []

  /** The readings tell whether the database answers; a scrape never waits longer than the timeout for one. */
  async function readDatabaseGauges(): Promise<void> {
    try {
      for (const read of readings) await withTimeout(read(), DATABASE_CHECK_TIMEOUT_MS, 'database reading')
      databaseUp.set(1)
    } catch {
      databaseUp.set(0)
    }
  }

  return {
    registry,
    readAtScrape(read) {
      readings.push(read)
    },
    async scrape() {
      await readDatabaseGauges()
      const merged = Registry.merge([processMetrics(), registry])
      return { contentType: merged.contentType, body: await merged.metrics() }
    },
    async collect() {
      await readDatabaseGauges()
      return Registry.merge([processMetrics(), registry])
    },
  }
}
