import assert from 'node:assert/strict'
import { type ChildProcess, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { eachDatabase, spawnServer } from '../test/harness.js'

/*
 * The server as it is deployed: a child process started the way `npm start` does, stopped with SIGTERM while a
 * request is in flight. The request is held open by its client (half of the body sent), so it is in flight for
 * as long as the test wants, whatever the machine's speed. On the embedded database the server gets a data
 * directory of its own (the suite's is open in this process); on the server it works in the suite's schema.
 */

const WAIT_MS = 120_000

type LogLine = Record<string, unknown> & { msg?: string; reqId?: string }

/** The server's JSON log lines, as they arrive on its standard output. */
class ServerLog {
  readonly lines: LogLine[] = []
  #stderr = ''

  constructor(readonly child: ChildProcess) {
    let pending = ''
    child.stdout?.on('data', (chunk: Buffer) => {
      pending += chunk.toString()
      const complete = pending.split('\n')
      pending = complete.pop() ?? ''
      for (const line of complete) {
        try {
          this.lines.push(JSON.parse(line))
        } catch {
          // Not a log line (nothing else is expected on standard output).
        }
      }
    })
    child.stderr?.on('data', (chunk: Buffer) => {
      this.#stderr += chunk.toString()
    })
  }

  /** Waits for a line the predicate accepts; fails if the process ends first or nothing comes in time. */
  async waitFor(predicate: (line: LogLine) => boolean, what: string): Promise<LogLine> {
    const deadline = Date.now() + WAIT_MS
    for (;;) {
      const found = this.lines.find(predicate)
      if (found) return found
      if (this.child.exitCode !== null)
        assert.fail(`the server exited (${this.child.exitCode}) before ${what}: ${this.#stderr}`)
      if (Date.now() > deadline) assert.fail(`gave up waiting for ${what}`)
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  indexOf(predicate: (line: LogLine) => boolean): number {
    return this.lines.findIndex(predicate)
  }
}

/** The exit code, once the process has ended and its output has been read to the end. */
function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.stdout?.closed && child.stderr?.closed && child.exitCode !== null) resolve(child.exitCode)
    else child.once('close', (code) => resolve(code))
  })
}

/** Resolves when a connection to the port is refused (the server stopped listening). */
async function connectionRefused(port: number): Promise<void> {
  const deadline = Date.now() + WAIT_MS
  for (;;) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      socket.once('connect', () => {
        socket.destroy()
        resolve(false)
      })
      socket.once('error', () => resolve(true))
    })
    if (refused) return
    if (Date.now() > deadline) assert.fail('the server still accepts connections')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

