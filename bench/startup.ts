import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { openDatabase } from '../src/db/database.js'
import { ColdMixGenerator, type ColdRequest, readColdCatalogue } from './cold-mix.js'
import { median, percentile } from './load.js'
import { buildService, startService } from './service.js'

/*
 * npm run bench:startup -- [--clients C] [--after S] [--data-dir D]
 * Start-up under load. The service starts on the catalogue already loaded (BENCH_DATABASE_URL, else the embedded
 * database in --data-dir, default bench/.data; `npm run bench` loads one), and from the moment it listens (which a
 * restart does once its index is restored; the seconds from the spawn to then are reported), C
 * clients (default 4) send the cold mix's varied counter requests, each once, while its search index loads, until
 * readiness is UP and S seconds beyond (default 10). It starts twice: first with no snapshot of the search index
 * (every table read from the database), then again from the snapshot the first start left (a restart). Every
 * request must be answered 2xx. Reported per start and phase (while loading, once loaded): requests, failures, p50,
 * p99 and the slowest, and the service thread's largest event-loop stall (`nodejs_eventloop_lag_max_seconds`,
 * scraped every second). Exits 1 when a request failed.
 */

const here = fileURLToPath(new URL('.', import.meta.url))
const { values } = parseArgs({
  options: {
    clients: { type: 'string', default: '4' },
    after: { type: 'string', default: '10' },
    'data-dir': { type: 'string', default: join(here, '.data') },
  },
})
const url = process.env.BENCH_DATABASE_URL || undefined
const clients = Number(values.clients)
const afterSeconds = Number(values.after)

interface Sample {
  readonly phase: 'loading' | 'loaded'
  readonly ms: number
  readonly status: number
  /** Seconds from the start to the moment it was sent. */
  readonly sentAt: number
  readonly request: ColdRequest
}

// The requests: read from the catalogue before the service owns it (the embedded database has one owner).
const db = await openDatabase(url ? { url } : { dataDir: values['data-dir'] })
const catalogue = await readColdCatalogue(db.read)
await db.close()
const requests: ColdRequest[] = new ColdMixGenerator(catalogue, 7_001).take(50_000)
process.stdout.write(`startup: ${requests.length} distinct requests of the cold mix\n`)

buildService()

/** One start of the service under the clients' requests, until readiness and `--after` seconds beyond. */
async function measuredStart(snapshotDir: string) {
  const started = performance.now()
  const service = await startService({
    ...(url ? { url } : { dataDir: values['data-dir'] }),
    poolSize: 16,
    waitFor: 'listening',
    readySeconds: 600,
    snapshotDir,
  })
  const listeningSeconds = (performance.now() - started) / 1000
  process.stdout.write(`startup: listening after ${listeningSeconds.toFixed(1)} s; ${clients} clients start\n`)

  let phase: 'loading' | 'loaded' = 'loading'
  let readyAt: number | undefined
  let stop = false
  const samples: Sample[] = []
  const stalls: Record<'loading' | 'loaded', number> = { loading: 0, loaded: 0 }

  async function client(): Promise<void> {
    while (!stop && next < requests.length) {
      const request = requests[next++] as ColdRequest
      const sentIn = phase
      const at = performance.now()
      let status = 0
      try {
        const response = await fetch(`${service.baseUrl}${request.http.path}`, {
          method: request.http.method,
          ...(request.http.body === undefined
            ? {}
            : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(request.http.body) }),
          signal: AbortSignal.timeout(30_000),
        })
        await response.arrayBuffer()
        status = response.status
      } catch {
        status = 0
      }
      samples.push({ phase: sentIn, ms: performance.now() - at, status, sentAt: (at - started) / 1000, request })
    }
  }

  async function watch(): Promise<void> {
    while (!stop) {
      const at = phase
      try {
        const text = await (await fetch(`${service.baseUrl}/actuator/prometheus`)).text()
        const match = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text)
        if (match) stalls[at] = Math.max(stalls[at], Number(match[1]) * 1000)
        if (phase === 'loading') {
          const ready = await fetch(`${service.baseUrl}/actuator/health/readiness`)
          await ready.arrayBuffer()
          if (ready.ok) {
            phase = 'loaded'
            readyAt = performance.now()
            process.stdout.write(`startup: ready after ${((readyAt - started) / 1000).toFixed(1)} s\n`)
            setTimeout(() => {
              stop = true
            }, afterSeconds * 1000)
          }
        }
      } catch {
        // the next scrape tells
      }
      await new Promise((resolve) => setTimeout(resolve, 1000))
    }
  }

  await Promise.all([watch(), ...Array.from({ length: clients }, () => client())])
  // Stopped as an operator stops it (SIGTERM): it writes its snapshot on the way out.
  await service.stop()

  function summary(of: 'loading' | 'loaded') {
    const chosen = samples.filter((sample) => sample.phase === of)
    const ms = chosen.map((sample) => sample.ms).sort((a, b) => a - b)
    const failed = chosen.filter((sample) => sample.status < 200 || sample.status > 299).length
    const round = (value: number) => Math.round(value * 10) / 10
    return {
      requests: chosen.length,
      failed,
      p50: round(median(ms)),
      p99: round(percentile(ms, 0.99)),
      slowest: round(ms[ms.length - 1] ?? 0),
      over1s: ms.filter((value) => value > 1000).length,
      largestStallMs: round(stalls[of]),
      // Which requests were slowest, and when they were sent: what a start leaves slow, and for how long.
      slowestRequests: [...chosen]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 5)
        .map((sample) => ({
          ms: round(sample.ms),
          sentAtSeconds: round(sample.sentAt),
          request: `${sample.request.http.method} ${sample.request.http.path}${
            sample.request.http.body === undefined ? '' : ` ${JSON.stringify(sample.request.http.body)}`
          }`,
        })),
    }
  }
  return {
    listeningSeconds: Math.round(listeningSeconds * 10) / 10,
    readySeconds: readyAt === undefined ? null : Math.round(((readyAt - started) / 1000) * 10) / 10,
    loading: summary('loading'),
    loaded: summary('loaded'),
  }
}

