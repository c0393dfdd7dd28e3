import assert from 'node:assert/strict'
import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { eachDatabase, runScript, spawnServer } from '../../../test/harness.js'
import { LOCK_FILE, processStartTime } from './data-dir-lock.js'

/*
 * One owner per embedded data directory (issue 16, point 1), with real processes: the service holds DATA_DIR, so a
 * second service and every CLI command on it are refused at once with one line naming the holder; a lock left by
 * a process that has ended is taken over. On the server (DATABASE_URL) there is no directory to own.
 */

const projectRoot = new URL('../../..', import.meta.url).pathname
const serverPath = new URL('../../server.ts', import.meta.url).pathname
const cliPath = new URL('../../cli.ts', import.meta.url).pathname
const lockModule = new URL('./data-dir-lock.ts', import.meta.url).pathname

const run = runScript

/** Waits until the child prints a line matching `pattern` on stdout (or fails if it exits first). */
function waitForOutput(child: ChildProcess, pattern: RegExp): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = ''
    let errors = ''
    child.stderr?.on('data', (chunk: Buffer) => {
      errors += chunk.toString()
    })
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString()
      if (pattern.test(seen)) resolve()
    })
    child.once('exit', (code) => reject(new Error(`exited (${code}) before ${pattern}: ${errors}`)))
  })
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve(child.exitCode)
    else child.once('exit', (code) => resolve(code))
  })
}

/** A process id that ran and has ended. */
function endedPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString())
}

