import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import type { Kind } from '../src/catalog/kinds/kind.js'
import { kinds as allKinds, glasses, lenses } from '../src/catalog/kinds/kinds.js'
import { loadConfig } from '../src/config.js'
import { type Database, openDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { seedCatalogue } from '../src/demo/demo-catalogue.js'
import { type CpuPerRequest, isLocalServer, withCpu } from './cpu.js'
import {
  type CategoryFigures,
  type LoadResult,
  median,
  type PerRequest,
  percentile,
  runHttp,
  runWorkers,
  type SlowRequest,
} from './load.js'
import { type BenchRequest, buildScenarios, isSelected, type Scenario, type ScenarioDetails } from './scenarios.js'
import { buildService, type Service, startService } from './service.js'

/*
 * One benchmark run: load (or reuse) the catalogue, build the scenarios from it, then measure every scenario on
 * both sides, the service and its floor, `runs` times, and report medians. On the server both sides alternate
 * scenario by scenario; the embedded database admits one process at a time, so there every floor runs first,
 * then the service in its own process. A load scenario runs for `seconds`, cycling through its requests, except
 * the cold mix, which sends each request of its list once.
 */

export interface BenchOptions {
  /** The server, or undefined for the embedded database in `dataDir`. */
  readonly url?: string
  readonly dataDir: string
  /** SKUs per kind (glasses and lenses). */
  readonly scale: number
  /**
   * SKUs of each of the five other kinds (sunglasses, contact lenses, extras, semi-finished lenses, accessories),
   * which the cold mix searches too. Default: a tenth of `scale`, at least min(scale, 1,000).
   */
  readonly otherScale?: number
  readonly seconds: number
  /** Seconds of unmeasured load before a load scenario's first run on each side (default: min(2, seconds)). */
  readonly warmupSeconds?: number
  readonly connections: number
  readonly runs: number
  /** Scenario ids (or their prefixes, `a`, `d-listing`, `cold`…) to run; all when empty (see `isSelected`). */
  readonly only: readonly string[]
  /** The service's caches of totals, pages, facets and suggestions (default on, as deployed). */
  readonly caches?: 'on' | 'off'
  /** The service's in-memory search index, SEARCH_INDEX (default on, as deployed). */
  readonly searchIndex?: 'on' | 'off'
  /** `off` measures the service alone: no floor, no ratios (for profiling and tuning). Default on. */
  readonly floor?: 'on' | 'off'
  /** Requests per run of the cold mix, each sent once (default 20,000; 0 leaves it out). */
  readonly coldRequests?: number
  /**
   * Runs of the cold mix (default 1: a list of 20,000 distinct requests is a large sample already, and at a
   * million rows its floor takes tens of minutes per run).
   */
  readonly coldRuns?: number
  /** Distinct requests the cold mix sends, unmeasured, before its first run on each side (default N/10, ≤ 1,000). */
  readonly coldWarmup?: number
  /** How long the service may take to become ready (its search index loads first), in seconds (default 300). */
  readonly readySeconds?: number
  /** Keep a catalogue already loaded instead of loading it again. */
  readonly reuse: boolean
  readonly log: (line: string) => void
}

export interface SideFigures {
  readonly throughput: number
  readonly p50: number
  readonly p99: number
  /** Failed requests, over all runs (must be 0). */
  readonly errors: number
  /** HTTP side: answers other than 2xx by status, over all runs. */
  readonly statuses?: Readonly<Record<string, number>>
  /** A few failed requests with their answers or errors. */
  readonly failures?: readonly string[]
  /** The cold mix: each kind of request's latencies (medians of the runs' p50 and p99). */
  readonly byCategory?: Readonly<Record<string, CategoryFigures>>
  /** Load: the median processor time per request of each party (see cpu.ts), when measurable. */
  readonly cpuPerRequestUs?: CpuPerRequest
}

export interface ScenarioResult {
  readonly id: string
  readonly title: string
  readonly type: 'load' | 'once'
  /** Load: the concurrency it ran at. */
  readonly connections?: number
  /** The cold mix: the requests of each run's list, each sent once (a side's `requests` per run must equal it). */
  readonly requestsPerRun?: number
  /** Load: requests per second and latencies in ms. One-shot: seconds (in p50) and rows per second. */
  readonly service: SideFigures
  readonly floor: SideFigures
  /** Load: service throughput ÷ floor throughput. One-shot: service seconds ÷ floor seconds. */
  readonly ratio: number
  readonly rows?: number
  /** A one-shot's own observations (reads and writes while it ran), as its report lines and figures. */
  readonly details?: ScenarioDetails
  readonly targets: string
  readonly met: boolean
  readonly runs: { readonly service: LoadResult[]; readonly floor: LoadResult[] }
}

export interface BenchReport {
  readonly date: string
  readonly commit: string
  readonly driver: 'postgres' | 'pglite'
  readonly caches: 'on' | 'off'
  /** SEARCH_INDEX of the service; absent in runs made before the index existed (which had none). */
  readonly searchIndex?: 'on' | 'off'
  /** Requests per run of the cold mix, and its runs. */
  readonly coldRequests?: number
  readonly coldRuns?: number
  readonly server: string
  readonly machine: { readonly cpu: string; readonly cores: number; readonly memoryGiB: number; readonly node: string }
  readonly scale: number
  readonly catalogue: Record<string, number>
  readonly seconds: number
  readonly connections: number
  readonly runs: number
  readonly peakRssMiB: number | null
  /** The longest the service took to become ready (its search index's first load), in seconds. */
  readonly readySeconds?: number | null
  readonly scenarios: ScenarioResult[]
}

function commitOf(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim()
    // The benchmark's own outputs do not make the measured code another.
    const dirty = execFileSync(
      'git',
      [
        'status',
        '--porcelain',
        '--untracked-files=no',
        '--',
        '.',
        ':(exclude)bench/results',
        ':(exclude)bench/REPORT.md',
      ],
      { encoding: 'utf8' },
    ).trim()
    return dirty ? `${head}+changes` : head
  } catch {
    return 'unknown'
  }
}