eachDatabase('server: graceful shutdown', (ctx) => {
  let work: string
  let env: Record<string, string>
  let child: ChildProcess | undefined

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'optics-server-'))
    if (ctx.target === 'postgres') {
      const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(ctx.db.primary)
      const url = new URL(process.env.TEST_DATABASE_URL!)
      url.searchParams.set('options', `-c search_path=${rows[0]!.schema},public`)
      env = { DATABASE_URL: url.toString() }
    } else {
      // A copy of the migrated template starts faster than a new data directory.
      const template = process.env.TEST_PGLITE_TEMPLATE
      if (template && existsSync(template)) cpSync(template, join(work, 'data'), { recursive: true })
      env = { DATA_DIR: join(work, 'data') }
    }
  })
  after(() => {
    if (child && child.exitCode === null) child.kill('SIGKILL')
    rmSync(work, { recursive: true, force: true })
  })

  test('SIGTERM lets the request in flight finish, stops accepting, then closes the database and exits 0', async () => {
    child = spawnServer(env)
    const log = new ServerLog(child)
    const listening = await log.waitFor((line) => /^Server listening at /.test(line.msg ?? ''), 'listening')
    const port = Number(/:(\d+)$/.exec(listening.msg ?? '')?.[1])
    assert.ok(port > 0)

    // A client keeping an idle keep-alive connection must not hold the shutdown up.
    const agent = new http.Agent({ keepAlive: true })
    const idle = await new Promise<number>((resolve, reject) => {
      http
        .get({ port, host: '127.0.0.1', path: '/actuator/health', agent }, (response) => {
          response.resume()
          response.on('end', () => resolve(response.statusCode ?? 0))
        })
        .on('error', reject)
    })
    assert.equal(idle, 200)

    // The slow request: headers and the first bytes of its body now, the rest after SIGTERM.
    const body = JSON.stringify({ byPriceList: true, brand: 'nothing like this' })
    const slow = http.request({
      port,
      host: '127.0.0.1',
      method: 'POST',
      path: '/api/v2/good/nomenclature/search/glasses',
      agent: false,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'x-request-id': 'slow-1',
      },
    })
    const answered = new Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }>(
      (resolve, reject) => {
        slow.on('response', (response) => {
          let text = ''
          response.on('data', (chunk: Buffer) => {
            text += chunk.toString()
          })
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, text }))
        })
        slow.on('error', reject)
      },
    )
    slow.write(body.slice(0, 10))
    await log.waitFor((line) => line.reqId === 'slow-1' && line.msg === 'incoming request', 'the slow request')

    child.kill('SIGTERM')
    await log.waitFor((line) => /^shutting down/.test(line.msg ?? ''), 'the shutdown')
    await connectionRefused(port)
    assert.equal(child.exitCode, null, 'the server exited with a request in flight')

    slow.end(body.slice(10))
    const response = await answered
    assert.equal(response.status, 200)
    assert.equal(response.headers['x-request-id'], 'slow-1')
    const page = JSON.parse(response.text)
    assert.equal(page.totalElements, 0)
    assert.equal(page.number, 0)

    assert.equal(await exitOf(child), 0)
    const completed = log.indexOf((line) => line.reqId === 'slow-1' && line.msg === 'request completed')
    const drained = log.indexOf((line) => /^requests drained/.test(line.msg ?? ''))
    const shutDown = log.indexOf((line) => line.msg === 'shut down')
    assert.ok(completed >= 0, 'the slow request was not logged as completed')
    assert.ok(
      completed < drained && drained < shutDown,
      `expected: request completed, requests drained, shut down; the log said: ${log.lines
        .map((line) => line.msg)
        .join(' | ')}`,
    )
    agent.destroy()
  })

  test("a start removes the upload spools of stopped processes and leaves a running one's", async () => {
    const spools = join(work, 'tmp')
    mkdirSync(spools, { recursive: true })
    // A process id that ran and has ended (the spool of a killed service), one that runs (this test's), and a
    // spool named before spools carried their owner, untouched for two hours.
    const ended = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString()
    const spool = (name: string) => {
      mkdirSync(join(spools, name))
      writeFileSync(join(spools, name, 'upload.csv'), 'manufacturer,brand,model,price,purchase\n')
    }
    spool(`optics-upload-${ended}-a1b2c3`)
    spool(`optics-upload-${process.pid}-d4e5f6`)
    spool('optics-upload-OldOne')
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000)
    utimesSync(join(spools, 'optics-upload-OldOne'), twoHoursAgo, twoHoursAgo)
    spool('optics-upload-NewOne')
    const server = spawnServer({ TMPDIR: spools, ...env })
    child = server
    const log = new ServerLog(server)
    await log.waitFor((line) => /^Server listening at /.test(line.msg ?? ''), 'listening')
    assert.deepEqual(
      readdirSync(spools)
        .filter((name) => name.startsWith('optics-upload-'))
        .sort(),
      [`optics-upload-${process.pid}-d4e5f6`, 'optics-upload-NewOne'],
    )
    assert.equal((await log.waitFor((line) => /upload spools/.test(line.msg ?? ''), 'the removal')).removed, 2)
    server.kill('SIGTERM')
    assert.equal(await exitOf(server), 0)
  })
})
