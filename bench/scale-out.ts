import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { sql } from 'kysely'
import pg from 'pg'
import { kinds as allKinds, glasses, lenses } from '../src/catalog/kinds/kinds.js'
import { openDatabase } from '../src/db/database.js'
import { lsnBytes } from '../src/db/server/read-routing.js'
import { seedCatalogue } from '../src/demo/demo-catalogue.js'
import type { StoredEntry } from '../test/fixtures/glass-prices.js'
import { type ReplicatedPair, standbyUnavailable, startReplicatedPair } from '../test/standby.js'
import { ColdMixGenerator, readColdCatalogue } from './cold-mix.js'
import { processTimes } from './cpu.js'
import { type LoadResult, runHttp } from './load.js'
import { priceEdit } from './scenarios.js'
import { buildService, type Service, startService } from './service.js'

/*
 * npm run bench:scale-out -- [--scale N] [--requests N] [--connections C] [--writes-per-second W]
 *
 * Several instances on one primary and its streaming standby: the cold mix (cold-mix.ts, each request sent once)
 * against one instance on the primary alone (the baseline), one reading from the standby, then two, every
 * instance writing to a private primary and reading from its standby (DATABASE_READ_URL), the requests dealt round-robin (the bench is the balancer), while a trickle of
 * price updates goes through the instances in turn, so the standby always has something to replay and every
 * instance's index has writes to catch up with. Reports per instance its throughput and latencies, the reads its
 * standby answered or left to the primary, the replication lag seen meanwhile, and the processor time per request
 * of the instances and of the two PostgreSQL servers: what predicts N instances on N machines. On a machine of a
 * few cores shared by everything, two instances show correctness and overhead, not a speed-up.
 */

const here = fileURLToPath(new URL('.', import.meta.url))
const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '20000' },
    requests: { type: 'string', default: '4000' },
    connections: { type: 'string', default: '8' },
    'writes-per-second': { type: 'string', default: '5' },
    help: { type: 'boolean', default: false },
  },
})

if (values.help) {
  process.stdout.write(
    'npm run bench:scale-out -- [--scale N] [--requests N] [--connections C] [--writes-per-second W]\n' +
      '  A private primary and its streaming standby (the server binaries must be installed), the demo catalogue\n' +
      '  (--scale SKUs of glasses and of lenses, a tenth of the others), the cold mix of --requests distinct\n' +
      '  requests against one instance and against two (--connections in all), with W price updates a second.\n',
  )
  process.exit(0)
}

function positive(name: string, raw: string, { zero = false } = {}): number {
  const value = Number(raw)
  if (!Number.isInteger(value) || value < (zero ? 0 : 1)) {
    process.stderr.write(`bench: --${name} must be a ${zero ? 'non-negative' : 'positive'} integer (got ${raw})\n`)
    process.exit(2)
  }
  return value
}

const scale = positive('scale', values.scale)
const requestCount = positive('requests', values.requests)
const connections = positive('connections', values.connections)
const writesPerSecond = positive('writes-per-second', values['writes-per-second'], { zero: true })
const log = (line: string) => process.stdout.write(`${line}\n`)

if (standbyUnavailable) {
  process.stderr.write(`bench: ${standbyUnavailable}\n`)
  process.exit(2)
}

interface InstanceFigures {
  readonly requests: number
  readonly errors: number
  readonly throughput: number
  readonly p50: number
  readonly p99: number
  /**
   * Reads by where the routing sent them (optics_read_routing_total: replica, lagging, replicaDown), and answers
   * by where they came from (optics_search_index_answers_total: index, sql).
   */
  readonly routed: Readonly<Record<string, number>>
  readonly failures?: readonly string[]
}

interface TopologyFigures {
  readonly instances: number
  /** Whether the instances read from the standby (else from the primary alone: the baseline). */
  readonly standby: boolean
  readonly durationSeconds: number
  /** All instances together. */
  readonly throughput: number
  readonly perInstance: readonly InstanceFigures[]
  readonly writes: { readonly sent: number; readonly failed: number }
  readonly lag: { readonly maxBytes: number; readonly meanBytes: number; readonly maxReplayMs: number }
  /** Processor time per request, µs: every instance together, and the primary and standby together. */
  readonly cpuPerRequestUs: { readonly instances: number; readonly database: number }
}

/** The processor seconds of a cluster so far: each postmaster, its live children, and the children it reaped. */
function clusterSeconds(postmasters: readonly number[]): number {
  let total = 0
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let parent: number
    try {
      parent = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1])
    } catch {
      continue
    }
    const times = processTimes(pid)
    if (!times) continue
    if (postmasters.includes(Number(pid))) total += times.own + times.children
    else if (postmasters.includes(parent)) total += times.own
  }
  return total
}

