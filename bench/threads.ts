import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { openDatabase } from '../src/db/database.js'
import { ColdMixGenerator, readColdCatalogue } from './cold-mix.js'
import { processTimes } from './cpu.js'
import { runHttp } from './load.js'
import { buildService, type Service, startService } from './service.js'

/*
 * npm run bench:threads -- [--requests N] [--threads 1,2] [--data-dir D]
 *
 * The search threads (SEARCH_THREADS): the cold mix (cold-mix.ts, N distinct requests, each sent once) at 1 and 16
 * connections against the service with each number of threads, on every core and pinned to one (taskset), on the
 * catalogue already loaded (BENCH_DATABASE_URL, else the embedded database in --data-dir; `npm run bench` loads
 * one). Every start but the first restores the index from the snapshot the first wrote, so each answers from a
 * warmed index. Reported per setting: throughput, p50, p99 and the slowest request, the service's processor time
 * per request, and its resident memory (at the end, and its peak). One core against all shows how the threads
 * scale; on a machine of two cores PostgreSQL and the load generator share them too.
 */

const here = fileURLToPath(new URL('.', import.meta.url))
const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    threads: { type: 'string', default: '1,2' },
    'data-dir': { type: 'string', default: join(here, '.data') },
  },
})
const url = process.env.BENCH_DATABASE_URL || undefined
const requestCount = Number(values.requests)
const threadCounts = values.threads.split(',').map(Number)
if (!Number.isInteger(requestCount) || requestCount < 1 || threadCounts.some((n) => !Number.isInteger(n) || n < 1)) {
  process.stderr.write('bench: --requests must be a positive integer, --threads positive integers (1,2)\n')
  process.exit(2)
}
const log = (line: string) => process.stdout.write(`${line}\n`)

let canPin = true
try {
  execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
} catch {
  canPin = false
  log('threads: taskset not found; every setting runs on every core')
}

const db = await openDatabase(url ? { url } : { dataDir: values['data-dir'] })
const catalogue = await readColdCatalogue(db.read)
await db.close()
const generator = new ColdMixGenerator(catalogue, 9_001)
const warmup = generator.take(1_000).map((request) => request.http)
const requests = generator.take(requestCount).map((request) => request.http)
log(`threads: ${requests.length} distinct requests of the cold mix, after ${warmup.length} unmeasured`)

buildService()

interface Figures {
  readonly threads: number
  readonly cores: 'all' | 'one'
  readonly connections: number
  readonly throughput: number
  readonly p50: number
  readonly p99: number
  readonly slowest: number
  readonly errors: number
  /** The service's processor time per request, µs. */
  readonly cpuUs: number
  readonly rssMiB: number
  readonly peakRssMiB: number | null
}

const rss = (pid: number | undefined): number => {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return match ? Math.round(Number(match[1]) / 1024) : 0
}

const snapshotDir = mkdtempSync(join(tmpdir(), 'optics-bench-threads-'))
const figures: Figures[] = []
try {
  const settings = threadCounts.flatMap((threads) =>
    (canPin ? (['all', 'one'] as const) : (['all'] as const)).map((cores) => ({ threads, cores })),
  )
  for (const { threads, cores } of settings) {
    process.env.SEARCH_THREADS = String(threads)
    const service: Service = await startService({
      ...(url ? { url } : { dataDir: values['data-dir'] }),
      poolSize: 16,
      snapshotDir,
    })
    try {
      // Every thread of the process, those started later included, on the first core alone.
      if (cores === 'one') execFileSync('taskset', ['-a', '-p', '-c', '0', String(service.pid)], { stdio: 'ignore' })
      log(
        `\nSEARCH_THREADS=${threads}, ${cores === 'one' ? 'one core' : 'every core'} (ready in ${service.readySeconds.toFixed(1)} s)`,
      )
      await runHttp(service.baseUrl, warmup, { connections: 4, once: true })
      for (const connections of [1, 16]) {
        const before = processTimes(service.pid ?? 0)?.own ?? 0
        const result = await runHttp(service.baseUrl, requests, { connections, once: true })
        const cpu = (processTimes(service.pid ?? 0)?.own ?? 0) - before
        const measured: Figures = {
          threads,
          cores,
          connections,
          throughput: Math.round(result.throughput),
          p50: Math.round(result.p50 * 10) / 10,
          p99: Math.round(result.p99 * 10) / 10,
          slowest: Math.round(Math.max(0, ...(result.perRequestMs ?? [])) * 10) / 10,
          errors: result.errors,
          cpuUs: Math.round((cpu * 1e6) / result.requests),
          rssMiB: rss(service.pid),
          peakRssMiB: service.peakRssMiB(),
        }
        figures.push(measured)
        log(
          `  ${connections} connection${connections === 1 ? '' : 's'}: ${measured.throughput} req/s, p50 ${measured.p50} ms, ` +
            `p99 ${measured.p99} ms, slowest ${measured.slowest} ms, ${measured.errors} errors, ` +
            `${measured.cpuUs} µs of the service per request, RSS ${measured.rssMiB} MiB (peak ${measured.peakRssMiB})`,
        )
      }
    } finally {
      await service.stop()
    }
  }
} finally {
  rmSync(snapshotDir, { recursive: true, force: true })
}

const table = [
  '| SEARCH_THREADS | cores | connections | req/s | p50 ms | p99 ms | slowest ms | µs/request | RSS MiB (peak) |',
  '|---|---|---|---|---|---|---|---|---|',
  ...figures.map(
    (f) =>
      `| ${f.threads} | ${f.cores} | ${f.connections} | ${f.throughput} | ${f.p50} | ${f.p99} | ${f.slowest} | ${f.cpuUs} | ${f.rssMiB} (${f.peakRssMiB}) |`,
  ),
].join('\n')
log(`\n${table}`)
const results = join(here, 'results', 'threads')
mkdirSync(results, { recursive: true })
const file = join(results, `${new Date().toISOString().replace(/[:.]/g, '-')}-${url ? 'postgres' : 'embedded'}.json`)
writeFileSync(
  file,
  `${JSON.stringify({ date: new Date().toISOString(), cpus: cpus().length, requests: requestCount, figures }, null, 2)}\n`,
)
log(`\nresults: ${file}`)
if (figures.some((f) => f.errors > 0)) process.exit(1)
