import { createServer } from 'node:net'
import { setFlagsFromString } from 'node:v8'
import { buildApp } from './app.js'
import { type Config, ConfigError, loadConfig, redactSecrets } from './config.js'
import { openDatabase } from './db/database.js'
import { listenForBackups } from './db/embedded/data-dir-backup.js'
import { lockDataDir } from './db/embedded/data-dir-lock.js'
import { migrateToLatest } from './db/migrate.js'
import { waitForDatabase } from './db/server/wait-for-database.js'
import { ensureDemoCatalogue } from './demo/demo-catalogue.js'
import {
  describeLookAlikeKeyReport,
  readLookAlikeKeyReport,
  reportsLookAlikeKeys,
} from './glass-prices/look-alike-keys.js'
import { removeStaleUploads } from './http/upload-spool.js'

/**
 * How long a shutdown may take before the process gives up on the requests still running and exits non-zero;
 * below Kubernetes' default grace period (30 s), so the process ends on its own terms.
 */
const SHUTDOWN_TIMEOUT_MS = 25_000

/** How long a stopping process may wait for its last log lines to be written before it exits anyway. */
const EXIT_GRACE_MS = 1_000

/**
 * The longest a start waits for the search index to be restored from its snapshot before it listens anyway (a file
 * of another moment is patched by reading every row again, seconds at a million rows; see snapshot.ts).
 */
const LISTEN_AFTER_RESTORE_MS = 5_000

/**
 * Ends the process with the code, without cutting off its last log lines: the logger writes asynchronously,
 * and process.exit while a line is being written loses or reorders the final lines. Once everything is closed
 * the process ends by itself after the log is written; the timer (which keeps nothing alive) covers a handle
 * still open (a request that outlived the shutdown timeout, or one a library left behind).
 */
function exitOnceLogged(code: number): void {
  process.exitCode = code
  setTimeout(() => process.exit(code), EXIT_GRACE_MS).unref()
}

/** loadConfig → openDatabase → migrate → buildApp → stale uploads → demo data → listen; SIGTERM drains, then closes the database. */
/**
 * How far V8 lets the heap grow past what the last full collection kept before it collects again, in percent.
 * Its own rule (up to four times the live heap) lets a busy service pile up a few hundred MB of request garbage
 * over a search index of a hundred; half again keeps the process near its live size at no measured cost in
 * throughput. A `--heap-growing-percent` in NODE_OPTIONS or on the command line wins.
 */
const HEAP_GROWING_PERCENT = 50

function boundHeapGrowth(): void {
  const given = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]
  if (given.some((option) => option.startsWith('--heap-growing-percent'))) return
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
}