eachDatabase('one owner per data directory', (ctx) => {
  let work: string
  let dataDir: string
  let serverEnv: Record<string, string>
  const children: ChildProcess[] = []

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'optics-lock-'))
    dataDir = join(work, 'data')
    // A data directory of this suite's own (the harness's is open in this process): a copy of the template.
    const template = process.env.TEST_PGLITE_TEMPLATE
    if (template && existsSync(template)) cpSync(template, dataDir, { recursive: true })
    if (ctx.target === 'postgres') {
      const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(ctx.db.primary)
      const url = new URL(process.env.TEST_DATABASE_URL!)
      url.searchParams.set('options', `-c search_path=${rows[0]!.schema},public`)
      serverEnv = { DATABASE_URL: url.toString() }
    } else {
      serverEnv = {}
    }
  })
  after(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL')
    rmSync(work, { recursive: true, force: true })
  })

  /** A small process that takes the lock and keeps it until killed. */
  async function holder(directory: string): Promise<ChildProcess> {
    const script = `import { lockDataDir } from ${JSON.stringify(lockModule)}; lockDataDir(process.argv[1], 'the test holder'); process.stdout.write('held\\n'); setInterval(() => {}, 1000)`
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, directory], {
      cwd: projectRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    await waitForOutput(child, /held/)
    return child
  }

  if (ctx.target === 'postgres') {
    test('with DATABASE_URL the CLI takes no lock: a held DATA_DIR does not matter', async () => {
      const held = await holder(dataDir)
      const migrated = await run(cliPath, ['migrate'], { ...serverEnv, DATA_DIR: dataDir })
      assert.equal(migrated.code, 0, migrated.stderr)
      held.kill('SIGKILL')
      await exitOf(held)
    })
    return
  }

  test('while the service runs, a second service and a CLI import are refused in one line naming it', async () => {
    const server = spawnServer({ DATA_DIR: dataDir })
    children.push(server)
    await waitForOutput(server, /Server listening at /)
    const lock = JSON.parse(readFileSync(join(dataDir, LOCK_FILE), 'utf8'))
    assert.equal(lock.pid, server.pid)
    assert.equal(lock.host, hostname())

    const holderLine = new RegExp(
      `^optics-catalog: .*DATA_DIR: ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by the optics-catalog service \\(pid ${server.pid}, since [^)]+\\); stop it first, or import through it over HTTP \\(POST /api/v2/glasses/prices/import\\)\\n$`,
    )
    const second = await run(serverPath, [], { PORT: '0', DATA_DIR: dataDir })
    assert.notEqual(second.code, 0)
    assert.match(second.stderr, holderLine)
    assert.match(second.stderr, /failed to start: DATA_DIR: /)

    const csv = join(work, 'prices.csv')
    writeFileSync(csv, 'manufacturer,brand,model,price,purchase\nAcme,Acme,A1,100.00,50.00\n')
    const imported = await run(cliPath, ['import', 'glasses', 'prices', csv], { DATA_DIR: dataDir })
    assert.equal(imported.code, 1)
    assert.match(imported.stderr, holderLine)
    assert.equal(imported.stdout, '')

    server.kill('SIGTERM')
    assert.equal(await exitOf(server), 0)
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false, 'the lock outlived the service')
    // The directory is intact and free: a command now works.
    const migrated = await run(cliPath, ['migrate'], { DATA_DIR: dataDir })
    assert.equal(migrated.code, 0, migrated.stderr)
  })

  test('a CLI command holding the directory refuses the service; once it is killed, its lock is taken over', async () => {
    const held = await holder(dataDir)
    const refused = await run(serverPath, [], { PORT: '0', DATA_DIR: dataDir })
    assert.notEqual(refused.code, 0)
    assert.match(
      refused.stderr,
      new RegExp(
        `DATA_DIR: .* is in use by the test holder \\(pid ${held.pid}, since .*\\); wait for it to finish or stop it\\n$`,
      ),
    )
    assert.equal(refused.stderr.split('\n').length, 2, 'one line')

    held.kill('SIGKILL') // no chance to remove its lock
    await exitOf(held)
    assert.ok(existsSync(join(dataDir, LOCK_FILE)))
    const migrated = await run(cliPath, ['migrate'], { DATA_DIR: dataDir })
    assert.equal(migrated.code, 0, migrated.stderr)
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false)
  })

  test('a stale lock of a process that no longer runs is taken over', async () => {
    const pid = endedPid()
    writeFileSync(
      join(dataDir, LOCK_FILE),
      `${JSON.stringify({ pid, startTime: '1', host: hostname(), role: 'the optics-catalog service', since: '2020-01-01T00:00:00.000Z' })}\n`,
    )
    const migrated = await run(cliPath, ['migrate'], { DATA_DIR: dataDir })
    assert.equal(migrated.code, 0, migrated.stderr)
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false)
  })

  test('a lock whose pid now runs another process (another start time) is taken over', {
    skip: processStartTime(process.pid) === null ? 'no /proc: start times are not available here' : false,
  }, async () => {
    // This test's own process is alive, but it started at another time than the lock says.
    writeFileSync(
      join(dataDir, LOCK_FILE),
      `${JSON.stringify({ pid: process.pid, startTime: '1', host: hostname(), role: 'the optics-catalog service', since: '2020-01-01T00:00:00.000Z' })}\n`,
    )
    const migrated = await run(cliPath, ['migrate'], { DATA_DIR: dataDir })
    assert.equal(migrated.code, 0, migrated.stderr)
    assert.equal(existsSync(join(dataDir, LOCK_FILE)), false)
  })

  test('a lock of a live process with the same start time is respected', async () => {
    writeFileSync(
      join(dataDir, LOCK_FILE),
      `${JSON.stringify({ pid: process.pid, startTime: processStartTime(process.pid), host: hostname(), role: 'the CLI (import)', since: '2026-01-01T00:00:00.000Z' })}\n`,
    )
    const refused = await run(cliPath, ['migrate'], { DATA_DIR: dataDir })
    assert.equal(refused.code, 1)
    assert.match(
      refused.stderr,
      new RegExp(`is in use by the CLI \\(import\\) \\(pid ${process.pid}, since 2026-01-01`),
    )
    rmSync(join(dataDir, LOCK_FILE))
  })

  test('a new data directory is created with its lock, and PGlite initialises it', async () => {
    const fresh = join(work, 'fresh', 'data')
    mkdirSync(join(work, 'fresh'))
    const migrated = await run(cliPath, ['migrate'], { DATA_DIR: fresh })
    assert.equal(migrated.code, 0, migrated.stderr)
    assert.ok(existsSync(join(fresh, 'PG_VERSION')))
    assert.equal(existsSync(join(fresh, LOCK_FILE)), false)
  })
})