async function countOf(db: Database, table: string): Promise<number> {
  const { rows } = await sql<{ count: number }>`SELECT count(*) AS count FROM ${sql.table(table)}`.execute(db.primary)
  return Number(rows[0]?.count ?? 0)
}

/**
 * The embedded database's buffer cache as the service has it: EMBEDDED_SHARED_BUFFERS_MB of this environment, which
 * the service started here inherits, so the floor and the loads run with the same cache.
 */
const sharedBuffersMb = loadConfig({
  EMBEDDED_SHARED_BUFFERS_MB: process.env.EMBEDDED_SHARED_BUFFERS_MB,
}).embeddedSharedBuffersMb

const open = (options: BenchOptions) =>
  openDatabase({
    url: options.url,
    dataDir: options.dataDir,
    sharedBuffersMb,
    poolSize: options.connections,
    statementTimeoutMs: 0,
  })

/** The kinds besides glasses and lenses: loaded smaller, for the cold mix. */
const otherKinds = allKinds.filter((kind) => kind !== glasses && kind !== lenses)

const otherScaleOf = (options: BenchOptions) =>
  options.otherScale ?? Math.max(Math.min(options.scale, 1_000), Math.round(options.scale / 10))

async function prepareCatalogue(db: Database, options: BenchOptions): Promise<void> {
  await migrateToLatest(db.primary)
  const loaded = (await countOf(db, glasses.skuTable)) > 0 && (await countOf(db, lenses.skuTable)) > 0
  const seed = async (kinds: typeof allKinds, scale: number) => {
    options.log(`catalogue: loading ${scale.toLocaleString('en-US')} SKUs of ${kinds.map((k) => k.path).join(', ')}`)
    const results = await seedCatalogue(db, { scale, kinds, replace: true })
    for (const result of results) {
      options.log(`  ${result.kind}: ${result.skus} SKUs, ${result.entries} entries in ${result.milliseconds} ms`)
    }
  }
  if (options.reuse && loaded) {
    // Earlier runs changed prices and replaced SKUs: vacuumed and analysed, every run starts from the same state.
    options.log('catalogue: reusing the one loaded (vacuum, analyse)')
    for (const table of [glasses.priceTable, glasses.skuTable, glasses.matview, lenses.skuTable, lenses.matview]) {
      await sql`VACUUM (ANALYZE) ${sql.table(table)}`.execute(db.primary)
    }
    // A catalogue loaded before the cold mix existed has glasses and lenses only.
    const missing: Kind[] = []
    for (const kind of otherKinds) if ((await countOf(db, kind.skuTable)) === 0) missing.push(kind)
    if (missing.length > 0) await seed(missing, otherScaleOf(options))
    return
  }
  await seed([glasses, lenses], options.scale)
  await seed(otherKinds, otherScaleOf(options))
}

