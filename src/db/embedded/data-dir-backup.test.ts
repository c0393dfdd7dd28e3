import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import {
  buildTestApp,
  eachDatabase,
  listeningPort,
  runScript,
  type ScriptRun,
  spawnServer,
} from '../../../test/harness.js'
import { runCli } from '../../cli.js'
import { openDatabase } from '../database.js'
import { BACKUP_SOCKET } from './data-dir-files.js'

/*
 * Backups of the embedded database with real processes: `backup` while the service runs and writes keep coming
 * (the service makes the copy between two transactions), `restore` into an empty directory, and a service started
 * on it serves the same data with fresh matviews. A restore is refused while the directory is owned, and into a
 * database it would overwrite unless asked to replace it. With DATABASE_URL both commands point to pg_dump.
 */

const cliPath = new URL('../../cli.ts', import.meta.url).pathname

/** The CLI in a process of its own, as an operator runs it. */
const cliProcess = (args: string[], env: Record<string, string>) => runScript(cliPath, args, env)

/** The CLI's commands run in this process (cheaper than a process each; the lock is still per process). */
async function cli(args: string[], env: Record<string, string>): Promise<ScriptRun> {
  let stdout = ''
  let stderr = ''
  const sink = (append: (text: string) => void) =>
    ({
      write(chunk: string) {
        append(String(chunk))
        return true
      },
      isTTY: false,
    }) as unknown as NodeJS.WriteStream
  const code = await runCli(args, {
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    env: { LOG_LEVEL: 'silent', DEMO_DATA: 'false', ...env },
  })
  return { code, stdout, stderr }
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once('exit', (code) => resolve(code))
  })
}

interface Entry {
  readonly id: number
  readonly model: string
}