const serviceSeconds = (services: readonly Service[]) =>
  services.reduce((sum, service) => sum + (processTimes(service.pid ?? 0)?.own ?? 0), 0)

/** Samples the standby's lag every 100 ms until stopped. */
function watchLag(pair: ReplicatedPair) {
  const primary = new pg.Client({ connectionString: pair.primaryUrl })
  const standby = new pg.Client({ connectionString: pair.standbyUrl })
  const samples: number[] = []
  let maxReplayMs = 0
  let running = true
  const done = (async () => {
    await Promise.all([primary.connect(), standby.connect()])
    while (running) {
      const [written, replication] = await Promise.all([
        primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'),
        primary.query<{ ms: number | null }>(
          'SELECT max(extract(epoch FROM replay_lag) * 1000)::float8 AS ms FROM pg_stat_replication',
        ),
      ])
      const replayed = await standby.query<{ lsn: string }>('SELECT pg_last_wal_replay_lsn()::text AS lsn')
      samples.push(Math.max(0, lsnBytes(written.rows[0]?.lsn ?? '0/0') - lsnBytes(replayed.rows[0]?.lsn ?? '0/0')))
      maxReplayMs = Math.max(maxReplayMs, replication.rows[0]?.ms ?? 0)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await Promise.all([primary.end(), standby.end()])
  })()
  return async () => {
    running = false
    await done
    return {
      maxBytes: Math.max(0, ...samples),
      meanBytes: samples.length === 0 ? 0 : Math.round(samples.reduce((a, b) => a + b, 0) / samples.length),
      maxReplayMs: Math.round(maxReplayMs * 10) / 10,
    }
  }
}

/** From an instance's metrics: reads by routing target, and answers by source (`index`, `sql`). */
async function routedReads(service: Service): Promise<Record<string, number>> {
  const body = await (await fetch(`${service.baseUrl}/actuator/prometheus`)).text()
  const routed: Record<string, number> = {}
  for (const match of body.matchAll(
    /^optics_(?:read_routing|search_index_answers)_total\{(?:target|source)="(\w+)"\} (\d+)/gm,
  )) {
    routed[match[1] as string] = Number(match[2])
  }
  return routed
}

const pair = await startReplicatedPair()
const report: { date: string; cpus: number; settings: object; topologies: TopologyFigures[] } = {
  date: new Date().toISOString(),
  cpus: cpus().length,
  settings: { scale, requests: requestCount, connections, writesPerSecond },
  topologies: [],
}
try {
  buildService()
  const db = await openDatabase({ url: pair.primaryUrl, poolSize: 4 })
  log(`catalogue: ${scale} SKUs of glasses and lenses, ${Math.max(1000, scale / 10)} of the others`)
  await seedCatalogue(db, { scale, kinds: [glasses, lenses], replace: true })
  await seedCatalogue(db, {
    scale: Math.max(1000, Math.round(scale / 10)),
    kinds: allKinds.filter((kind) => kind !== glasses && kind !== lenses),
    replace: true,
  })
  const generator = new ColdMixGenerator(await readColdCatalogue(db.primary))
  const entries = (
    await sql<
      Pick<StoredEntry, 'id' | 'manufacturer' | 'brand' | 'model' | 'price' | 'purchase'>
    >`SELECT id, manufacturer, brand, model, price::text, purchase::text FROM ${sql.table(glasses.priceTable)}
       ORDER BY id LIMIT 200`.execute(db.primary)
  ).rows
  await db.close()

  for (const { instances, standby } of [
    { instances: 1, standby: false },
    { instances: 1, standby: true },
    { instances: 2, standby: true },
  ]) {
    log(`\n${instances} instance${instances === 1 ? '' : 's'}, reading from the ${standby ? 'standby' : 'primary'}`)
    const perInstance = Math.max(1, Math.round(connections / instances))
    const services: Service[] = []
    for (let i = 0; i < instances; i++) {
      services.push(
        await startService({
          url: pair.primaryUrl,
          ...(standby ? { readUrl: pair.standbyUrl } : {}),
          poolSize: perInstance,
        }),
      )
    }
    const deal = <T>(list: readonly T[]) =>
      services.map((_, i) => list.filter((_request, index) => index % instances === i))
    // A warm-up of distinct requests: the index's first orders and postings, the routing's connections.
    const warmup = deal(generator.take(Math.ceil(requestCount / 10)))
    await Promise.all(
      services.map((service, i) =>
        runHttp(
          service.baseUrl,
          (warmup[i] ?? []).map((request) => request.http),
          { connections: perInstance, once: true },
        ),
      ),
    )
    const lists = deal(generator.take(requestCount))
    const routedBefore = await Promise.all(services.map(routedReads))

    // The trickle of writes: whole-rouble price updates of known entries, through the instances in turn.
    const writes = { sent: 0, failed: 0 }
    let writing = writesPerSecond > 0
    const writer = (async () => {
      while (writing) {
        const entry = entries[writes.sent % entries.length]
        const service = services[writes.sent % services.length]
        if (!entry || !service) break
        const roubles = BigInt(entry.price.split('.')[0] as string) + BigInt(writes.sent + 1)
        const response = await fetch(
          `${service.baseUrl}/api/v2/glasses/prices/${entry.id}`,
          priceEdit(entry, roubles.toString(), entry.purchase),
        )
        writes.sent++
        if (!response.ok) writes.failed++
        await new Promise((resolve) => setTimeout(resolve, 1000 / writesPerSecond))
      }
    })()
    const stopLag = watchLag(pair)
    const postmasters = pair.postmasterPids()
    const before = { service: serviceSeconds(services), database: clusterSeconds(postmasters) }
    const started = performance.now()
    const results: LoadResult[] = await Promise.all(
      services.map((service, i) =>
        runHttp(
          service.baseUrl,
          (lists[i] ?? []).map((request) => request.http),
          { connections: perInstance, once: true },
        ),
      ),
    )
    const durationSeconds = (performance.now() - started) / 1000
    const after = { service: serviceSeconds(services), database: clusterSeconds(postmasters) }
    writing = false
    await writer
    const lag = await stopLag()
    const routedAfter = await Promise.all(services.map(routedReads))
    for (const service of services) await service.stop()

    const total = results.reduce((sum, result) => sum + result.requests, 0)
    const figures: TopologyFigures = {
      instances,
      standby,
      durationSeconds: Math.round(durationSeconds * 10) / 10,
      throughput: Math.round(total / durationSeconds),
      perInstance: results.map((result, i) => ({
        requests: result.requests,
        errors: result.errors,
        throughput: Math.round(result.throughput),
        p50: Math.round(result.p50 * 10) / 10,
        p99: Math.round(result.p99 * 10) / 10,
        routed: Object.fromEntries(
          Object.entries(routedAfter[i] ?? {}).map(([target, count]) => [
            target,
            count - (routedBefore[i]?.[target] ?? 0),
          ]),
        ),
        ...(result.failures ? { failures: result.failures } : {}),
      })),
      writes,
      lag,
      cpuPerRequestUs: {
        instances: Math.round(((after.service - before.service) / total) * 1e6),
        database: Math.round(((after.database - before.database) / total) * 1e6),
      },
    }
    report.topologies.push(figures)
    log(JSON.stringify(figures, null, 2))
  }
} finally {
  pair.close()
}

const results = join(here, 'results')
mkdirSync(results, { recursive: true })
const file = join(results, `${report.date.replace(/[:.]/g, '-')}-scale-out.json`)
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)

