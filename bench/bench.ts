import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir, totalmem } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import { seedCatalogue } from '../src/catalog/demo-catalogue.js'
import { glasses, lenses } from '../src/catalog/kinds.js'
import { type Database, openDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { type CpuPerRequest, isLocalServer, withCpu } from './cpu.js'
import { type LoadResult, median, runHttp, runWorkers } from './load.js'
import { buildScenarios, type Scenario } from './scenarios.js'
import { buildService, type Service, startService } from './service.js'

/*
 * One benchmark run: load (or reuse) the catalogue, build the scenarios from it, then measure every scenario on
 * both sides, the service and its floor, `runs` times, and report medians. On the server both sides alternate
 * scenario by scenario; the embedded database admits one process at a time, so there every floor runs first,
 * then the service in its own process.
 */

export interface BenchOptions {
  /** The server, or undefined for the embedded database in `dataDir`. */
  readonly url?: string
  readonly dataDir: string
  /** SKUs per kind (glasses and lenses). */
  readonly scale: number
  readonly seconds: number
  /** Seconds of unmeasured load before a load scenario's first run on each side (default: min(2, seconds)). */
  readonly warmupSeconds?: number
  readonly connections: number
  readonly runs: number
  /** Scenario ids (or their prefixes, `a`, `d-listing`…) to run; all when empty. */
  readonly only: readonly string[]
  /** The service's caches of totals, pages, facets and suggestions (default on, as deployed). */
  readonly caches?: 'on' | 'off'
  /** Keep a catalogue already loaded instead of loading it again. */
  readonly reuse: boolean
  readonly log: (line: string) => void
}

export interface SideFigures {
  readonly throughput: number
  readonly p50: number
  readonly p99: number
  readonly errors: number
  /** Load: the median processor time per request of each party (see cpu.ts), when measurable. */
  readonly cpuPerRequestUs?: CpuPerRequest
}

export interface ScenarioResult {
  readonly id: string
  readonly title: string
  readonly type: 'load' | 'once'
  /** Load: requests per second and latencies in ms. One-shot: seconds (in p50) and rows per second. */
  readonly service: SideFigures
  readonly floor: SideFigures
  /** Load: service throughput ÷ floor throughput. One-shot: service seconds ÷ floor seconds. */
  readonly ratio: number
  readonly rows?: number
  readonly targets: string
  readonly met: boolean
  readonly runs: { readonly service: LoadResult[]; readonly floor: LoadResult[] }
}

export interface BenchReport {
  readonly date: string
  readonly commit: string
  readonly driver: 'postgres' | 'pglite'
  readonly caches: 'on' | 'off'
  readonly server: string
  readonly machine: { readonly cpu: string; readonly cores: number; readonly memoryGiB: number; readonly node: string }
  readonly scale: number
  readonly catalogue: Record<string, number>
  readonly seconds: number
  readonly connections: number
  readonly runs: number
  readonly peakRssMiB: number | null
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

const open = (options: BenchOptions) =>
  openDatabase({ url: options.url, dataDir: options.dataDir, poolSize: options.connections, statementTimeoutMs: 0 })

async function prepareCatalogue(db: Database, options: BenchOptions): Promise<void> {
  await migrateToLatest(db.primary)
  const loaded = (await countOf(db, glasses.skuTable)) > 0 && (await countOf(db, lenses.skuTable)) > 0
  if (options.reuse && loaded) {
    // Earlier runs changed prices and replaced SKUs: vacuumed and analysed, every run starts from the same state.
    options.log('catalogue: reusing the one loaded (vacuum, analyse)')
    for (const table of [glasses.priceTable, glasses.skuTable, glasses.matview, lenses.skuTable, lenses.matview]) {
      await sql`VACUUM (ANALYZE) ${sql.table(table)}`.execute(db.primary)
    }
    return
  }
  options.log(`catalogue: loading ${options.scale.toLocaleString('en-US')} SKUs of glasses and of lenses`)
  const results = await seedCatalogue(db, { scale: options.scale, kinds: [glasses, lenses], replace: true })
  for (const result of results) {
    options.log(`  ${result.kind}: ${result.skus} SKUs, ${result.entries} entries in ${result.milliseconds} ms`)
  }
}

/** A one-shot as a LoadResult: one "request", its duration in seconds as p50/p99, rows/s as throughput. */
async function timeOnce(work: () => Promise<number>): Promise<LoadResult & { rows: number }> {
  const started = performance.now()
  const rows = await work()
  const seconds = (performance.now() - started) / 1000
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

function figures(results: readonly LoadResult[]): SideFigures {
  const cpu = results.flatMap((r) => (r.cpuPerRequestUs ? [r.cpuPerRequestUs] : []))
  const medianOf = (values: (number | null)[]) =>
    values.some((value) => value === null) ? null : median(values as number[])
  return {
    throughput: median(results.map((r) => r.throughput)),
    p50: median(results.map((r) => r.p50)),
    p99: median(results.map((r) => r.p99)),
    errors: results.reduce((sum, r) => sum + r.errors, 0),
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
): ScenarioResult {
  const s = figures(service)
  const f = figures(floor)
  let ratio: number
  let targets: string
  let met: boolean
  if (scenario.type === 'load') {
    ratio = f.throughput > 0 ? s.throughput / f.throughput : 0
    const parts = [`p99 ≤ ${scenario.p99Target} ms`]
    met = s.p99 <= scenario.p99Target && s.errors === 0
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
  }
  return {
    id: scenario.id,
    title: scenario.title,
    type: scenario.type,
    service: s,
    floor: f,
    ratio,
    rows,
    targets,
    met,
    runs: { service, floor },
  }
}

function selected(scenarios: readonly Scenario[], only: readonly string[]): Scenario[] {
  if (only.length === 0) return [...scenarios]
  return scenarios.filter((scenario) => only.some((prefix) => scenario.id.startsWith(prefix)))
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
    for (const table of [glasses.skuTable, glasses.priceTable, glasses.matview, lenses.skuTable, lenses.matview]) {
      catalogue[table] = await countOf(db, table)
    }
    const { rows: versionRows } = await sql<{ version: string }>`SELECT version() AS version`.execute(db.primary)
    log(`catalogue: ${JSON.stringify(catalogue)}`)
    const scenarios = selected(await buildScenarios({ db, scale: options.scale, workDir }), options.only)
    const load = { connections: options.connections, seconds: options.seconds }
    const warmup = { connections: options.connections, seconds: options.warmupSeconds ?? Math.min(2, options.seconds) }
    const serviceRuns = new Map<string, LoadResult[]>()
    const floorRuns = new Map<string, LoadResult[]>()
    const rowsOf = new Map<string, number>()
    // The server's processes when it runs here; the embedded database works inside the measured process.
    const databaseMeasured = isLocalServer(options.url)
    const record = (map: Map<string, LoadResult[]>, id: string, result: LoadResult) =>
      map.set(id, [...(map.get(id) ?? []), result])

    const floorOf = async (scenario: Scenario, run: number, database: Database) => {
      if (scenario.type === 'load') {
        const requests = scenario.requests
        const work = (index: number) => requests[index % requests.length]?.floor(database) ?? Promise.resolve()
        if (run === 0 && warmup.seconds > 0) await runWorkers(work, warmup)
        return withCpu(() => runWorkers(work, load), { database: databaseMeasured })
      }
      const result = await timeOnce(() => scenario.floor(database, run))
      rowsOf.set(scenario.id, result.rows)
      return result
    }
    const serviceOf = async (scenario: Scenario, run: number, target: { baseUrl?: string; db?: Database }) => {
      if (scenario.type === 'load') {
        const requests = scenario.requests.map((request) => request.http)
        if (run === 0 && warmup.seconds > 0) await runHttp(target.baseUrl as string, requests, warmup)
        return withCpu(() => runHttp(target.baseUrl as string, requests, load), {
          servicePid: service?.pid,
          database: databaseMeasured,
        })
      }
      const result = await timeOnce(() => scenario.service(target, run))
      rowsOf.set(scenario.id, Math.max(rowsOf.get(scenario.id) ?? 0, result.rows))
      return result
    }
    const show = (scenario: Scenario, side: string, result: LoadResult) =>
      log(
        scenario.type === 'load'
          ? `  ${scenario.id} ${side}: ${result.throughput.toFixed(0)} req/s, p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms, ${result.errors} errors`
          : `  ${scenario.id} ${side}: ${result.p50.toFixed(2)} s, ${result.throughput.toFixed(0)} rows/s`,
      )
    const measureFloor = async (scenario: Scenario, run: number) => {
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
    if (options.url) {
      service = await startService({ url: options.url, poolSize: options.connections, caches: options.caches })
      for (const scenario of scenarios) {
        log(scenario.title)
        for (let run = 0; run < options.runs; run++) {
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
          for (let run = 0; run < options.runs; run++) {
            await measureFloor(scenario, run)
            if (isLocal(scenario)) await measureService(scenario, run)
          }
        }
        const remote = phase.filter((s) => !isLocal(s))
        if (remote.length === 0) continue
        await db.close()
        db = undefined
        const started = await startService({
          dataDir: options.dataDir,
          poolSize: options.connections,
          caches: options.caches,
        })
        service = started
        for (const scenario of remote) {
          log(`${scenario.title} (service)`)
          for (let run = 0; run < options.runs; run++) await measureService(scenario, run)
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
      peakRssMiB,
      scenarios: scenarios.map((scenario) =>
        summarise(
          scenario,
          serviceRuns.get(scenario.id) ?? [],
          floorRuns.get(scenario.id) ?? [],
          rowsOf.get(scenario.id),
        ),
      ),
    }
  } finally {
    await service?.stop()
    await db?.close()
    rmSync(workDir, { recursive: true, force: true })
  }
}