eachDatabase('backup and restore of the embedded database', (ctx) => {
  let work: string
  const children: ChildProcess[] = []

  before(() => {
    work = mkdtempSync(join(tmpdir(), 'optics-backup-test-'))
  })
  after(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
    rmSync(work, { recursive: true, force: true })
  })

  if (ctx.target === 'postgres') {
    test('with DATABASE_URL, backup and restore refuse and name pg_dump and pg_restore', async () => {
      const env = { DATABASE_URL: process.env.TEST_DATABASE_URL!, DATA_DIR: join(work, 'unused') }
      const backup = await cli(['backup', join(work, 'b.tar.gz')], env)
      assert.equal(backup.code, 2)
      assert.match(backup.stderr, /backup is for the embedded database \(DATA_DIR\); with DATABASE_URL use pg_dump/)
      const restore = await cli(['restore', join(work, 'b.tar.gz')], env)
      assert.equal(restore.code, 2)
      assert.match(restore.stderr, /with DATABASE_URL use pg_restore/)
      assert.equal(existsSync(join(work, 'b.tar.gz')), false)
    })
    return
  }

  async function startService(dataDir: string, env: Record<string, string> = {}) {
    const child = spawnServer({ DATA_DIR: dataDir, MATVIEW_REFRESH: 'auto', MATVIEW_REFRESH_DELAY_MS: '0', ...env })
    children.push(child)
    const base = `http://127.0.0.1:${await listeningPort(child)}`
    return { child, base }
  }

  async function stop(child: ChildProcess): Promise<void> {
    child.kill('SIGTERM')
    assert.equal(await exitOf(child), 0)
  }

  /** A request to the service at `base`, or to an application in this process. */
  type Target = string | FastifyInstance
  async function call(target: Target, method: string, url: string, body?: unknown) {
    if (typeof target === 'string') {
      const response = await fetch(`${target}${url}`, {
        method,
        ...(body ? { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {}),
      })
      return { status: response.status, text: await response.text() }
    }
    const response = await target.inject({ method: method as 'GET', url, ...(body ? { payload: body as object } : {}) })
    return { status: response.statusCode, text: response.body }
  }

  async function create(target: Target, model: string): Promise<Entry> {
    const body = { manufacturer: 'Backup', brand: 'Restore', model, price: 1000, purchase: 400 }
    const response = await call(target, 'POST', '/api/v2/glasses/prices', body)
    assert.equal(response.status, 200, response.text)
    return JSON.parse(response.text) as Entry
  }

  async function exported(target: Target): Promise<string> {
    const response = await call(target, 'GET', '/api/v2/glasses/prices/export?format=csv')
    assert.equal(response.status, 200)
    return response.text
  }

  async function changes(target: Target): Promise<unknown[]> {
    const response = await call(target, 'GET', '/api/v2/glasses/prices/changes?size=2000')
    assert.equal(response.status, 200)
    return (JSON.parse(response.text) as { content: unknown[] }).content
  }

  async function models(target: Target): Promise<Set<string>> {
    const text = await exported(target)
    return new Set(text.split('\n').flatMap((line) => /,Backup,Restore,([^,]+),/.exec(`,${line}`)?.slice(1) ?? []))
  }

  /** The embedded database in `dataDir` behind an application in this process, for `use`. */
  async function inProcess<T>(dataDir: string, use: (app: FastifyInstance) => Promise<T>): Promise<T> {
    const db = await openDatabase({ dataDir })
    const app = await buildTestApp(db)
    try {
      return await use(app)
    } finally {
      await app.close()
      await db.close()
    }
  }

  const template = () => process.env.TEST_PGLITE_TEMPLATE ?? ''

  /** Waits until every kind's matview is fresh. */
  async function fresh(base: string): Promise<void> {
    const deadline = Date.now() + 60_000
    for (;;) {
      const response = await fetch(`${base}/api/v2/good/nomenclature/status`)
      const { kinds } = (await response.json()) as { kinds: { kind: string; stale: boolean }[] }
      if (kinds.every((kind) => !kind.stale)) return
      assert.ok(Date.now() < deadline, `matviews still stale: ${JSON.stringify(kinds)}`)
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }

  test('a backup taken while the service writes restores into a service that serves the same data', async () => {
    const dataDir = join(work, 'data')
    cpSync(template(), dataDir, { recursive: true })
    const service = await startService(dataDir)
    for (let i = 0; i < 20; i++) await create(service.base, `before-${i}`)

    // Writers keep creating entries (and the matview keeps being refreshed) while the backup is taken.
    let writing = true
    const acknowledged: string[] = []
    const writers = [0, 1].map(async (writer) => {
      for (let i = 0; writing; i++) acknowledged.push((await create(service.base, `during-${writer}-${i}`)).model)
    })
    while (acknowledged.length < 5) await new Promise((resolve) => setTimeout(resolve, 50))
    const before = new Set(acknowledged)
    const during = join(work, 'during.tar.gz')
    const backup = await cliProcess(['backup', during], { DATA_DIR: dataDir })
    const afterBackup = new Set(acknowledged)
    writing = false
    await Promise.all(writers)
    assert.equal(backup.code, 0, backup.stderr)
    assert.match(
      backup.stdout,
      /^backup of .* written by the running service to .*during\.tar\.gz: [\d.]+ MB in [\d.]+ s\n$/,
    )
    assert.ok(afterBackup.size > before.size, 'writes went on during the backup')
    assert.equal(existsSync(`${during}.partial`), false)

    // Restore is refused while the service owns the directory.
    const refused = await cli(['restore', during, '--replace'], { DATA_DIR: dataDir })
    assert.equal(refused.code, 1)
    assert.match(refused.stderr, /DATA_DIR: .* is in use by the optics-catalog service \(pid \d+/)

    // Quiet now: a second backup must hold exactly the service's data.
    const quiet = join(work, 'quiet.tar.gz')
    const quietBackup = await cli(['backup', quiet], { DATA_DIR: dataDir })
    assert.equal(quietBackup.code, 0, quietBackup.stderr)
    const liveExport = await exported(service.base)
    const liveChanges = await changes(service.base)
    assert.ok(existsSync(join(dataDir, BACKUP_SOCKET)))
    await stop(service.child)
    assert.equal(existsSync(join(dataDir, BACKUP_SOCKET)), false, 'the socket outlived the service')

    // The copy taken during the writes: every write acknowledged before it began, none acknowledged after it
    // ended, each entry with its change (one transaction each); a service starts on it and refreshes its matviews.
    const duringDir = join(work, 'restored-during')
    const restoredDuring = await cli(['restore', during], { DATA_DIR: duringDir })
    assert.equal(restoredDuring.code, 0, restoredDuring.stderr)
    assert.match(restoredDuring.stdout, /during\.tar\.gz restored into .*restored-during; start the service on it\n$/)
    const duringService = await startService(duringDir)
    const restoredModels = await models(duringService.base)
    for (const model of before) assert.ok(restoredModels.has(model), `${model}, written before the backup, is missing`)
    for (const model of restoredModels) {
      assert.ok(model.startsWith('before-') || afterBackup.has(model), `${model} was written after the backup`)
    }
    assert.equal((await changes(duringService.base)).length, restoredModels.size, 'one change per entry')
    await fresh(duringService.base)
    await stop(duringService.child)

    // The quiet copy holds exactly the data and history the service served.
    const quietDir = join(work, 'restored-quiet')
    assert.equal((await cli(['restore', quiet], { DATA_DIR: quietDir })).code, 0)
    await inProcess(quietDir, async (app) => {
      assert.equal(await exported(app), liveExport)
      assert.deepEqual(await changes(app), liveChanges)
    })

    // With no service running the CLI takes the lock and archives the directory itself.
    const offline = await cli(['backup', join(work, 'stopped.tar.gz')], { DATA_DIR: quietDir })
    assert.equal(offline.code, 0, offline.stderr)
    assert.match(offline.stdout, /^backup of .* written to .*stopped\.tar\.gz/)
  })

  test('writes go on while a backup copies the files: none waits a second for it, and the copy is consistent', async () => {
    const dataDir = join(work, 'online')
    cpSync(template(), dataDir, { recursive: true })
    const copyDir = join(work, 'online-copy')
    const db = await openDatabase({ dataDir })
    const app = await buildTestApp(db)
    const waits: number[] = []
    const acknowledged: string[] = []
    const sent: string[] = []
    let before = new Set<string>()
    let sentByTheEnd = new Set<string>()
    let acknowledgedByTheEnd = 0
    let files = 0
    try {
      for (let i = 0; i < 5; i++) await create(app, `pre-${i}`)
      let copying = true
      const writer = (async () => {
        for (let i = 0; copying; i++) {
          const started = performance.now()
          sent.push(`online-${i}`)
          acknowledged.push((await create(app, `online-${i}`)).model)
          waits.push(performance.now() - started)
        }
      })()
      while (acknowledged.length < 3) await new Promise((resolve) => setTimeout(resolve, 10))
      before = new Set(acknowledged)
      // A slow disk: each file takes a few milliseconds more, so the copy lasts seconds.
      await db.copyDataDir?.(copyDir, {
        onFile: async () => {
          files++
          await new Promise((resolve) => setTimeout(resolve, 3))
        },
      })
      sentByTheEnd = new Set(sent)
      acknowledgedByTheEnd = acknowledged.length
      copying = false
      await writer
    } finally {
      await app.close()
      await db.close()
    }
    assert.ok(files > 100, `${files} files copied`)
    const during = acknowledgedByTheEnd - before.size
    assert.ok(during >= 10, `${during} writes acknowledged during the copy`)
    const longest = Math.max(...waits)
    assert.ok(longest < 1000, `a write waited ${Math.round(longest)} ms`)
    assert.ok(existsSync(join(copyDir, 'backup_label')), 'the copy carries its backup label')
    // Opened, the copy replays its log: every write acknowledged before the copy began, none sent after it ended.
    await inProcess(copyDir, async (copy) => {
      const restored = await models(copy)
      for (const model of before) assert.ok(restored.has(model), `${model}, written before the copy, is missing`)
      for (let i = 0; i < 5; i++) assert.ok(restored.has(`pre-${i}`))
      for (const model of restored) {
        assert.ok(model.startsWith('pre-') || sentByTheEnd.has(model), `${model} was written after the copy`)
      }
      assert.equal((await changes(copy)).length, restored.size, 'one change per entry')
    })
  })

  test('restore refuses a directory holding a database unless --replace, and a file that is no backup', async () => {
    const source = join(work, 'source')
    cpSync(template(), source, { recursive: true })
    await inProcess(source, (app) => create(app, 'kept'))
    const file = join(work, 'one.tar.gz')
    assert.equal((await cli(['backup', file], { DATA_DIR: source })).code, 0)
    await inProcess(source, (app) => create(app, 'after the backup'))

    const occupied = await cli(['restore', file], { DATA_DIR: source })
    assert.equal(occupied.code, 1)
    assert.match(occupied.stderr, /DATA_DIR: .*source is not empty; .* pass --replace to replace its database\n$/)

    const junk = join(work, 'junk.tar.gz')
    writeFileSync(junk, 'not an archive')
    const bad = await cli(['restore', junk, '--replace'], { DATA_DIR: source })
    assert.equal(bad.code, 1)
    assert.match(bad.stderr, /junk\.tar\.gz is not a backup archive/)
    assert.deepEqual(
      readdirSync(source).filter((name) => name.startsWith('.optics')),
      [],
      'nothing left behind',
    )
    assert.deepEqual([...(await inProcess(source, models))].sort(), ['after the backup', 'kept'], 'nothing changed')

    const replaced = await cli(['restore', file, '--replace'], { DATA_DIR: source })
    assert.equal(replaced.code, 0, replaced.stderr)
    assert.deepEqual([...(await inProcess(source, models))], ['kept'])

    const empty = join(work, 'empty')
    mkdirSync(empty)
    const nothing = await cli(['backup', join(work, 'nothing.tar.gz')], { DATA_DIR: empty })
    assert.equal(nothing.code, 1)
    assert.match(nothing.stderr, /DATA_DIR: .*empty holds no database to back up/)
    assert.equal(existsSync(join(work, 'nothing.tar.gz')), false)
  })
})