/** A one-shot as a LoadResult: one "request", its duration in seconds as p50/p99, rows/s as throughput. */
async function timeOnce(
  work: () => Promise<number | { readonly rows: number; readonly seconds: number }>,
): Promise<LoadResult & { rows: number }> {
  const started = performance.now()
  const done = await work()
  const rows = typeof done === 'number' ? done : done.rows
  const seconds = typeof done === 'number' ? (performance.now() - started) / 1000 : done.seconds
  return {
    requests: 1,
    errors: 0,
    durationSeconds: seconds,
    throughput: rows / seconds,
    p50: seconds,
    p99: seconds,
    rows,
  }
}

/** A run through a list once, with its latencies per kind of request instead of per request. */
function byCategory(result: LoadResult & PerRequest, requests: readonly BenchRequest[]): LoadResult {
  const { perRequestMs, ...rest } = result
  if (!perRequestMs) return rest
  const groups = new Map<string, number[]>()
  requests.forEach((request, index) => {
    const latency = perRequestMs[index] as number
    if (request.category === undefined || Number.isNaN(latency)) return
    const group = groups.get(request.category)
    if (group) group.push(latency)
    else groups.set(request.category, [latency])
  })
  if (groups.size === 0) return rest
  const slowest = [...perRequestMs.keys()]
    .filter((index) => !Number.isNaN(perRequestMs[index] as number))
    .sort((a, b) => (perRequestMs[b] as number) - (perRequestMs[a] as number))
    .slice(0, SLOWEST_KEPT)
    .map((index): SlowRequest => {
      const { http, category } = requests[index] as BenchRequest
      const body = http.body === undefined ? '' : ` ${JSON.stringify(http.body)}`
      return {
        ms: perRequestMs[index] as number,
        ...(category ? { category } : {}),
        request: `${http.method} ${http.path}${body}`,
      }
    })
  const figures: Record<string, CategoryFigures> = {}
  for (const [category, latencies] of groups) {
    latencies.sort((a, b) => a - b)
    figures[category] = {
      requests: latencies.length,
      p50: percentile(latencies, 0.5),
      p99: percentile(latencies, 0.99),
    }
  }
  return { ...rest, byCategory: figures, slowest }
}

/** How many of a list's slowest requests a result keeps, and how many the run prints. */
const SLOWEST_KEPT = 15
const SLOWEST_SHOWN = 5

/** A run's result counting the failures of the warm-up before it too (every request must succeed). */
function withWarmupFailures(result: LoadResult, warmup: LoadResult | undefined): LoadResult {
  if (!warmup || warmup.errors === 0) return result
  const statuses = { ...result.statuses }
  for (const [status, count] of Object.entries(warmup.statuses ?? {}))
    statuses[status] = (statuses[status] ?? 0) + count
  return {
    ...result,
    errors: result.errors + warmup.errors,
    statuses,
    failures: [...(warmup.failures ?? []).map((failure) => `(warm-up) ${failure}`), ...(result.failures ?? [])],
  }
}

/** A loud line about failed requests: how many, their statuses, and the first few. */
function failureLine(scenario: Scenario, side: string, result: LoadResult): string {
  const statuses = Object.entries(result.statuses ?? {})
    .map(([status, count]) => `${status} ×${count}`)
    .join(', ')
  return [
    `  !! ${scenario.id} ${side}: ${result.errors} requests FAILED${statuses ? ` (${statuses})` : ''}`,
    ...(result.failures ?? []).map((failure) => `     ${failure}`),
  ].join('\n')
}

