import { createReadStream, createWriteStream, statSync } from 'node:fs'
import { PassThrough, type Writable } from 'node:stream'
import { finished } from 'node:stream/promises'
import { pathToFileURL } from 'node:url'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { refreshMatview } from './catalog/freshness/catalog-repository.js'
import type { Kind } from './catalog/kinds/kind.js'
import { kindByPath, kinds } from './catalog/kinds/kinds.js'
import { type Config, ConfigError, loadConfig, redactSecrets } from './config.js'
import { type Database, openDatabase } from './db/database.js'
import { requestBackup, restoreBackup, writeBackup, writeBackupFile } from './db/embedded/data-dir-backup.js'
import { DataDirBusyError, type DataDirLock, lockDataDir } from './db/embedded/data-dir-lock.js'
import { migrateToLatest } from './db/migrate.js'
import { waitForDatabase } from './db/server/wait-for-database.js'
import { CatalogueNotEmptyError, DEMO_SEED, seedCatalogue } from './demo/demo-catalogue.js'
import { render } from './domain/messages.js'
import { GlassPriceConflicts, importGlassPrices, isGlassPriceList } from './glass-prices/glass-price-import.js'
import {
  describeLookAlikeKeyReport,
  readLookAlikeKeyReport,
  reportsLookAlikeKeys,
} from './glass-prices/look-alike-keys.js'
import {
  IMPORT_MODES,
  type ImportMode,
  type ImportProgress,
  importCsv,
  ReplaceNotConfirmed,
} from './transfer/csv-import.js'
import { type ExportFormat, exportTable } from './transfer/export-writer.js'
import { createProgress } from './transfer/progress.js'
import type { TransferTable } from './transfer/transfer-columns.js'

/*
 * `npm run cli -- <command>`: the service's functions behind commands, on the database the server would use
 * (DATABASE_URL, else the embedded one in DATA_DIR). Migrations are applied first. A failure prints one line and
 * exits non-zero: 1 for a failed command, 2 for a usage or configuration error.
 */

const usage = `usage: npm run cli -- <command>

  migrate                                          apply pending migrations
  seed --scale N [--kinds a,b] [--replace] [--seed S]
                                                   load the demo catalogue (about N SKUs per kind)
  refresh [kind]                                   rebuild the matview of one kind or of all
  import <kind> <prices|goods> <file.csv|file.xlsx> [--mode append|upsert|replace] [--confirm-deletes N]
         [--overwrite-conflicts N | --skip-conflicts] [--dry-run] [--format csv|xlsx]
                                                   load a price list or a nomenclature from CSV or XLSX
  export <kind> <prices|goods> <file|-> [--format csv|xlsx] [--excel]
                                                   write a price list or a nomenclature, ordered by id
  backup <file.tar.gz>                             a consistent copy of the embedded database (DATA_DIR), also
                                                   while the service runs (then it makes the copy)
  restore <file.tar.gz> [--replace]                put a backup into DATA_DIR (empty, or replaced with --replace);
                                                   the service must be stopped

kinds: ${kinds.map((kind) => kind.path).join(', ')}`

class UsageError extends Error {}

/** Where the CLI writes; tests pass their own. */
export interface CliIo {
  readonly stdout: NodeJS.WriteStream
  readonly stderr: NodeJS.WriteStream
  readonly env: Record<string, string | undefined>
}

/** Runs one command; returns the exit code. Never throws. */
export async function runCli(argv: readonly string[], io: CliIo = process): Promise<number> {
  const [command, ...rest] = argv
  let db: Database | undefined
  let lock: DataDirLock | undefined
  try {
    if (!command || command === 'help' || command === '--help' || command === '-h') {
      io.stdout.write(`${usage}\n`)
      return command ? 0 : 2
    }
    const directoryCommand = directoryCommands[command]
    const run = commands[command]
    if (!run && !directoryCommand) throw new UsageError(`unknown command '${command}'`)
    const config = loadConfig(io.env)
    if (directoryCommand) return await directoryCommand(config, rest, io)
    if (!run) throw new UsageError(`unknown command '${command}'`)
    // The embedded database has one owner: a running service (or another command) on DATA_DIR refuses this one.
    if (!config.databaseUrl) lock = lockDataDir(config.dataDir, `the CLI (${command})`)
    db = await openDatabase({
      url: config.databaseUrl,
      dataDir: config.dataDir,
      sharedBuffersMb: config.embeddedSharedBuffersMb,
      poolSize: 2,
      applicationName: 'optics-catalog-cli',
    })
    if (config.databaseUrl) {
      await waitForDatabase(db, {
        url: config.databaseUrl,
        timeoutSeconds: config.databaseStartTimeoutSeconds,
        onRetry: (message) => io.stderr.write(`optics-catalog: ${message}\n`),
      })
    }
    const applied = await migrateToLatest(db.primary)
    if (reportsLookAlikeKeys(applied)) {
      for (const line of describeLookAlikeKeyReport(await readLookAlikeKeyReport(db.primary))) {
        io.stderr.write(`optics-catalog: ${line}\n`)
      }
    }
    return await run(db, rest, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`optics-catalog: ${error.message}\n${usage}\n`)
      return 2
    }
    if (error instanceof ConfigError) {
      io.stderr.write(`optics-catalog: configuration error: ${error.message}\n`)
      return 2
    }
    const message = (error as Error).message ?? String(error)
    io.stderr.write(`optics-catalog: ${command} failed: ${redactSecrets(message.split('\n')[0] ?? '', io.env)}\n`)
    return 1
  } finally {
    await db?.close().catch(() => {})
    lock?.release()
  }
}