// The first start finds no snapshot of the index and reads every table from the database; it leaves one, and the
// second start (a restart, as after a deploy) restores the index from it. Each sends requests of its own.
let next = 0
const snapshotDir = mkdtempSync(join(tmpdir(), 'optics-bench-snapshot-'))
const starts: Record<string, Awaited<ReturnType<typeof measuredStart>>> = {}
try {
  for (const start of ['read from the database', 'restored from the snapshot'] as const) {
    process.stdout.write(`startup: the index ${start}\n`)
    starts[start] = await measuredStart(snapshotDir)
  }
} finally {
  rmSync(snapshotDir, { recursive: true, force: true })
}

const report = {
  date: new Date().toISOString(),
  database: url ? 'postgres' : 'pglite',
  cores: cpus().length,
  loadAverage: loadavg().map((value) => Math.round(value * 10) / 10),
  clients,
  starts,
}
const results = join(here, 'results', 'startup')
mkdirSync(results, { recursive: true })
const file = join(results, `${report.date.replace(/[:.]/g, '-')}-${report.database}.json`)
writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
process.stdout.write(
  `\n| start | phase | requests | failed | p50 ms | p99 ms | slowest ms | over 1 s | largest event-loop stall ms |\n` +
    `|---|---|---|---|---|---|---|---|---|\n` +
    Object.entries(starts)
      .flatMap(([start, measured]) =>
        (['loading', 'loaded'] as const).map((of) => {
          const s = measured[of]
          const when =
            of === 'loading'
              ? `while loading (listening after ${measured.listeningSeconds} s, ready after ${measured.readySeconds} s)`
              : 'once loaded'
          return `| ${start} | ${when} | ${s.requests} | ${s.failed} | ${s.p50} | ${s.p99} | ${s.slowest} | ${s.over1s} | ${s.largestStallMs} |`
        }),
      )
      .join('\n') +
    `\n\nThe slowest requests while loading (ms, sent at s after the start):\n` +
    Object.entries(starts)
      .flatMap(([start, measured]) => [
        `  ${start}:`,
        ...measured.loading.slowestRequests.map(
          (slow) => `    ${slow.ms} ms at ${slow.sentAtSeconds} s: ${slow.request}`,
        ),
      ])
      .join('\n') +
    `\n\nload average ${report.loadAverage.join(', ')}\nresults: ${file}\n`,
)
if (Object.values(starts).some((measured) => measured.loading.failed + measured.loaded.failed > 0)) {
  process.exitCode = 1
}