async function main(): Promise<void> {
  boundHeapGrowth()
  let config: Config
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`optics-catalog: configuration error: ${error.message}\n`)
      process.exit(2)
    }
    throw error
  }

  // A port in use is found before the database opens (and migrates), not after.
  await checkPort(config.port, config.host)
  // One process per embedded data directory: a second service or a CLI command on it is refused (removed on exit).
  if (!config.databaseUrl) lockDataDir(config.dataDir, 'the optics-catalog service')

  const db = await openDatabase({
    url: config.databaseUrl,
    readUrl: config.databaseReadUrl,
    readMaxWaitMs: config.databaseReadMaxWaitMs,
    dataDir: config.dataDir,
    sharedBuffersMb: config.embeddedSharedBuffersMb,
    poolSize: config.databasePoolSize,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
  })
  if (config.databaseUrl) {
    try {
      await waitForDatabase(db, {
        url: config.databaseUrl,
        timeoutSeconds: config.databaseStartTimeoutSeconds,
        onRetry: (message) => process.stderr.write(`optics-catalog: ${message}\n`),
      })
    } catch (error) {
      await db.close().catch(() => {})
      throw error
    }
  }
  const applied = await migrateToLatest(db.primary)
  const app = await buildApp({ config, db })
  if (reportsLookAlikeKeys(applied)) {
    // Once, when the migration has just run: what it merged, and what a price manager must look at.
    const report = await readLookAlikeKeyReport(db.primary)
    const lines = describeLookAlikeKeyReport(report)
    const clean = report.lookAlikes.length === 0 && report.invalid.length === 0
    if (lines.length > 0)
      app.log[clean ? 'info' : 'warn']({ findings: lines }, 'look-alike keys of the glass price list')
  }
  // Uploads a crashed or killed predecessor was spooling would otherwise stay on disk for ever.
  const staleUploads = await removeStaleUploads()
  if (staleUploads > 0) app.log.info({ removed: staleUploads }, 'removed upload spools of stopped processes')
  await ensureDemoCatalogue(db, { mode: config.demoData, scale: config.demoScale, log: app.log })
  if (config.auth.mode === 'demo') {
    app.log.warn(
      { host: config.host, port: config.port },
      'demo mode (AUTH_MODE=demo): no authentication, so anyone who reaches this service may read and change its prices; use AUTH_MODE=jwt for real data',
    )
  }

  // The embedded database's backups go through its owner: `npm run cli -- backup FILE` asks on this socket.
  const backups = db.copyDataDir
    ? await listenForBackups(config.dataDir, db.copyDataDir, (error, message) => app.log.error({ err: error }, message))
    : undefined

  /*
   * app.close() stops accepting connections, answers new requests on open keep-alive connections with 503,
   * waits for the requests in flight to finish (and the matview refresher to stop), then a backup under way, then
   * the database closes.
   */
  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down: draining in-flight requests')
    const guard = setTimeout(() => {
      app.log.error({ timeoutMs: SHUTDOWN_TIMEOUT_MS }, 'shutdown timed out; exiting with requests unfinished')
      exitOnceLogged(1)
    }, SHUTDOWN_TIMEOUT_MS)
    guard.unref()
    try {
      await app.close()
      await new Promise((done) => (backups ? backups.close(done) : done(undefined)))
      app.log.info('requests drained; closing the database')
      await db.close()
      app.log.info('shut down')
      exitOnceLogged(0)
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed')
      exitOnceLogged(1)
    }
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  process.once('SIGINT', () => void shutdown('SIGINT'))

  // A restart restores the search index from its snapshot in a second or so at a million SKUs: listening after
  // that, its first requests find the index rather than wait for it. Without a usable snapshot (a first start) it
  // listens at once. Readiness reports DOWN until the index holds every kind, warmed; requests meanwhile are
  // answered from what it holds, else from SQL.
  app.searchIndex.start()
  await app.searchIndex.restored(LISTEN_AFTER_RESTORE_MS)
  await app.listen({ port: config.port, host: config.host })
}

/**
 * Can the service listen on HOST:PORT? Tried by binding it for a moment, so a port in use stops the start at once,
 * naming `PORT`, before the database is opened and migrated. Port 0 (any free port) always can.
 */
async function checkPort(port: number, host: string): Promise<void> {
  if (port === 0) return
  await new Promise<void>((resolve, reject) => {
    const probe = createServer()
    probe.once('error', (error: NodeJS.ErrnoException) => {
      const where = `${host}:${port}`
      if (error.code === 'EADDRINUSE') {
        reject(new StartError(`PORT: ${where} is already in use by another process; stop it or choose another PORT`))
      } else if (error.code === 'EACCES') {
        reject(new StartError(`PORT: not allowed to listen on ${where} (EACCES); ports below 1024 need privileges`))
      } else if (error.code === 'EADDRNOTAVAIL' || error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN') {
        reject(new StartError(`HOST: ${host} is not an address of this machine (${error.code})`))
      } else {
        reject(new StartError(`PORT: cannot listen on ${where} (${error.code ?? error.message})`))
      }
    })
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()))
  })
}

/** A start-up failure whose message is the whole story (one line naming the variable). */
class StartError extends Error {}

main().catch((error: unknown) => {
  const message = String((error as Error).message ?? error).split('\n')[0] ?? ''
  process.stderr.write(`optics-catalog: failed to start: ${redactSecrets(message)}\n`)
  process.exit(1)
})