type Command = (db: Database, args: readonly string[], io: CliIo) => Promise<number>

function parse<const T extends NonNullable<ParseArgsConfig['options']>>(args: readonly string[], options: T) {
  try {
    return parseArgs({ args: [...args], options, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

function kindArgument(name: string | undefined): Kind {
  const kind = name ? kindByPath.get(name) : undefined
  if (!kind) throw new UsageError(name ? `unknown kind '${name}'` : 'a kind is required')
  return kind
}

function tableArgument(name: string | undefined): TransferTable {
  if (name !== 'prices' && name !== 'goods') throw new UsageError("the table must be 'prices' or 'goods'")
  return name
}

function wholeNumber(text: string | undefined, option: string, fallback: number): number {
  if (text === undefined) return fallback
  if (!/^\d+$/.test(text)) throw new UsageError(`${option} must be a whole number (got '${text}')`)
  return Number(text)
}

const seconds = (milliseconds: number) => (milliseconds / 1000).toFixed(1)

/** Commands on the embedded database's directory as a whole; they open no database of their own. */
type DirectoryCommand = (config: Config, args: readonly string[], io: CliIo) => Promise<number>

function embeddedOnly(config: Config, command: string, instead: string): void {
  if (config.databaseUrl) {
    throw new UsageError(`${command} is for the embedded database (DATA_DIR); with DATABASE_URL use ${instead}`)
  }
}

const megabytes = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

const directoryCommands: Record<string, DirectoryCommand> = {
  async backup(config, args, io) {
    const { positionals } = parse(args, {})
    const [file, ...extra] = positionals
    if (!file) throw new UsageError('backup needs a file')
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`)
    embeddedOnly(config, 'backup', 'pg_dump or pg_basebackup')
    const started = performance.now()
    let lock: DataDirLock | undefined
    try {
      lock = lockDataDir(config.dataDir, 'the CLI (backup)')
    } catch (error) {
      // The running service owns the directory: it makes the copy, between two of its transactions.
      if (!(error instanceof DataDirBusyError && error.holder && /service/.test(error.holder.role))) throw error
    }
    try {
      const bytes = await writeBackupFile(file, (out) =>
        lock ? writeBackup(config.dataDir, out) : requestBackup(config.dataDir, out),
      )
      const how = lock ? '' : ' by the running service'
      io.stdout.write(
        `backup of ${config.dataDir} written${how} to ${file}: ${megabytes(bytes)} MB in ${seconds(performance.now() - started)} s\n`,
      )
    } finally {
      lock?.release()
    }
    return 0
  },

  async restore(config, args, io) {
    const { values, positionals } = parse(args, { replace: { type: 'boolean' } })
    const [file, ...extra] = positionals
    if (!file) throw new UsageError('restore needs a file')
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`)
    embeddedOnly(config, 'restore', 'pg_restore or psql')
    try {
      statSync(file)
    } catch {
      throw new Error(`cannot read ${file}`)
    }
    // Refused while any live process owns the directory: a running service must be stopped first.
    const lock = lockDataDir(config.dataDir, 'the CLI (restore)')
    try {
      await restoreBackup(file, config.dataDir, { replace: values.replace ?? false })
    } finally {
      lock.release()
    }
    io.stdout.write(`${file} restored into ${config.dataDir}; start the service on it\n`)
    return 0
  },
}

/** Who the glass price list's history names as the author of a change made from the command line. */
const CLI_USER = 'cli'

const commands: Record<string, Command> = {
  async migrate(db, args, io) {
    parse(args, {})
    // runCli has migrated already; say where things stand.
    io.stdout.write(`migrations applied (${db.driver})\n`)
    return 0
  },

  async seed(db, args, io) {
    const { values, positionals } = parse(args, {
      scale: { type: 'string' },
      kinds: { type: 'string' },
      replace: { type: 'boolean' },
      seed: { type: 'string' },
    })
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`)
    if (values.scale === undefined) throw new UsageError('seed needs --scale N')
    const scale = wholeNumber(values.scale, '--scale', 0)
    const seed = wholeNumber(values.seed, '--seed', DEMO_SEED)
    const selected = values.kinds ? values.kinds.split(',').map((name) => kindArgument(name.trim())) : kinds
    const bars = new Map<string, ReturnType<typeof createProgress>>()
    try {
      const results = await seedCatalogue(db, {
        scale,
        seed,
        kinds: selected,
        replace: values.replace ?? false,
        onProgress({ kind, skus, total, phase }) {
          let bar = bars.get(kind.path)
          if (!bar) {
            bar = createProgress({ label: `seed ${kind.path}`, total, stream: io.stderr })
            bars.set(kind.path, bar)
          }
          bar.update(skus, skus)
          if (phase !== 'load') bar.stop()
        },
      })
      for (const result of results) {
        io.stdout.write(
          `${result.kind}: ${result.skus} SKUs, ${result.entries} price-list entries in ${seconds(result.milliseconds)} s ` +
            `(load ${seconds(result.loadMilliseconds)} s, matview ${seconds(result.matviewMilliseconds)} s)\n`,
        )
      }
      return 0
    } catch (error) {
      if (error instanceof CatalogueNotEmptyError) {
        io.stderr.write(`optics-catalog: ${error.message}\n`)
        return 1
      }
      throw error
    } finally {
      for (const bar of bars.values()) bar.stop()
    }
  },

  async refresh(db, args, io) {
    const { positionals } = parse(args, {})
    const selected = positionals.length > 0 ? positionals.map(kindArgument) : kinds
    for (const kind of selected) {
      const started = performance.now()
      await refreshMatview(db.primary, kind)
      io.stdout.write(`${kind.path}: matview refreshed in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
    }
    return 0
  },

  async import(db, args, io) {
    const { values, positionals } = parse(args, {
      mode: { type: 'string' },
      replace: { type: 'boolean' },
      'confirm-deletes': { type: 'string' },
      'overwrite-conflicts': { type: 'string' },
      'skip-conflicts': { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      format: { type: 'string' },
    })
    const [kindName, tableName, file, ...extra] = positionals
    const kind = kindArgument(kindName)
    const table = tableArgument(tableName)
    if (!file) throw new UsageError('import needs a file')
    const mode = values.mode ?? (values.replace ? 'replace' : 'append')
    if (!IMPORT_MODES.includes(mode as ImportMode)) {
      throw new UsageError(`--mode must be one of ${IMPORT_MODES.join(', ')} (got '${mode}')`)
    }
    if (values.replace && mode !== 'replace') throw new UsageError(`--replace contradicts --mode ${mode}`)
    const format = values.format ?? (/\.xlsx$/i.test(file) ? 'xlsx' : 'csv')
    if (format !== 'csv' && format !== 'xlsx') throw new UsageError(`--format must be csv or xlsx (got '${format}')`)
    const confirmText = values['confirm-deletes']
    if (confirmText !== undefined && !/^\d+$/.test(confirmText)) {
      throw new UsageError(`--confirm-deletes must be a whole number (got '${confirmText}')`)
    }
    const overwriteText = values['overwrite-conflicts']
    if (overwriteText !== undefined && !/^\d+$/.test(overwriteText)) {
      throw new UsageError(`--overwrite-conflicts must be a whole number (got '${overwriteText}')`)
    }
    if (overwriteText !== undefined && values['skip-conflicts']) {
      throw new UsageError('--overwrite-conflicts and --skip-conflicts exclude each other')
    }
    const conflicts =
      overwriteText !== undefined
        ? { overwrite: Number(overwriteText) }
        : values['skip-conflicts']
          ? ('skip' as const)
          : ('refuse' as const)
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`)
    let size: number
    try {
      size = statSync(file).size
    } catch {
      throw new Error(`cannot read ${file}`)
    }
    const progress = createProgress({ label: `import ${kind.path} ${table}`, total: size, stream: io.stderr })
    const started = performance.now()
    const common = {
      mode: mode as ImportMode,
      format,
      dryRun: values['dry-run'] ?? false,
      refresh: 'none',
      // The command line is the bulk loader: into an empty table, indexes are built once after the COPY.
      rebuildIndexes: true,
      onProgress: ({ rows, bytes }: ImportProgress) => progress.update(bytes, rows),
    } as const
    const confirmDeletes = confirmText === undefined ? {} : { confirmDeletes: Number(confirmText) }
    // The glass price list records every import in its history, as an upload over HTTP does.
    const importing = isGlassPriceList(kind, table)
      ? importGlassPrices(db, createReadStream(file), { ...common, ...confirmDeletes, conflicts, user: CLI_USER })
      : importCsv(db, kind, table, createReadStream(file), {
          ...common,
          plan: { stages: { parse: common.onProgress } },
          // A replace from what looks like a filtered export (one brand, say) must confirm what it deletes.
          replaceGuard: {
            columns: kind.attributes
              .filter((a) => a.entry === 'key' && a.type === 'text')
              .slice(0, 2)
              .map((a) => a.name),
            ...confirmDeletes,
          },
        })
    const result = await importing
      .catch((error: unknown) => {
        if (!(error instanceof ReplaceNotConfirmed || error instanceof GlassPriceConflicts)) throw error
        const options: [string, string][] = [
          ['confirmDeletes=', '--confirm-deletes '],
          ['mode=upsert', '--mode upsert'],
          ['overwriteConflicts=', '--overwrite-conflicts '],
          ['skipConflicts=true', '--skip-conflicts'],
        ]
        const message = options.reduce((text, [http, cli]) => text.replace(http, cli), error.message)
        io.stderr.write(`optics-catalog: import refused: ${message}\n`)
        return undefined
      })
      .finally(() => progress.stop())
    if (!result) return 1
    if (result.problemCount > 0) {
      for (const problem of result.problems) {
        const where = problem.line > 0 ? `line ${problem.line}` : 'file'
        io.stderr.write(
          `${file}: ${where}${problem.column ? `, column ${problem.column}` : ''}: ${render(problem.message)}\n`,
        )
      }
      if (result.problemCount > result.problems.length) {
        io.stderr.write(`… and ${result.problemCount - result.problems.length} more problems\n`)
      }
      io.stderr.write(`optics-catalog: import failed: ${result.problemCount} problem(s); nothing was written\n`)
      return 1
    }
    const elapsed = performance.now() - started
    const verb = result.dryRun ? 'checked (dry run, nothing written)' : 'imported'
    const replaced =
      result.mode === 'upsert'
        ? ` (${result.created} added, ${result.updated} updated, ${result.unchanged} unchanged)`
        : result.deleted > 0
          ? `, replacing ${result.deleted}`
          : ''
    io.stdout.write(
      `${kind.path} ${table}: ${result.rows} rows ${verb}${replaced} in ${seconds(elapsed)} s (${Math.round(result.rows / Math.max(elapsed / 1000, 0.001))} rows/s)\n`,
    )
    if ('batch' in result && result.batch !== null) {
      io.stdout.write(`${kind.path} ${table}: recorded as change ${result.batch} of the history (revertable)\n`)
    }
    if (!result.dryRun) {
      // Concurrently: a service running on the same database keeps answering meanwhile.
      const refreshing = performance.now()
      await refreshMatview(db.primary, kind, { concurrently: true })
      io.stdout.write(`${kind.path}: matview refreshed in ${seconds(performance.now() - refreshing)} s\n`)
    }
    return 0
  },

  async export(db, args, io) {
    const { values, positionals } = parse(args, { format: { type: 'string' }, excel: { type: 'boolean' } })
    const [kindName, tableName, file, ...extra] = positionals
    const kind = kindArgument(kindName)
    const table = tableArgument(tableName)
    if (!file) throw new UsageError("export needs a file (or '-' for standard output)")
    if (extra.length > 0) throw new UsageError(`unexpected argument '${extra[0]}'`)
    const format = (values.format ?? (file.endsWith('.xlsx') ? 'xlsx' : 'csv')) as ExportFormat
    if (format !== 'csv' && format !== 'xlsx') throw new UsageError("--format must be 'csv' or 'xlsx'")
    let out: Writable
    if (file === '-') {
      // Standard output is never ended; the writers end a pass-through piped into it instead.
      out = new PassThrough()
      out.pipe(io.stdout, { end: false })
    } else {
      out = createWriteStream(file)
    }
    const started = performance.now()
    const count = await exportTable(db.read, kind, table, out, { format, excel: values.excel ?? false })
    if (!out.writableFinished) await finished(out)
    if (file !== '-') {
      io.stdout.write(
        `${kind.path} ${table}: ${count} rows exported to ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
      )
    }
    return 0
  },
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await runCli(process.argv.slice(2))
}