function figures(results: readonly LoadResult[]): SideFigures {
  const cpu = results.flatMap((r) => (r.cpuPerRequestUs ? [r.cpuPerRequestUs] : []))
  const statuses = new Map<string, number>()
  for (const result of results) {
    for (const [status, count] of Object.entries(result.statuses ?? {})) {
      statuses.set(status, (statuses.get(status) ?? 0) + count)
    }
  }
  const failures = results.flatMap((r) => r.failures ?? [])
  const categories = [...new Set(results.flatMap((r) => Object.keys(r.byCategory ?? {})))]
  const perCategory = (category: string, figure: keyof CategoryFigures) =>
    median(results.map((r) => r.byCategory?.[category]?.[figure] ?? 0))
  const categoryFigures = Object.fromEntries(
    categories.map((c) => [
      c,
      { requests: perCategory(c, 'requests'), p50: perCategory(c, 'p50'), p99: perCategory(c, 'p99') },
    ]),
  )
  const medianOf = (values: (number | null)[]) =>
    values.some((value) => value === null) ? null : median(values as number[])
  return {
    throughput: median(results.map((r) => r.throughput)),
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
    ...(statuses.size > 0 ? { statuses: Object.fromEntries(statuses) } : {}),
    ...(failures.length > 0 ? { failures: failures.slice(0, 5) } : {}),
    ...(categories.length > 0 ? { byCategory: categoryFigures } : {}),
    ...(cpu.length === results.length && cpu.length > 0
      ? {
          cpuPerRequestUs: {
            service: medianOf(cpu.map((c) => c.service)),
            database: medianOf(cpu.map((c) => c.database)),
            client: median(cpu.map((c) => c.client)),
          },
        }
      : {}),
  }
}

function summarise(
  scenario: Scenario,
  service: LoadResult[],
  floor: LoadResult[],
  rows: number | undefined,
  connections: number,
): ScenarioResult {
  const s = figures(service)
  const f = figures(floor)
  let ratio: number
  let targets: string
  let met: boolean
  if (scenario.type === 'load') {
    ratio = f.throughput > 0 ? s.throughput / f.throughput : 0
    const parts = [`p99 ≤ ${scenario.p99Target} ms`]
    // A failed request on either side (a non-2xx answer, an SQL error) fails the scenario.
    met = s.p99 <= scenario.p99Target && s.errors === 0 && f.errors === 0
    if (scenario.ratioTarget !== undefined) {
      parts.unshift(`≥ ${scenario.ratioTarget} × floor`)
      met &&= ratio >= scenario.ratioTarget
    }
    targets = parts.join(', ')
  } else {
    ratio = f.p50 > 0 ? s.p50 / f.p50 : 0
    targets = `≤ ${scenario.ratioTarget} × floor`
    met = ratio <= scenario.ratioTarget
    if (scenario.id === 'g-import') {
      targets += ', ≥ 100,000 rows/s'
      met &&= s.throughput >= 100_000
    }
    const details = scenario.details?.()
    if (details) {
      targets += `; ${details.targets}`
      met &&= details.met
    }
  }
  return {
    id: scenario.id,
    title: scenario.title,
    type: scenario.type,
    ...(scenario.type === 'load' ? { connections } : {}),
    ...(scenario.type === 'load' && scenario.once ? { requestsPerRun: scenario.requests.length } : {}),
    service: s,
    floor: f,
    ratio,
    rows,
    ...(scenario.type === 'once' && scenario.details ? { details: scenario.details() } : {}),
    targets,
    met,
    runs: { service, floor },
  }
}

function selected(scenarios: readonly Scenario[], only: readonly string[]): Scenario[] {
  return scenarios.filter((scenario) => isSelected(scenario.id, only))
}