const rows = report.topologies.map((topology) => {
  const instances = topology.perInstance
    .map((instance, i) => {
      const routed = Object.entries(instance.routed)
        .map(([target, count]) => `${target} ${count}`)
        .join(', ')
      return `#${i + 1}: ${instance.throughput} req/s, p50 ${instance.p50} ms, p99 ${instance.p99} ms (${routed})`
    })
    .join('; ')
  return (
    `| ${topology.instances}, ${topology.standby ? 'standby' : 'primary only'} | ${topology.throughput} req/s | ${instances} | ${topology.lag.maxBytes} B ` +
    `(mean ${topology.lag.meanBytes} B, replay ≤ ${topology.lag.maxReplayMs} ms) | ` +
    `${topology.cpuPerRequestUs.instances} + ${topology.cpuPerRequestUs.database} | ${topology.writes.sent} (${topology.writes.failed} failed) |`
  )
})
log(
  [
    '',
    '| Instances, reads | Throughput, all | Per instance | Replication lag seen | CPU µs per request: instances + PostgreSQL | Writes |',
    '|---|---|---|---|---|---|',
    ...rows,
    '',
    `results: ${file}`,
  ].join('\n'),
)
const failed = report.topologies.some((topology) => topology.perInstance.some((instance) => instance.errors > 0))
if (failed) {
  process.stderr.write('\nbench: requests FAILED; the results list them. Exit code 1.\n')
  process.exitCode = 1
}
