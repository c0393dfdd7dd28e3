import assert from 'node:assert/strict'
import net from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { clearGlassPrices, pricesPath, seedEntries, storedEntries } from '../../../test/fixtures/glass-prices.js'
import { buildTestApp, openServerSchema, poll } from '../../../test/harness.js'
import { type Database, openDatabase } from '../database.js'

/*
 * The PostgreSQL server going away and coming back, with the service running. A TCP proxy on loopback stands
 * between the service and the server: cutting it (every connection dropped, new ones refused) or turning it into
 * a black hole (connections accepted, never answered) is the outage; restoring it is the server coming back.
 * The embedded database runs in-process and cannot go away, so this suite runs on the server only.
 *
 * Time bounds here are generous ceilings that tell "answers" from "hangs", not speed requirements.
 */

const serverUrl = process.env.TEST_DATABASE_URL?.trim() || undefined

/** Forwards loopback connections to the database server, until it is told otherwise. */
class TcpProxy {
  port = 0
  #server: net.Server | undefined
  readonly #sockets = new Set<net.Socket>()

  /** The server's TCP address, or its unix socket's path (`TEST_DATABASE_URL` may name either). */
  constructor(readonly target: { readonly host: string; readonly port: number } | { readonly path: string }) {}

  /** Listens (on the same port after the first time): forwarding, or accepting and never answering. */
  async start(mode: 'forward' | 'black hole'): Promise<void> {
    const server = net.createServer((client) => {
      this.#track(client)
      if (mode === 'black hole') return
      const upstream =
        'path' in this.target ? net.connect(this.target.path) : net.connect(this.target.port, this.target.host)
      this.#track(upstream)
      client.pipe(upstream).pipe(client)
      const drop = () => {
        client.destroy()
        upstream.destroy()
      }
      client.on('close', drop)
      upstream.on('close', drop)
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    this.port = (server.address() as net.AddressInfo).port
    this.#server = server
  }

  /** Drops every connection and stops accepting new ones. */
  async cut(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy()
    this.#sockets.clear()
    const server = this.#server
    this.#server = undefined
    if (server) await new Promise((resolve) => server.close(resolve))
  }

  #track(socket: net.Socket): void {
    this.#sockets.add(socket)
    socket.on('error', () => {})
    socket.on('close', () => this.#sockets.delete(socket))
  }
}

/**
 * Where `TEST_DATABASE_URL` points, read as libpq does: `?host=`/`?port=` win over the URL's own; a host that is a
 * path (`postgres://root@%2Fvar%2Frun%2Fpostgresql/test`) is the directory of the server's unix socket.
 */
function serverAddress(url: string): { host: string; port: number } | { path: string } {
  const parsed = new URL(url)
  const host = parsed.searchParams.get('host') || decodeURIComponent(parsed.hostname) || '127.0.0.1'
  const port = Number(parsed.searchParams.get('port') || parsed.port || 5432)
  return host.startsWith('/') ? { path: `${host}/.s.PGSQL.${port}` } : { host, port }
}

async function timed<T>(run: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now()
  const value = await run()
  return { value, ms: performance.now() - started }
}

/** The outage's reads are slower to settle: a tenth of a second between them. */
const pollSlowly = <T>(read: () => Promise<T>, done: (value: T) => boolean, what: string) => poll(read, done, what, 100)

const applicationName = `optics-outage-${process.pid}`
const search = {
  method: 'POST',
  url: '/api/v2/good/nomenclature/search/glasses',
  payload: { byPriceList: true },
} as const
const created = { manufacturer: 'Outage', brand: 'Outage', model: 'Written during the outage', price: 10, purchase: 5 }

describe('database outage [postgres]', { skip: serverUrl ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let direct: Database
  let cleanup: () => Promise<void>
  let schema: string
  let proxy: TcpProxy
  let proxied: Database
  let app: FastifyInstance
  let c1: number | undefined

  before(async () => {
    const opened = await openServerSchema(serverUrl!)
    direct = opened.db
    schema = opened.schema
    cleanup = opened.cleanup
    ;[c1] = await seedEntries(direct, [
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'C1', price: 100, purchase: 50 },
    ])

    proxy = new TcpProxy(serverAddress(serverUrl!))
    await proxy.start('forward')
    const viaProxy = new URL(serverUrl!)
    viaProxy.hostname = '127.0.0.1'
    viaProxy.port = String(proxy.port)
    // A unix socket named in the query (`?host=/var/run/postgresql`) would win over the proxy's address.
    viaProxy.searchParams.delete('host')
    viaProxy.searchParams.delete('port')
    proxied = await openDatabase({
      url: viaProxy.toString(),
      schema,
      poolSize: 3,
      connectTimeoutMs: 1000,
      applicationName,
    })
    app = await buildTestApp(proxied)
  })
  after(async () => {
    await app?.close()
    await proxied?.close().catch(() => {})
    await proxy?.cut()
    await cleanup?.()
  })

  test('with the server reachable, the API and the readiness probe answer', async () => {
    assert.equal((await app.inject(search)).statusCode, 200)
    assert.equal((await app.inject({ url: `${pricesPath}/list` })).json().totalElements, 1)
    assert.equal((await app.inject({ url: '/actuator/health/readiness' })).statusCode, 200)
  })

  test('cut under a request waiting on the server: that request answers 503 and the process carries on', async () => {
    const holder = new pg.Client({ connectionString: serverUrl, options: `-c search_path=${schema},public` })
    await holder.connect()
    try {
      await holder.query('BEGIN')
      await holder.query(`SELECT id FROM glasses_price WHERE model = 'C1' FOR UPDATE`)
      const waiting = app.inject({ method: 'PUT', url: `${pricesPath}/${c1}`, payload: { ...created, model: 'C1' } })
      await pollSlowly(
        async () => {
          const { rows } = await holder.query(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'`,
            [applicationName],
          )
          return rows[0].n as number
        },
        (n) => n > 0,
        'the update to wait for the lock',
      )
      await proxy.cut()
      const { value: response, ms } = await timed(() => waiting)
      assert.equal(response.statusCode, 503)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
      assert.ok(ms < 10_000, `the update took ${Math.round(ms)} ms after the cut`)
    } finally {
      await holder.query('ROLLBACK')
      await holder.end()
    }
  })

  test('cut: requests answer 503 problem details at once, readiness is DOWN, liveness UP', async () => {
    for (const request of [
      search,
      { method: 'GET', url: `${pricesPath}/list` },
      { method: 'GET', url: `${pricesPath}/${c1}` },
      { method: 'POST', url: pricesPath, payload: created },
      { method: 'GET', url: '/api/v2/good/nomenclature/status' },
    ] as const) {
      const { value: response, ms } = await timed(() => app.inject(request))
      const where = `${request.method} ${request.url}`
      assert.equal(response.statusCode, 503, where)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/, where)
      assert.equal(response.headers['retry-after'], '5', where)
      const problem = response.json()
      assert.equal(problem.status, 503)
      assert.equal(problem.title, 'Service Unavailable')
      assert.doesNotMatch(response.body, /ECONNREFUSED|127\.0\.0\.1|select|at .*\.js/i, where)
      assert.ok(ms < 10_000, `${where} took ${Math.round(ms)} ms`)
    }

    const readiness = await timed(() => app.inject({ url: '/actuator/health/readiness' }))
    assert.equal(readiness.value.statusCode, 503)
    assert.equal(readiness.value.json().status, 'DOWN')
    assert.ok(readiness.ms < 10_000, `readiness took ${Math.round(readiness.ms)} ms`)
    assert.equal((await app.inject({ url: '/actuator/health' })).statusCode, 503)
    const liveness = await app.inject({ url: '/actuator/health/liveness' })
    assert.equal(liveness.statusCode, 200)
    assert.deepEqual(liveness.json(), { status: 'UP' })
    const metrics = await app.inject({ url: '/actuator/prometheus' })
    assert.equal(metrics.statusCode, 200)
    assert.match(metrics.body, /^optics_database_up 0$/m)
  })

  test('black hole: requests answer 503 once the connect timeout passes, never hang', async () => {
    await proxy.start('black hole')
    const { value: response, ms } = await timed(() => app.inject(search))
    assert.equal(response.statusCode, 503)
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
    assert.ok(ms < 20_000, `the search took ${Math.round(ms)} ms`)
    const readiness = await timed(() => app.inject({ url: '/actuator/health/readiness' }))
    assert.equal(readiness.value.statusCode, 503)
    assert.ok(readiness.ms < 20_000, `readiness took ${Math.round(readiness.ms)} ms`)
    await proxy.cut()
  })

  test('restored: the service recovers by itself, and nothing was written during the outage', async () => {
    await proxy.start('forward')
    await pollSlowly(
      () => app.inject({ url: '/actuator/health/readiness' }),
      (response) => response.statusCode === 200,
      'readiness UP',
    )
    const response = await app.inject(search)
    assert.equal(response.statusCode, 200)
    assert.equal(response.json().totalElements, 1)
    assert.deepEqual(
      (await storedEntries(direct)).map((entry) => entry.model),
      ['C1'],
    )
    const metrics = await app.inject({ url: '/actuator/prometheus' })
    assert.match(metrics.body, /^optics_database_up 1$/m)
    const written = await app.inject({ method: 'POST', url: pricesPath, payload: created })
    assert.equal(written.statusCode, 200)
  })

  /**
   * One entry (`model`) whose row another session holds FOR UPDATE, and an app whose connections have a 300 ms
   * statement timeout; `fn` runs with them, `release()` ends the other session's transaction.
   */
  const withRowHeld = async (
    model: string,
    fn: (held: { id: number; limitedApp: FastifyInstance; release: () => Promise<unknown> }) => Promise<void>,
  ) => {
    await clearGlassPrices(direct)
    const [id] = await seedEntries(direct, [{ manufacturer: 'Lock', brand: 'Lock', model, price: 100, purchase: 50 }])
    const limited = await openDatabase({ url: serverUrl, schema, poolSize: 2, statementTimeoutMs: 300 })
    const limitedApp = await buildTestApp(limited)
    const holder = new pg.Client({ connectionString: serverUrl, options: `-c search_path=${schema},public` })
    await holder.connect()
    try {
      await holder.query('BEGIN')
      await holder.query('SELECT id FROM glasses_price WHERE id = $1 FOR UPDATE', [id])
      await fn({ id: id as number, limitedApp, release: () => holder.query('ROLLBACK') })
    } finally {
      await holder.end()
      await limitedApp.close()
      await limited.close()
    }
  }

  test('a statement held up past the statement timeout answers 503, and the write is not applied', () =>
    withRowHeld('L1', async ({ id, limitedApp, release }) => {
      const update = { method: 'PUT', url: `${pricesPath}/${id}`, payload: { ...created, price: 999 } } as const
      const blocked = await limitedApp.inject(update)
      assert.equal(blocked.statusCode, 503)
      assert.match(String(blocked.headers['content-type']), /^application\/problem\+json/)
      await release()
      assert.equal((await storedEntries(direct))[0]?.price, '100.00')
      const free = await limitedApp.inject(update)
      assert.equal(free.statusCode, 200)
    }))

  test('a bulk change waits past the statement timeout, within its own longer deadline, and applies', () =>
    withRowHeld('L2', async ({ limitedApp, release }) => {
      const bulk = limitedApp.inject({
        method: 'POST',
        url: `${pricesPath}/list?model=L2`,
        payload: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 2, round: 'WHOLE' },
      })
      // Held three times the statement timeout: a short write would have been cancelled (the test above).
      await new Promise((resolve) => setTimeout(resolve, 900))
      await release()
      const answer = await bulk
      assert.equal(answer.statusCode, 200, answer.body)
      assert.equal(answer.headers['x-changed-count'], '1')
      assert.equal((await storedEntries(direct))[0]?.price, '200.00')
    }))
})