export async function runBench(options: BenchOptions): Promise<BenchReport> {
  const log = options.log
  buildService()
  const workDir = mkdtempSync(join(tmpdir(), 'optics-bench-'))
  mkdirSync(options.dataDir, { recursive: true })
  let db: Database | undefined = await open(options)
  let service: Service | undefined
  try {
    await prepareCatalogue(db, options)
    const catalogue: Record<string, number> = {}
    for (const table of [
      glasses.skuTable,
      glasses.priceTable,
      glasses.matview,
      lenses.skuTable,
      lenses.matview,
      ...otherKinds.map((kind) => kind.matview),
    ]) {
      catalogue[table] = await countOf(db, table)
    }
    const { rows: versionRows } = await sql<{ version: string }>`SELECT version() AS version`.execute(db.primary)
    log(`catalogue: ${JSON.stringify(catalogue)}`)
    const coldRequests = options.coldRequests ?? 20_000
    const scenarios = selected(
      await buildScenarios({
        db,
        scale: options.scale,
        workDir,
        connections: options.connections,
        coldRuns: options.coldRuns ?? 1,
        coldRequests,
        coldWarmup: options.coldWarmup,
        only: options.only,
      }),
      options.only,
    )
    const warmupSeconds = options.warmupSeconds ?? Math.min(2, options.seconds)
    // The cold mix has a list per run: as many runs as lists.
    const runsOf = (scenario: Scenario) =>
      scenario.type === 'load' && scenario.once ? scenario.once.runs.length : options.runs
    const connectionsOf = (scenario: Scenario) =>
      scenario.type === 'load' ? (scenario.connections ?? options.connections) : options.connections
    const serviceOptions = {
      poolSize: options.connections,
      caches: options.caches,
      searchIndex: options.searchIndex,
      readySeconds: options.readySeconds,
    }
    const serviceRuns = new Map<string, LoadResult[]>()
    const floorRuns = new Map<string, LoadResult[]>()
    const rowsOf = new Map<string, number>()
    // The server's processes when it runs here; the embedded database works inside the measured process.
    const databaseMeasured = isLocalServer(options.url)
    const record = (map: Map<string, LoadResult[]>, id: string, result: LoadResult) =>
      map.set(id, [...(map.get(id) ?? []), result])

    const floorOf = async (scenario: Scenario, run: number, database: Database) => {
      if (scenario.type === 'load') {
        const connections = connectionsOf(scenario)
        if (scenario.once) {
          // Each request once: the warm-up's (distinct) before the first run, then this run's list.
          const { warmup } = scenario.once
          const requests = scenario.once.runs[run] ?? []
          let warmed: LoadResult | undefined
          if (run === 0 && warmup.length > 0) {
            const work = (index: number) => (warmup[index] as BenchRequest).floor(database)
            warmed = await runWorkers(work, { connections, once: true, count: warmup.length })
          }
          const work = (index: number) => (requests[index] as BenchRequest).floor(database)
          const result = await withCpu(() => runWorkers(work, { connections, once: true, count: requests.length }), {
            database: databaseMeasured,
          })
          return withWarmupFailures(byCategory(result, requests), warmed)
        }
        const requests = scenario.requests
        const work = (index: number) => requests[index % requests.length]?.floor(database) ?? Promise.resolve()
        if (run === 0 && warmupSeconds > 0) await runWorkers(work, { connections, seconds: warmupSeconds })
        return withCpu(() => runWorkers(work, { connections, seconds: options.seconds }), {
          database: databaseMeasured,
        })
      }
      const result = await timeOnce(() => scenario.floor(database, run))
      rowsOf.set(scenario.id, result.rows)
      return result
    }
    const serviceOf = async (scenario: Scenario, run: number, target: { baseUrl?: string; db?: Database }) => {
      if (scenario.type === 'load') {
        const connections = connectionsOf(scenario)
        const baseUrl = target.baseUrl as string
        const measure = { servicePid: service?.pid, database: databaseMeasured }
        if (scenario.once) {
          const warmup = scenario.once.warmup.map((request) => request.http)
          const list = scenario.once.runs[run] ?? []
          let warmed: LoadResult | undefined
          if (run === 0 && warmup.length > 0) warmed = await runHttp(baseUrl, warmup, { connections, once: true })
          const requests = list.map((request) => request.http)
          const result = await withCpu(() => runHttp(baseUrl, requests, { connections, once: true }), measure)
          return withWarmupFailures(byCategory(result, list), warmed)
        }
        const requests = scenario.requests.map((request) => request.http)
        if (run === 0 && warmupSeconds > 0) await runHttp(baseUrl, requests, { connections, seconds: warmupSeconds })
        return withCpu(() => runHttp(baseUrl, requests, { connections, seconds: options.seconds }), measure)
      }
      const result = await timeOnce(() => scenario.service(target, run))
      rowsOf.set(scenario.id, Math.max(rowsOf.get(scenario.id) ?? 0, result.rows))
      return result
    }
    const show = (scenario: Scenario, side: string, result: LoadResult) => {
      log(
        scenario.type === 'load'
          ? `  ${scenario.id} ${side}: ${result.throughput.toFixed(0)} req/s, p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, ${result.errors} errors` +
              (scenario.once ? ` (${result.requests} requests in ${result.durationSeconds.toFixed(1)} s)` : '')
          : `  ${scenario.id} ${side}: ${result.p50.toFixed(2)} s, ${result.throughput.toFixed(0)} rows/s`,
      )
      if (result.errors > 0) log(failureLine(scenario, side.trim(), result))
      for (const slow of result.slowest?.slice(0, SLOWEST_SHOWN) ?? []) {
        log(`    ${slow.ms.toFixed(1)} ms ${slow.request.slice(0, 200)}`)
      }
    }
    const measureFloor = async (scenario: Scenario, run: number) => {
      if (options.floor === 'off') return
      const result = await floorOf(scenario, run, db as Database)
      show(scenario, 'floor  ', result)
      record(floorRuns, scenario.id, result)
    }
    const measureService = async (scenario: Scenario, run: number) => {
      const target = scenario.type === 'once' && scenario.side === 'local' ? { db } : { baseUrl: service?.baseUrl }
      const result = await serviceOf(scenario, run, target)
      show(scenario, 'service', result)
      record(serviceRuns, scenario.id, result)
    }
    const isLocal = (scenario: Scenario) => scenario.type === 'once' && scenario.side === 'local'

    let peakRssMiB: number | null = null
    let readySeconds: number | null = null
    if (options.url) {
      service = await startService({ url: options.url, ...serviceOptions })
      readySeconds = service.readySeconds
      log(`service: ready in ${service.readySeconds.toFixed(1)} s (search index ${options.searchIndex ?? 'on'})`)
      for (const scenario of scenarios) {
        log(scenario.title)
        for (let run = 0; run < runsOf(scenario); run++) {
          // Alternate which side goes first, so neither always meets the warmer caches.
          if (run % 2 === 0) {
            await measureFloor(scenario, run)
            await measureService(scenario, run)
          } else {
            await measureService(scenario, run)
            await measureFloor(scenario, run)
          }
        }
      }
    } else {
      /*
       * Embedded: the database admits one process at a time. The load scenarios first (their floors, then the
       * service alone on the database), then the one-shots the same way: those write (prices, SKUs, the matview),
       * and a load scenario measured after them would read a changed, unvacuumed table on one side only.
       */
      const phases = [scenarios.filter((s) => s.type === 'load'), scenarios.filter((s) => s.type === 'once')]
      for (const phase of phases.filter((list) => list.length > 0)) {
        db ??= await open(options)
        for (const scenario of phase) {
          log(scenario.title)
          for (let run = 0; run < runsOf(scenario); run++) {
            await measureFloor(scenario, run)
            if (isLocal(scenario)) await measureService(scenario, run)
          }
        }
        const remote = phase.filter((s) => !isLocal(s))
        if (remote.length === 0) continue
        await db.close()
        db = undefined
        const started = await startService({ dataDir: options.dataDir, ...serviceOptions })
        readySeconds = Math.max(readySeconds ?? 0, started.readySeconds)
        log(`service: ready in ${started.readySeconds.toFixed(1)} s (search index ${options.searchIndex ?? 'on'})`)
        service = started
        for (const scenario of remote) {
          log(`${scenario.title} (service)`)
          for (let run = 0; run < runsOf(scenario); run++) await measureService(scenario, run)
        }
        peakRssMiB = Math.max(peakRssMiB ?? 0, started.peakRssMiB() ?? 0) || null
        await started.stop()
        service = undefined
      }
    }
    if (service) {
      peakRssMiB = service.peakRssMiB()
      await service.stop()
      service = undefined
    }

    const cores = cpus()
    return {
      date: new Date().toISOString(),
      commit: commitOf(),
      driver: options.url ? 'postgres' : 'pglite',
      caches: options.caches ?? 'on',
      searchIndex: options.searchIndex ?? 'on',
      coldRequests,
      server: versionRows[0]?.version.split(' on ')[0] ?? 'unknown',
      machine: {
        cpu: cores[0]?.model ?? 'unknown',
        cores: cores.length,
        memoryGiB: Math.round(totalmem() / 2 ** 30),
        node: process.version,
      },
      scale: options.scale,
      catalogue,
      seconds: options.seconds,
      connections: options.connections,
      runs: options.runs,
      coldRuns: options.coldRuns ?? 1,
      peakRssMiB,
      readySeconds,
      scenarios: scenarios.map((scenario) =>
        summarise(
          scenario,
          serviceRuns.get(scenario.id) ?? [],
          floorRuns.get(scenario.id) ?? [],
          rowsOf.get(scenario.id),
          connectionsOf(scenario),
        ),
      ),
    }
  } finally {
    await service?.stop()
    await db?.close()
    rmSync(workDir, { recursive: true, force: true })
  }
}
