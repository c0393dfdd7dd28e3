import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { before, describe, test } from 'node:test'
import { sql } from 'kysely'
import {
  changeCount,
  clearGlassPrices,
  lockWaits,
  pricesPath,
  seedEntries,
  stall,
  storedEntries,
  waitFor,
} from '../../test/fixtures/glass-prices.js'
import { type HttpAnswer, sendHttp } from '../../test/fixtures/http.js'
import { eachDatabase, testConfig, useTestApp } from '../../test/harness.js'
import { inTransaction } from '../db/transaction.js'
import { lockGlassPriceList } from '../glass-prices/price-history.js'
import { securityServerOptions } from './security.js'

/*
 * Every request is answered at REQUEST_TIMEOUT_MS, with a body or without, while the database is stalled (a
 * transaction of the test holds the tables every search and write needs; on the embedded database it holds the one
 * connection); the work given up commits nothing. Slow headers and slow bodies are cut at their own bounds. A real
 * server and sockets, as clients meet it. Bounds are checked generously (a loaded machine is slow), but tightly
 * enough to tell the bounds apart and to fail the old behaviour (no answer at all, or one a whole check interval of
 * 30 s late).
 */

const TIMEOUT_MS = 1000
const HEADERS_TIMEOUT_MS = 400

eachDatabase('request timeout', (ctx) => {
  const app = useTestApp(ctx, {
    env: { REQUEST_TIMEOUT_MS: String(TIMEOUT_MS), HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS) },
    beforeEach: () => clearGlassPrices(ctx.db),
  })
  let port: number
  before(async () => {
    await app().listen({ port: 0, host: '127.0.0.1' })
    port = (app().server.address() as AddressInfo).port
  })

  const send = (method: string, path: string, body?: unknown) =>
    sendHttp(port, method, path, body === undefined ? undefined : JSON.stringify(body))

  const assertTimedOut = (answer: HttpAnswer, what: string) => {
    assert.equal(answer.status, 503, `${what}: ${answer.body}`)
    assert.match(String(answer.headers['content-type']), /^application\/problem\+json/)
    assert.equal(answer.headers['retry-after'], '5')
    assert.match(JSON.parse(answer.body).detail, /took too long/)
    assert.ok(answer.ms >= TIMEOUT_MS * 0.9, `${what}: answered after ${answer.ms} ms, before the timeout`)
    // Before, a request with a body got no answer at all: the socket was closed at the timeout + 5 s.
    assert.ok(answer.ms < TIMEOUT_MS + 2500, `${what}: answered after ${answer.ms} ms`)
  }

  test('during a database stall, a PUT, a create, a search and a listing get their 503 at the timeout', async () => {
    const [id] = await seedEntries(ctx.db, [
      { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 1', price: 100, purchase: 50 },
    ])
    const before = await storedEntries(ctx.db)
    const changes = await changeCount(ctx.db)
    const held = await stall(ctx.db)
    let answers: HttpAnswer[]
    try {
      answers = await Promise.all([
        send('PUT', `${pricesPath}/${id}`, {
          manufacturer: 'Safilo',
          brand: 'Carrera',
          model: 'CA 1',
          price: 999,
          purchase: 50,
        }),
        send('POST', pricesPath, { manufacturer: 'New', brand: 'New', model: 'N 1', price: 1, purchase: 1 }),
        send('POST', '/api/v2/good/nomenclature/search/glasses', { byPriceList: true, brand: 'carr' }),
        send('GET', `${pricesPath}/list`),
      ])
    } finally {
      await held.release()
    }
    for (const [index, what] of ['PUT', 'create', 'search', 'listing'].entries()) {
      assertTimedOut(answers[index] as HttpAnswer, what)
    }
    // The work given up commits nothing, also once the database moves again.
    const probe = await send('GET', `${pricesPath}/${id}`)
    assert.equal(probe.status, 200, probe.body)
    await new Promise((resolve) => setTimeout(resolve, 300))
    assert.deepEqual(await storedEntries(ctx.db), before)
    assert.equal(await changeCount(ctx.db), changes)
  })

  test('a bulk change whose client leaves before the answer is cancelled: nothing changed, no history batch', async () => {
    await sql`
      INSERT INTO glasses_price (manufacturer, brand, model, price, purchase, updated_by)
      SELECT 'Seed', 'Gone', 'G ' || g, 100 + g, 50, 'seed' FROM generate_series(1, 2000) g`.execute(ctx.db.primary)
    const before = await storedEntries(ctx.db)
    const changes = await changeCount(ctx.db)
    const held = await stall(ctx.db)
    try {
      const outgoing = httpRequest({
        port,
        host: '127.0.0.1',
        method: 'POST',
        path: `${pricesPath}/list?brand=Gone`,
        agent: false,
        headers: { 'content-type': 'application/json' },
      })
      outgoing.on('error', () => {})
      outgoing.end(
        JSON.stringify({ priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.1, round: 'WHOLE' }),
      )
      // The bulk change is under way: it waits for the price list the test holds (for the one connection, embedded).
      await waitFor(async () =>
        ctx.target === 'postgres' ? (await lockWaits(ctx.db)) > 0 : (ctx.db.poolStats()[0]?.waiting ?? 0) > 0,
      )
      outgoing.destroy()
      if (ctx.target === 'postgres') {
        // Its statement was cancelled on the server: nothing waits for the price list any more.
        await waitFor(async () => (await lockWaits(ctx.db)) === 0)
      } else {
        // The embedded database runs nothing meanwhile; the closed socket is noticed within moments.
        await new Promise((resolve) => setTimeout(resolve, 500))
      }
    } finally {
      await held.release()
    }
    // Whatever was left of the bulk change is over once its lock is free; it wrote nothing.
    await inTransaction(ctx.db.primary, (trx) => lockGlassPriceList(trx))
    assert.deepEqual(await storedEntries(ctx.db), before)
    assert.equal(await changeCount(ctx.db), changes)
  })

  test('slow headers get a 408 at HEADERS_TIMEOUT_MS, well before REQUEST_TIMEOUT_MS', async () => {
    const { text, ms } = await rawExchange(port, ['GET /actuator/health HTTP/1.1\r\nHost: x\r\n'])
    assert.match(text, /^HTTP\/1\.1 408 /)
    assert.ok(ms >= HEADERS_TIMEOUT_MS * 0.9 && ms < HEADERS_TIMEOUT_MS * 1.1 + 250, `cut after ${ms} ms`)
  })

  test('a body that stops arriving gets a 408 at REQUEST_TIMEOUT_MS, and the connection is closed', async () => {
    const { text, ms } = await rawExchange(port, [
      `POST /api/v2/good/nomenclature/search/glasses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        'Content-Length: 100\r\n\r\n{"byPriceList":',
    ])
    assert.match(text, /^HTTP\/1\.1 408 /)
    assert.match(text, /application\/problem\+json/)
    assert.ok(ms >= TIMEOUT_MS * 0.9 && ms < TIMEOUT_MS * 1.1 + 250, `cut after ${ms} ms`)
  })
})

/** Writes the chunks to a new connection and reads until the server closes it; how long that took. */
async function rawExchange(port: number, chunks: readonly string[]): Promise<{ text: string; ms: number }> {
  const started = performance.now()
  const socket = net.connect(port, '127.0.0.1')
  let text = ''
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString()
  })
  for (const chunk of chunks) socket.write(chunk)
  await new Promise<void>((resolve) => {
    socket.on('close', () => resolve())
    socket.on('error', () => resolve())
  })
  return { text, ms: performance.now() - started }
}

describe('timeout options', () => {
  test('headers and bodies are checked often enough to be cut within 5 % of their bounds', () => {
    const options = securityServerOptions(testConfig({ REQUEST_TIMEOUT_MS: '30000' }))
    // Node's bound on a body is the longest route's (the upload's 15 minutes); each route's timer cuts at its own.
    assert.equal(options.requestTimeout, 15 * 60_000)
    assert.equal(options.http.headersTimeout, 10_000)
    assert.ok(options.http.connectionsCheckingInterval <= 500)
    assert.ok((options.connectionTimeout ?? 0) > 30_000)
    const short = securityServerOptions(testConfig({ REQUEST_TIMEOUT_MS: '2000', HEADERS_TIMEOUT_MS: '60000' }))
    assert.equal(short.http.headersTimeout, 2000, 'headers never wait longer than the whole request')
    const off = securityServerOptions(testConfig({ REQUEST_TIMEOUT_MS: '0' }))
    assert.deepEqual([off.requestTimeout, off.http.headersTimeout, off.connectionTimeout], [0, 0, 0])
  })
})
