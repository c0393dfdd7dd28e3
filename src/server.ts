import { buildApp } from './app.js'
import { ensureDemoCatalogue } from './catalog/demo-catalogue.js'
import { ConfigError, loadConfig } from './config.js'
import { openDatabase } from './db/database.js'
import { migrateToLatest } from './db/migrate.js'

/** loadConfig → openDatabase → migrate → demo data → buildApp → listen; SIGTERM drains, then closes the database. */
async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>
  try {
    config = loadConfig()
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`optics-catalog: configuration error: ${error.message}\n`)
      process.exit(2)
    }
    throw error
  }

  const db = await openDatabase({
    url: config.databaseUrl,
    readUrl: config.databaseReadUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
  })
  await migrateToLatest(db.primary)
  const app = await buildApp({ config, db })
  await ensureDemoCatalogue(db, { mode: config.demoData, scale: config.demoScale, log: app.log })

  let closing = false
  const shutdown = async (signal: string) => {
    if (closing) return
    closing = true
    app.log.info({ signal }, 'shutting down: draining in-flight requests')
    try {
      await app.close()
      await db.close()
      process.exit(0)
    } catch (error) {
      app.log.error({ err: error }, 'shutdown failed')
      process.exit(1)
    }
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  process.once('SIGINT', () => void shutdown('SIGINT'))

  await app.listen({ port: config.port, host: config.host })
}

main().catch((error: unknown) => {
  process.stderr.write(`optics-catalog: failed to start: ${(error as Error).message ?? error}\n`)
  process.exit(1)
})
