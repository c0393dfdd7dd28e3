import assert from 'node:assert/strict'
import net from 'node:net'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { buildTestApp, eachDatabase } from '../../test/harness.js'

/*
 * Slow and idle clients cannot hold the service's sockets: headers must arrive within HEADERS_TIMEOUT_MS, even
 * from a client that sends a byte at a time (or nothing); an idle keep-alive connection is closed after
 * KEEP_ALIVE_TIMEOUT_MS; beyond MAX_CONNECTIONS a connection is closed at once. Normal requests are answered
 * meanwhile. The bounds are short here; the margins allow for a loaded machine.
 */

/** How much later than its bound a connection may be closed here (Node checks every twentieth of the bound). */
const SLACK_MS = 5000

interface Outcome {
  /** Milliseconds from opening the connection to its close. */
  readonly closedAfterMs: number
  /** What the server sent before closing. */
  readonly received: string
}

/** Opens a connection and sends `request` one byte every `intervalMs` (nothing when empty) until it is closed. */
function dripping(port: number, request: string, intervalMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    const opened = Date.now()
    const socket = net.connect(port, '127.0.0.1')
    let received = ''
    let sent = 0
    const timer = setInterval(() => {
      if (sent < request.length && socket.writable) socket.write(request[sent++] ?? '')
    }, intervalMs)
    socket.on('data', (chunk) => {
      received += chunk.toString()
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(timer)
      resolve({ closedAfterMs: Date.now() - opened, received })
    })
  })
}

/** Resolves once `socket` is open (or closed, whichever comes first). */
function connected(socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    socket.once('connect', () => resolve())
    socket.once('close', () => resolve())
  })
}

eachDatabase('slow clients', (ctx) => {
  let apps: FastifyInstance[] = []

  /** The service listening on a free port of 127.0.0.1. */
  async function listening(env: Record<string, string>): Promise<number> {
    const app = await buildTestApp(ctx.db, env)
    apps.push(app)
    await app.listen({ port: 0, host: '127.0.0.1' })
    const address = app.server.address()
    assert.ok(address && typeof address === 'object')
    return address.port
  }

  before(() => {
    apps = []
  })
  after(async () => {
    for (const app of apps) await app.close()
  })

  async function listEntries(port: number): Promise<number> {
    const response = await fetch(`http://127.0.0.1:${port}/api/v2/glasses/prices/list?size=1`)
    await response.arrayBuffer()
    return response.status
  }

  test('300 connections sending headers a byte at a time are all closed with a 408 within HEADERS_TIMEOUT_MS', async () => {
    const headersTimeout = 1500
    const port = await listening({ HEADERS_TIMEOUT_MS: String(headersTimeout), REQUEST_TIMEOUT_MS: '30000' })
    const request = `GET /actuator/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(200)}\r\n\r\n`
    // A first listing before the slow clients come, so what follows measures the service under them, not its
    // first use (which starts the search index's thread).
    assert.equal(await listEntries(port), 200)
    const slow = Array.from({ length: 300 }, () => dripping(port, request, 200))
    // Silent connections (not a byte) are no better off.
    const silent = Array.from({ length: 10 }, () => dripping(port, '', 200))

    // The service answers normal requests meanwhile.
    const answers: number[] = []
    let done = false
    const normal = (async () => {
      while (!done) {
        answers.push(await listEntries(port))
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    })()
    const outcomes = await Promise.all([...slow, ...silent])
    done = true
    await normal

    for (const outcome of outcomes) {
      assert.ok(
        outcome.closedAfterMs <= headersTimeout + SLACK_MS,
        `a slow connection stayed open ${outcome.closedAfterMs} ms`,
      )
    }
    // Each was cut with a 408 (which a client still writing may miss: its next byte meets a closed socket), and
    // none was ever served.
    const cut = outcomes.slice(0, 300)
    assert.ok(cut.some((outcome) => outcome.received.startsWith('HTTP/1.1 408 ')))
    for (const outcome of cut) assert.match(outcome.received, /^(HTTP\/1\.1 408 [\s\S]*)?$/)
    assert.ok(answers.length >= 2, 'normal requests were sent meanwhile')
    assert.deepEqual(new Set(answers), new Set([200]))
  })

  test('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const keepAlive = 500
    const port = await listening({ KEEP_ALIVE_TIMEOUT_MS: String(keepAlive) })
    const outcome = await new Promise<{ idleMs: number; received: string }>((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      let received = ''
      let answered = 0
      socket.on('data', (chunk) => {
        received += chunk.toString()
        if (answered === 0 && /\r\n\r\n\{"status":"UP"\}/.test(received)) answered = Date.now()
      })
      socket.on('close', () => resolve({ idleMs: Date.now() - answered, received }))
      socket.write('GET /actuator/health/liveness HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n')
    })
    assert.match(outcome.received, /^HTTP\/1\.1 200 /)
    assert.match(outcome.received, /keep-alive/i)
    assert.ok(outcome.idleMs >= keepAlive - 100, `closed after ${outcome.idleMs} ms idle, before the bound`)
    assert.ok(outcome.idleMs <= keepAlive + SLACK_MS, `an idle connection stayed open ${outcome.idleMs} ms`)
  })

  test('beyond MAX_CONNECTIONS a connection is closed at once; the service stays healthy', async () => {
    const cap = 20
    const port = await listening({ MAX_CONNECTIONS: String(cap), HEADERS_TIMEOUT_MS: '20000' })
    const held = Array.from({ length: cap }, () => net.connect(port, '127.0.0.1').on('error', () => {}))
    await Promise.all(held.map(connected))
    // The held connections are open: each can still send a request (one of them does).
    await new Promise((resolve) => setTimeout(resolve, 200))

    const extra = await dripping(port, 'GET /actuator/health/liveness HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 10)
    assert.equal(extra.received, '', 'nothing is served beyond the cap')
    assert.ok(extra.closedAfterMs < SLACK_MS, `the connection beyond the cap stayed ${extra.closedAfterMs} ms`)

    const first = held[0] as net.Socket
    const answer = await new Promise<string>((resolve) => {
      let received = ''
      first.on('data', (chunk) => {
        received += chunk.toString()
        if (received.includes('{"status":"UP"}')) resolve(received)
      })
      first.write('GET /actuator/health/liveness HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
    })
    assert.match(answer, /^HTTP\/1\.1 200 /)

    for (const socket of held) socket.destroy()
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.equal(await listEntries(port), 200, 'served again once connections are free')
  })
})
