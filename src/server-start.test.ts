import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { runCli } from './cli.js'

/*
 * Start-up failures as an operator sees them (issue 16, point 7): the process started the way `npm start` does;
 * its standard error names the variable, never prints a secret, and a port in use is refused before the database
 * is opened. The database server that cannot be reached is retried with backoff, then named.
 */

const projectRoot = new URL('..', import.meta.url).pathname
const serverPath = new URL('./server.ts', import.meta.url).pathname
const PASSWORD = 'S3cretPassw0rd'
const JWT_SECRET = 'my-real-production-secret-31chr'

interface Outcome {
  readonly code: number | null
  readonly stderr: string
  readonly stdout: string
  readonly ms: number
}

/** Starts the server with exactly this environment; resolves when it exits (killed after 60 s). */
function start(env: Record<string, string>): Promise<Outcome> {
  const began = Date.now()
  const child = spawn(process.execPath, ['--import', 'tsx', serverPath], {
    cwd: projectRoot,
    env: {
      PATH: process.env.PATH ?? '',
      DEMO_DATA: 'false',
      MATVIEW_REFRESH: 'off',
      SEARCH_INDEX_SNAPSHOT_DIR: 'off',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stderr = ''
  let stdout = ''
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  const killer = setTimeout(() => child.kill('SIGKILL'), 60_000)
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(killer)
      resolve({ code, stderr, stdout, ms: Date.now() - began })
    })
  })
}

function assertNoSecret(outcome: Outcome, ...secrets: string[]): void {
  for (const secret of secrets) {
    assert.ok(!outcome.stderr.includes(secret), `a secret is on stderr: ${outcome.stderr}`)
    assert.ok(!outcome.stdout.includes(secret), `a secret is on stdout: ${outcome.stdout}`)
  }
}

describe('start-up errors', () => {
  let work: string
  let busy: net.Server
  let busyPort: number

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'optics-start-'))
    busy = net.createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    busyPort = (busy.address() as net.AddressInfo).port
  })
  after(() => {
    busy.close()
    rmSync(work, { recursive: true, force: true })
  })

  test('a malformed DATABASE_URL is named, its value (and password) not shown', async () => {
    const outcome = await start({ DATABASE_URL: `postgress://app:${PASSWORD}@db/x` })
    assert.equal(outcome.code, 2)
    assert.match(outcome.stderr, /^optics-catalog: configuration error: DATABASE_URL: must be a postgres:\/\/ URL/)
    assert.equal(outcome.stderr.trim().split('\n').length, 1)
    assertNoSecret(outcome, PASSWORD, 'postgress://')
  })

  test('a too short AUTH_JWT_SECRET is named, its value not shown', async () => {
    const outcome = await start({ AUTH_MODE: 'jwt', AUTH_JWT_SECRET: JWT_SECRET })
    assert.equal(outcome.code, 2)
    assert.match(outcome.stderr, /configuration error: AUTH_JWT_SECRET: .*\(value not shown\)/)
    assertNoSecret(outcome, JWT_SECRET)
  })

  test('a port in use is refused at once naming PORT, before the embedded database is created', async () => {
    const dataDir = join(work, 'never-created')
    const outcome = await start({ PORT: String(busyPort), HOST: '127.0.0.1', DATA_DIR: dataDir })
    assert.notEqual(outcome.code, 0)
    assert.match(outcome.stderr, new RegExp(`failed to start: PORT: 127\\.0\\.0\\.1:${busyPort} is already in use`))
    assert.equal(outcome.stderr.trim().split('\n').length, 1)
    assert.equal(existsSync(dataDir), false, 'the data directory was opened before the port was checked')
  })

  test('a port in use is refused at once naming PORT, before the database server is contacted', async () => {
    const outcome = await start({
      PORT: String(busyPort),
      HOST: '127.0.0.1',
      DATABASE_URL: `postgres://app:${PASSWORD}@127.0.0.1:1/x`,
      DATABASE_START_TIMEOUT_SECONDS: '60',
    })
    assert.notEqual(outcome.code, 0)
    assert.match(outcome.stderr, /failed to start: PORT: /)
    assert.doesNotMatch(outcome.stderr, /DATABASE_URL/)
    assert.ok(outcome.ms < 30_000, `took ${outcome.ms} ms`)
    assertNoSecret(outcome, PASSWORD)
  })

  test('an unreachable database server is named (host and port, no password), retried, then given up', async () => {
    const outcome = await start({
      PORT: '0',
      DATABASE_URL: `postgres://app:${PASSWORD}@127.0.0.1:1/x`,
      DATABASE_START_TIMEOUT_SECONDS: '2',
    })
    assert.equal(outcome.code, 1)
    const lines = outcome.stderr.trim().split('\n')
    const retries = lines.filter((line) => /DATABASE_URL: cannot reach .*; retrying in /.test(line))
    assert.ok(retries.length >= 2, `expected retries: ${outcome.stderr}`)
    assert.match(
      lines.at(-1) ?? '',
      /^optics-catalog: failed to start: DATABASE_URL: cannot reach the database server at 127\.0\.0\.1:1 \(ECONNREFUSED\) after \d+ attempts/,
    )
    assert.ok(outcome.ms >= 2000, `gave up after ${outcome.ms} ms, before DATABASE_START_TIMEOUT_SECONDS`)
    assertNoSecret(outcome, PASSWORD)
  })

  test('DATABASE_START_TIMEOUT_SECONDS=0 tries once', async () => {
    const outcome = await start({
      PORT: '0',
      DATABASE_URL: `postgres://app:${PASSWORD}@127.0.0.1:1/x`,
      DATABASE_START_TIMEOUT_SECONDS: '0',
    })
    assert.equal(outcome.code, 1)
    assert.equal(
      outcome.stderr,
      'optics-catalog: failed to start: DATABASE_URL: cannot reach the database server at 127.0.0.1:1 (ECONNREFUSED)\n',
    )
  })

  test('a database server that refuses (unknown database) is named at once, without the password', {
    skip: process.env.TEST_DATABASE_URL ? false : 'TEST_DATABASE_URL is not set',
  }, async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!)
    url.password = PASSWORD
    url.pathname = '/no_such_database_16'
    const outcome = await start({ PORT: '0', DATABASE_URL: url.toString(), DATABASE_START_TIMEOUT_SECONDS: '30' })
    assert.equal(outcome.code, 1)
    assert.match(outcome.stderr, /failed to start: DATABASE_URL: the database server at .* refused the connection: /)
    assert.ok(outcome.ms < 20_000, `took ${outcome.ms} ms: a refusal is not retried`)
    assertNoSecret(outcome, PASSWORD)
  })

  test('the CLI names an unreachable DATABASE_URL too, without its password', async () => {
    let stderr = ''
    const io = {
      stdout: { write: () => true } as unknown as NodeJS.WriteStream,
      stderr: {
        write: (text: string) => {
          stderr += text
          return true
        },
      } as unknown as NodeJS.WriteStream,
      env: { DATABASE_URL: `postgres://app:${PASSWORD}@127.0.0.1:1/x`, DATABASE_START_TIMEOUT_SECONDS: '1' },
    }
    assert.equal(await runCli(['migrate'], io), 1)
    assert.match(
      stderr,
      /migrate failed: DATABASE_URL: cannot reach the database server at 127\.0\.0\.1:1 \(ECONNREFUSED\)/,
    )
    assert.match(stderr, /retrying in/)
    assert.ok(!stderr.includes(PASSWORD), stderr)
  })
})
