import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { before, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { pricesPath, seedEntries, stall, storedEntries } from '../../test/fixtures/glass-prices.js'
import { sendHttp } from '../../test/fixtures/http.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'

/*
 * A write allowed longer than an ordinary request (the bulk change and the revert: LONG_WRITE_TIMEOUT_MS, 5
 * minutes; the upload: 15 minutes) keeps its connection for as long as it works, with the default settings: held
 * 40 s by the database (past REQUEST_TIMEOUT_MS + 5 s, where the socket of an ordinary request is cut), each is
 * answered 200 and applied. When such a write does outlive its own deadline, its client gets the 503 problem, not
 * a socket closed unanswered. Real sockets, as a client meets them. The suites run side by side, so the file
 * takes one hold's time.
 */

const HOLD_MS = 40_000

const send = sendHttp

const doubled = JSON.stringify({ priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 2, round: 'WHOLE' })

/** The app of a suite, listening on a free port of loopback; answers the port. */
function listening(app: () => FastifyInstance): () => number {
  let port = 0
  before(async () => {
    await app().listen({ port: 0, host: '127.0.0.1' })
    port = (app().server.address() as AddressInfo).port
  })
  return () => port
}

describe('long writes keep their connection', { concurrency: true }, () => {
  eachDatabase('long deadlines', (ctx) => {
    const app = useTestApp(ctx)
    const port = listening(app)

    test('a bulk change, a revert and an upload held 40 s by the database answer 200 and apply', {
      timeout: HOLD_MS + 60_000,
    }, async () => {
      await seedEntries(ctx.db, [
        { manufacturer: 'Hold', brand: 'Hold', model: 'Revert', price: 100, purchase: 50 },
        { manufacturer: 'Hold', brand: 'Hold', model: 'Bulk', price: 100, purchase: 50 },
      ])
      const earlier = await send(port(), 'POST', `${pricesPath}/list?model=Revert`, doubled)
      assert.equal(earlier.status, 200, earlier.body)
      const batch = earlier.headers['x-price-change-batch']

      const held = await stall(ctx.db)
      const started = performance.now()
      const answers = Promise.all([
        send(port(), 'POST', `${pricesPath}/list?model=Bulk`, doubled),
        send(port(), 'POST', `${pricesPath}/changes/${batch}/revert`),
        send(
          port(),
          'POST',
          `${pricesPath}/import?mode=append`,
          'manufacturer,brand,model,price,purchase\nHold,Hold,Upload,300,150\n',
          'text/csv',
        ),
      ])
      await new Promise((resolve) => setTimeout(resolve, HOLD_MS))
      await held.release()
      const [bulk, revert, upload] = await answers
      assert.ok(performance.now() - started >= HOLD_MS, 'the writes waited for the whole hold')
      assert.equal(bulk.status, 200, bulk.body)
      assert.equal(bulk.headers['x-changed-count'], '1')
      assert.equal(revert.status, 200, revert.body)
      assert.equal(upload.status, 200, upload.body)
      const prices = Object.fromEntries((await storedEntries(ctx.db)).map((entry) => [entry.model, entry.price]))
      assert.deepEqual(prices, { Bulk: '200.00', Revert: '100.00', Upload: '300.00' })
    })
  })

  eachDatabase('a long deadline given up', (ctx) => {
    const app = useTestApp(ctx, { env: { REQUEST_TIMEOUT_MS: '1000', LONG_WRITE_TIMEOUT_MS: '8000' } })
    const port = listening(app)

    test('a bulk change held past its own deadline gets its 503 problem, not a cut socket, and changes nothing', async () => {
      await seedEntries(ctx.db, [{ manufacturer: 'Hold', brand: 'Hold', model: 'Late', price: 100, purchase: 50 }])
      const held = await stall(ctx.db)
      try {
        const started = performance.now()
        // Past REQUEST_TIMEOUT_MS + 5 s, the ordinary socket bound, and answered at LONG_WRITE_TIMEOUT_MS.
        const late = await send(port(), 'POST', `${pricesPath}/list?model=Late`, doubled)
        const waited = performance.now() - started
        assert.equal(late.status, 503, late.body)
        assert.match(String(late.headers['content-type']), /^application\/problem\+json/)
        assert.ok(waited >= 8000 && waited < 14_000, `answered after ${Math.round(waited)} ms`)
      } finally {
        await held.release()
      }
      assert.equal((await storedEntries(ctx.db))[0]?.price, '100.00')
    })
  })
})
