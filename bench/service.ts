import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../test/harness.js'

/** Compiles the service as `npm start` does (incrementally: seconds when nothing changed). */
export function buildService(): void {
  execFileSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  })
}

/*
 * The service under test, in its own process, started the way `npm start` starts it (compiled), on a free
 * loopback port, with its pool sized to the benchmark's concurrency. The background matview refresh is off, so a
 * write scenario cannot slow the scenarios after it; the refresh is measured on its own. It counts as started when
 * its readiness probe answers 200, which waits for the search index's first load (minutes at a million rows).
 */

export interface Service {
  readonly baseUrl: string
  /** How long it took to become ready (or to listen), in seconds (the search index's first load, mostly). */
  readonly readySeconds: number
  /** The service's process id (to measure its processor time). */
  readonly pid: number | undefined
  /** The process's peak resident set so far (VmHWM), in MiB; null where /proc is not available. */
  peakRssMiB(): number | null
  stop(): Promise<void>
}

const root = fileURLToPath(new URL('..', import.meta.url))

function peakRss(child: ChildProcess): number | null {
  try {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8')
    const match = /^VmHWM:\s+(\d+) kB/m.exec(status)
    return match ? Math.round(Number(match[1]) / 1024) : null
  } catch {
    return null
  }
}

export async function startService(database: {
  readonly url?: string
  /** The service's DATABASE_READ_URL: a streaming standby of `url` for its reads. */
  readonly readUrl?: string
  readonly dataDir?: string
  readonly poolSize: number
  /** The service's RESULT_CACHE: `off` measures every request computed afresh. */
  readonly caches?: 'on' | 'off'
  /** The service's SEARCH_INDEX (default on, as deployed): `off` answers every search from SQL. */
  readonly searchIndex?: 'on' | 'off'
  /** How long to wait for readiness, in seconds (default 300: the index's first load of a large catalogue). */
  readonly readySeconds?: number
  /** `listening`: started once liveness answers, without waiting for the index (start-up under load). */
  readonly waitFor?: 'ready' | 'listening'
  /** The service's SEARCH_INDEX_SNAPSHOT_DIR; none (default): every start reads the index from the database. */
  readonly snapshotDir?: string
}): Promise<Service> {
  const port = await freePort()
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DEMO_DATA: 'false',
    // BENCH_SERVICE_LOG_LEVEL: the service's log level (with BENCH_SERVICE_STDOUT; `debug` logs each index load).
    LOG_LEVEL: process.env.BENCH_SERVICE_LOG_LEVEL ?? 'warn',
    MATVIEW_REFRESH: 'off',
    RATE_LIMIT_MAX: '0',
    AUTH_MODE: 'none',
    REQUEST_TIMEOUT_MS: '0',
    DATABASE_STATEMENT_TIMEOUT_MS: '0',
    DATABASE_POOL_SIZE: String(database.poolSize),
    RESULT_CACHE: database.caches ?? 'on',
    SEARCH_INDEX: database.searchIndex ?? 'on',
    SEARCH_INDEX_SNAPSHOT_DIR: database.snapshotDir ?? 'off',
  }
  delete env.DATABASE_URL
  delete env.DATABASE_READ_URL
  if (database.url) env.DATABASE_URL = database.url
  if (database.readUrl) env.DATABASE_READ_URL = database.readUrl
  else if (database.dataDir) env.DATA_DIR = database.dataDir

  // BENCH_SERVICE_NODE_ARGS: extra Node options for the service, e.g. `--cpu-prof --cpu-prof-dir=profiles`.
  const nodeArgs = (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)
  // BENCH_SERVICE_STDOUT: a file for the service's standard output (its log, `--trace-gc` lines), else discarded.
  const stdoutFile = process.env.BENCH_SERVICE_STDOUT
  const stdout = stdoutFile ? openSync(stdoutFile, 'a') : 'ignore'
  // As `npm start` runs it (package.json).
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=8', ...nodeArgs, '--enable-source-maps', 'dist/src/server.js'],
    {
      cwd: root,
      env,
      stdio: ['ignore', stdout, 'pipe'],
    },
  )
  if (typeof stdout === 'number') closeSync(stdout)
  let stderr = ''
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000)
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  const baseUrl = `http://127.0.0.1:${port}`

  const readySeconds = database.readySeconds ?? 300
  const starting = Date.now()
  const deadline = Date.now() + readySeconds * 1000
  for (;;) {
    const early = await Promise.race([exited, new Promise<'running'>((resolve) => setTimeout(resolve, 200, 'running'))])
    if (early !== 'running') throw new Error(`the service exited (${early}) before it was ready: ${stderr.trim()}`)
    try {
      // Bounded, so a service busy loading its index cannot hold the wait past its deadline.
      const probe = database.waitFor === 'listening' ? 'liveness' : 'readiness'
      const response = await fetch(`${baseUrl}/actuator/health/${probe}`, { signal: AbortSignal.timeout(5000) })
      if (response.ok) break
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL')
      throw new Error(`the service was not ready within ${readySeconds} s: ${stderr.trim()}`)
    }
  }

  return {
    baseUrl,
    pid: child.pid,
    readySeconds: (Date.now() - starting) / 1000,
    peakRssMiB: () => peakRss(child),
    async stop() {
      if (child.exitCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
      await exited
      clearTimeout(timer)
    },
  }
}
