import assert from 'node:assert/strict'
import { type ChildProcessByStdio, execFile, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'
import { after, before, beforeEach, describe } from 'node:test'
import { promisify } from 'node:util'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { buildApp } from '../src/app.js'
import { type Config, loadConfig } from '../src/config.js'
import { type Database, openDatabase, quoteIdent } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'

/*
 * The shared test harness: every suite that touches data runs on both databases, each time on a fresh, migrated
 * one. PGlite suites clone a data directory migrated once per `npm test` (test/prepare.ts builds it; a test file
 * run alone builds its own); server suites get a fresh schema of TEST_DATABASE_URL and drop it afterwards.
 */

export type Target = 'pglite' | 'postgres'

export interface TestContext {
  /** The open, migrated, empty database of this suite. */
  readonly db: Database
  readonly target: Target
  /** Opens a second, independent connection set to the same database (another "instance" of the service). */
  openAnother(): Promise<Database>
}

const serverUrl = process.env.TEST_DATABASE_URL?.trim() || undefined

let templatePromise: Promise<string> | undefined

/** Builds a migrated PGlite data directory; returns its path. */
export async function buildPgliteTemplate(directory: string): Promise<void> {
  const building = `${directory}.${process.pid}.${randomBytes(4).toString('hex')}`
  const db = await openDatabase({ dataDir: building })
  await migrateToLatest(db.primary)
  await db.close()
  rmSync(directory, { recursive: true, force: true })
  renameSync(building, directory)
}

function pgliteTemplate(): Promise<string> {
  templatePromise ??= (async () => {
    const prepared = process.env.TEST_PGLITE_TEMPLATE
    if (prepared && existsSync(prepared)) return prepared
    const directory = join(mkdtempSync(join(tmpdir(), 'optics-template-')), 'data')
    await buildPgliteTemplate(directory)
    return directory
  })()
  return templatePromise
}

async function openPglite(): Promise<{ db: Database; cleanup: () => Promise<void>; dataDir: string }> {
  const template = await pgliteTemplate()
  const dataDir = join(mkdtempSync(join(tmpdir(), 'optics-test-')), 'data')
  cpSync(template, dataDir, { recursive: true })
  const db = await openDatabase({ dataDir })
  return {
    db,
    dataDir,
    cleanup: async () => {
      await db.close().catch(() => {})
      rmSync(join(dataDir, '..'), { recursive: true, force: true })
    },
  }
}

/**
 * A fresh schema of the server at `url`, migrated by `migrate`; `cleanup` closes the database and drops the
 * schema.
 */
export async function openServerSchema(
  url: string,
  migrate: (db: Database['primary']) => Promise<unknown> = migrateToLatest,
): Promise<{ db: Database; schema: string; cleanup: () => Promise<void> }> {
  const schema = `test_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  try {
    // Extensions are per database; concurrent suites may race to create it, so a failure here is retried once.
    await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public').catch(async () => {
      await new Promise((resolve) => setTimeout(resolve, 200))
      await admin.query('CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public')
    })
    await admin.query(`CREATE SCHEMA ${quoteIdent(schema)}`)
  } finally {
    await admin.end()
  }
  const db = await openDatabase({ url, schema, poolSize: 5 })
  await migrate(db.primary)
  return {
    db,
    schema,
    cleanup: async () => {
      await db.close().catch(() => {})
      const dropper = new pg.Client({ connectionString: url })
      await dropper.connect()
      await dropper.query(`DROP SCHEMA IF EXISTS ${quoteIdent(schema)} CASCADE`).catch(() => {})
      await dropper.end()
    },
  }
}

/**
 * A fresh database of `target` migrated by `migrate` (an embedded one in memory, or a new schema of the server):
 * for a test that builds a database otherwise than the service does. `cleanup` closes and drops it.
 */
export async function openFreshDatabase(
  target: Target,
  migrate: (db: Database['primary']) => Promise<unknown>,
): Promise<{ db: Database; cleanup: () => Promise<void> }> {
  if (target === 'postgres') return openServerSchema(serverUrl!, migrate)
  const db = await openDatabase({})
  await migrate(db.primary)
  return { db, cleanup: () => db.close() }
}

/**
 * Declares a suite once per database. Inside `body`, `ctx.db` is a fresh migrated database (opened before the
 * first test, dropped after the last). Without TEST_DATABASE_URL the server half is skipped, visibly.
 */
export function eachDatabase(title: string, body: (ctx: TestContext) => void): void {
  for (const target of ['pglite', 'postgres'] as const) {
    if (target === 'postgres' && !serverUrl) {
      describe(`${title} [postgres]`, {
        skip: 'TEST_DATABASE_URL is not set: the PostgreSQL half is skipped',
      }, () => {})
      continue
    }
    describe(`${title} [${target}]`, () => {
      let cleanup: (() => Promise<void>) | undefined
      const others: Database[] = []
      let extra: { dataDir?: string; schema?: string } = {}
      const ctx = {
        target,
        db: undefined as unknown as Database,
        async openAnother(): Promise<Database> {
          if (target === 'postgres') {
            const another = await openDatabase({ url: serverUrl, schema: extra.schema, poolSize: 5 })
            others.push(another)
            return another
          }
          throw new Error('an embedded database has one connection; a second instance needs the server')
        },
      }
      before(async () => {
        const opened = target === 'pglite' ? await openPglite() : await openServerSchema(serverUrl!)
        ctx.db = opened.db
        cleanup = opened.cleanup
        extra = opened
      })
      after(async () => {
        for (const another of others) await another.close().catch(() => {})
        await cleanup?.()
      })
      body(ctx)
    })
  }
}

/** Tests read the service's messages in English unless they ask for Russian, the service's default. */
const testMessages = { MESSAGES_LANGUAGE: 'en' }

/**
 * The configuration of a test: defaults (loopback, no auth) with the given variables. The background matview
 * refresher is off, so it never races a test's own refreshes; its tests turn it on (`MATVIEW_REFRESH: 'auto'`).
 * Messages are English unless a test asks for Russian (`MESSAGES_LANGUAGE: 'ru'` or `Accept-Language: ru`).
 */
export function testConfig(env: Record<string, string> = {}): Config {
  // No snapshot of the search index unless a test asks for one: suites never share one.
  return loadConfig({
    DEMO_DATA: 'false',
    LOG_LEVEL: 'silent',
    MATVIEW_REFRESH: 'off',
    SEARCH_INDEX_SNAPSHOT_DIR: 'off',
    ...testMessages,
    ...env,
  })
}

/** Builds the application around a test database; close it with `app.close()` (the database stays open). */
export async function buildTestApp(db: Database, env: Record<string, string> = {}): Promise<FastifyInstance> {
  const app = await buildApp({ config: testConfig(env), db, logger: false })
  await app.ready()
  return app
}

/** What {@link useTestApp} does around the suite's tests. */
export interface TestAppOptions {
  /** Configuration variables beyond the test defaults (see {@link testConfig}); a function is read after `setup`. */
  readonly env?: Record<string, string> | (() => Record<string, string>)
  /** Runs once before the app is built: the data every test of the suite reads. */
  readonly setup?: () => Promise<unknown>
  /** Runs before each test: empties what the tests write, so each starts from the same data. */
  readonly beforeEach?: () => Promise<unknown>
}

/**
 * The application of a suite, around `ctx.db`: built once before its first test (after `setup`), closed after its
 * last. Call inside the suite's body; the getter answers the app once the suite runs (not while it is declared).
 */
export function useTestApp(ctx: TestContext, options: TestAppOptions = {}): () => FastifyInstance {
  let app: FastifyInstance | undefined
  before(async () => {
    await options.setup?.()
    app = await buildTestApp(ctx.db, typeof options.env === 'function' ? options.env() : options.env)
  })
  after(() => app?.close())
  if (options.beforeEach) beforeEach(options.beforeEach)
  return () => {
    if (!app) throw new Error('the test app is built before the first test of its suite')
    return app
  }
}

export const projectRoot = new URL('..', import.meta.url).pathname

/**
 * The service in a process of its own (`src/server.ts` through tsx), as an operator starts it: on a free port of
 * 127.0.0.1, without the demo catalogue or the background refresh, logging at info; `env` adds or overrides.
 */
export function spawnServer(env: Record<string, string>): ChildProcessByStdio<null, Readable, Readable> {
  return spawn(process.execPath, ['--import', 'tsx', join(projectRoot, 'src', 'server.ts')], {
    cwd: projectRoot,
    env: {
      PATH: process.env.PATH ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      DEMO_DATA: 'false',
      MATVIEW_REFRESH: 'off',
      LOG_LEVEL: 'info',
      SEARCH_INDEX_SNAPSHOT_DIR: 'off',
      ...testMessages,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
}

/** The port a service from {@link spawnServer} listens on, once it says so; rejects if it exits first. */
export function listeningPort(child: ChildProcessByStdio<null, Readable, Readable>): Promise<number> {
  return new Promise((resolve, reject) => {
    let seen = ''
    let errors = ''
    const onExit = (code: number | null) =>
      reject(new Error(`the service exited (${code}) before listening: ${errors}`))
    child.stderr.on('data', (chunk: Buffer) => {
      errors += chunk.toString()
    })
    child.stdout.on('data', function onData(chunk: Buffer) {
      seen += chunk.toString()
      const port = /Server listening at http:\/\/[^:]+:(\d+)/.exec(seen)?.[1]
      if (!port) return
      child.stdout.off('data', onData)
      child.off('exit', onExit)
      resolve(Number(port))
    })
    child.once('exit', onExit)
  })
}

/** A TCP port of 127.0.0.1 free a moment ago (for a server a test or benchmark starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

/**
 * Reads until `done` holds, every `intervalMs`, for at most a minute (generous: the machine may be loaded); then
 * fails naming `what`.
 */
export async function poll<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
  intervalMs = 50,
): Promise<T> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, intervalMs))
  }
}

/** How a script run by {@link runScript} ended. */
export interface ScriptRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const execute = promisify(execFile)

/**
 * Runs a TypeScript entry point of the project (`src/cli.ts`, `src/server.ts`) in a process of its own, as an
 * operator would, silent and without the demo catalogue or the background refresh; `env` adds or overrides.
 */
export async function runScript(
  path: string,
  args: readonly string[],
  env: Record<string, string>,
): Promise<ScriptRun> {
  try {
    const { stdout, stderr } = await execute(process.execPath, ['--import', 'tsx', path, ...args], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', DEMO_DATA: 'false', MATVIEW_REFRESH: 'off', ...env },
      // Generous: on a loaded machine a process's start alone (tsx, PGlite) can take a minute.
      timeout: 300_000,
    })
    return { code: 0, stdout, stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}
