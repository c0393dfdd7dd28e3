import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { before, test } from 'node:test'
import { sql } from 'kysely'
import {
  changeCount,
  clearGlassPrices,
  lockWaits,
  numberedEntries,
  pricesPath,
  seedEntries,
  stall,
  storedEntries,
  waitFor,
} from '../../test/fixtures/glass-prices.js'
import { buildTestApp, eachDatabase, useTestApp } from '../../test/harness.js'
import type { Database } from '../db/database.js'
import { inTransaction } from '../db/transaction.js'
import { lockGlassPriceList } from '../glass-prices/price-history.js'

/*
 * Writes sent with an Idempotency-Key: a retry gets the first outcome and applies nothing twice, whatever became
 * of the first answer (timed out, given up); the same key for another request is a 422, a retry while the first
 * runs a 409. Checked through the API and in the stored price list and its history.
 */

const entry = { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 1', price: 11990, purchase: 4800 }
const doubling = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 2, round: 'WHOLE' }

/** The sum of every retail price, exactly, in kopecks. */
async function priceSum(db: Database): Promise<bigint> {
  const { rows } = await sql<{ sum: string | null }>`
    SELECT (coalesce(sum(price), 0) * 100)::bigint::text AS sum FROM glasses_price`.execute(db.primary)
  return BigInt(rows[0]?.sum ?? '0')
}

/** How many changes of an action the history holds. */
async function changesOf(db: Database, action: string): Promise<number> {
  const { rows } = await sql<{ count: number | string }>`
    SELECT count(*) AS count FROM glass_price_change WHERE action = ${action}`.execute(db.primary)
  return Number(rows[0]?.count ?? 0)
}

/** Waits until the price list's changes under way are over (their transaction holds its lock, or the connection). */
async function settled(db: Database): Promise<void> {
  await inTransaction(db.primary, (trx) => lockGlassPriceList(trx))
}

eachDatabase('idempotency keys', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: async () => {
      await clearGlassPrices(ctx.db)
      await sql`DELETE FROM idempotency_key`.execute(ctx.db.primary)
    },
  })

  const send = (method: 'POST' | 'PUT' | 'DELETE', url: string, key: string | undefined, payload?: unknown) =>
    app().inject({
      method,
      url,
      headers: key === undefined ? {} : { 'idempotency-key': key },
      ...(payload === undefined ? {} : { payload: payload as object }),
    })

  test('a create retried with its key answers the first entry and ETag again, and creates one entry', async () => {
    const first = await send('POST', pricesPath, '"create-1"', entry)
    assert.equal(first.statusCode, 200, first.body)
    const retry = await send('POST', pricesPath, '"create-1"', entry)
    assert.equal(retry.statusCode, 200, retry.body)
    assert.equal(retry.headers.etag, first.headers.etag)
    assert.deepEqual(retry.json(), first.json())
    assert.equal(retry.headers['idempotent-replayed'], 'true')
    assert.equal((await storedEntries(ctx.db)).length, 1)
    assert.equal(await changeCount(ctx.db), 1)
    // A bare token is the same key as the quoted string.
    const bare = await send('POST', pricesPath, 'create-1', entry)
    assert.deepEqual(bare.json(), first.json())
    // Without a key, the contract's behaviour: a second create of the same entry is a duplicate.
    const unkeyed = await send('POST', pricesPath, undefined, entry)
    assert.equal(unkeyed.statusCode, 409)
    assert.equal(unkeyed.json().code, 'duplicate-key')
  })

  test('the same key with another body or path is a 422 and changes nothing', async () => {
    const first = await send('POST', pricesPath, 'k-1', entry)
    assert.equal(first.statusCode, 200)
    const other = await send('POST', pricesPath, 'k-1', { ...entry, model: 'CA 2' })
    assert.equal(other.statusCode, 422, other.body)
    assert.match(String(other.headers['content-type']), /^application\/problem\+json/)
    assert.equal(other.json().code, 'idempotency-key-reused')
    const elsewhere = await send('POST', `${pricesPath}/list`, 'k-1', doubling)
    assert.equal(elsewhere.statusCode, 422)
    assert.deepEqual(
      (await storedEntries(ctx.db)).map((row) => row.model),
      ['CA 1'],
    )
    assert.equal(await changeCount(ctx.db), 1)
    const russian = await app().inject({
      method: 'POST',
      url: pricesPath,
      headers: { 'idempotency-key': 'k-1', 'accept-language': 'ru' },
      payload: { ...entry, model: 'CA 3' },
    })
    assert.match(russian.json().detail, /Idempotency-Key/)
    assert.doesNotMatch(russian.json().detail, /was used for another request/)
  })

  test('a key that is not 1–255 visible ASCII characters is a 400 naming the header', async () => {
    for (const key of ['', '"a key with spaces"', 'ключ', 'x'.repeat(256)]) {
      const response = await send('POST', pricesPath, key, entry)
      assert.equal(response.statusCode, 400, `${JSON.stringify(key)}: ${response.body}`)
      assert.deepEqual(
        response.json().errors.map((error: { field: string }) => error.field),
        ['Idempotency-Key'],
      )
    }
    assert.equal((await storedEntries(ctx.db)).length, 0)
  })

  test('a refused write records no outcome: its retry with the key runs again', async () => {
    const [taken] = await seedEntries(ctx.db, [entry])
    const refused = await send('POST', pricesPath, 'after-delete', entry)
    assert.equal(refused.statusCode, 409)
    assert.equal((await send('DELETE', `${pricesPath}/${taken}`, undefined)).statusCode, 200)
    const retry = await send('POST', pricesPath, 'after-delete', entry)
    assert.equal(retry.statusCode, 200, retry.body)
    assert.equal(retry.headers['idempotent-replayed'], undefined)
  })

  test('PUT, DELETE, bulk change, revert and upload retried with their keys apply once', async () => {
    const [id] = await seedEntries(ctx.db, numberedEntries('Once', 3))
    const put = { ...entry, price: 500 }
    const putFirst = await send('PUT', `${pricesPath}/${id}`, 'put', put)
    const putRetry = await send('PUT', `${pricesPath}/${id}`, 'put', put)
    assert.equal(putRetry.statusCode, 200)
    assert.equal(putRetry.headers.etag, putFirst.headers.etag)
    assert.equal(putRetry.headers.etag, '"2"', 'the retry wrote no second version')

    const bulkFirst = await send('POST', `${pricesPath}/list?brand=Once`, 'bulk', doubling)
    assert.equal(bulkFirst.statusCode, 200, bulkFirst.body)
    assert.equal(bulkFirst.body, '')
    const sum = await priceSum(ctx.db)
    const bulkRetry = await send('POST', `${pricesPath}/list?brand=Once`, 'bulk', doubling)
    assert.equal(bulkRetry.statusCode, 200)
    assert.equal(bulkRetry.body, '')
    assert.equal(bulkRetry.headers['x-price-change-batch'], bulkFirst.headers['x-price-change-batch'])
    assert.equal(bulkRetry.headers['x-changed-count'], bulkFirst.headers['x-changed-count'])
    assert.equal(await priceSum(ctx.db), sum)

    const batch = bulkFirst.headers['x-price-change-batch']
    const revertFirst = await send('POST', `${pricesPath}/changes/${batch}/revert`, 'revert')
    assert.equal(revertFirst.statusCode, 200, revertFirst.body)
    const revertRetry = await send('POST', `${pricesPath}/changes/${batch}/revert`, 'revert')
    assert.equal(revertRetry.statusCode, 200, 'not 409 already-reverted: the first outcome')
    assert.deepEqual(revertRetry.json(), revertFirst.json())

    const deleteFirst = await send('DELETE', `${pricesPath}/${id}`, 'delete')
    const deleteRetry = await send('DELETE', `${pricesPath}/${id}`, 'delete')
    assert.deepEqual([deleteFirst.statusCode, deleteRetry.statusCode], [200, 200], 'not 404 for the retry')

    const csv = 'manufacturer,brand,model,price,purchase\nUp,Load,U 1,100,50\n'
    const upload = () =>
      app().inject({
        method: 'POST',
        url: `${pricesPath}/import`,
        headers: { 'content-type': 'text/csv', 'idempotency-key': 'upload' },
        payload: csv,
      })
    const uploadFirst = await upload()
    assert.equal(uploadFirst.statusCode, 200, uploadFirst.body)
    const uploadRetry = await upload()
    assert.equal(uploadRetry.statusCode, 200, 'not 422 for keys already in the list')
    assert.deepEqual(uploadRetry.json(), uploadFirst.json())
    assert.equal((await storedEntries(ctx.db)).filter((row) => row.brand === 'Load').length, 1)
    // One change per write: PUT, bulk change, revert, delete, upload.
    assert.equal(await changeCount(ctx.db), 5)
  })

  test('a retry while the first request runs is a 409, and the first applies once', async () => {
    await seedEntries(ctx.db, numberedEntries('Busy', 5))
    const before = await priceSum(ctx.db)
    const held = await stall(ctx.db)
    const bulk = () => send('POST', `${pricesPath}/list?brand=Busy`, 'busy', doubling)
    let answers: { statusCode: number; json(): { code?: string } }[]
    try {
      const first = bulk()
      const second = bulk()
      // One of the two waits for the stalled price list; the other is refused at once.
      const refused = await Promise.race([first, second])
      assert.equal(refused.statusCode, 409, refused.body)
      assert.equal(refused.json().code, 'idempotency-key-in-use')
      await held.release()
      answers = await Promise.all([first, second])
    } finally {
      await held.release()
    }
    assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 409])
    assert.equal(await priceSum(ctx.db), before * 2n)
    const later = await bulk()
    assert.equal(later.statusCode, 200)
    assert.equal(later.headers['idempotent-replayed'], 'true')
    assert.equal(await changesOf(ctx.db, 'BULK_CHANGE'), 1)
  })

  // Another instance needs a database several processes share: the server (an embedded database has one process).
  const onServer = ctx.target === 'postgres' ? test : () => undefined
  onServer(
    'a retry on another instance while the first runs is a 409 (the database knows the key is running)',
    async () => {
      const other = await buildTestApp(await ctx.openAnother())
      try {
        await seedEntries(ctx.db, numberedEntries('Shared', 5))
        const held = await stall(ctx.db)
        let first: Promise<{ statusCode: number }> | undefined
        try {
          first = send('POST', `${pricesPath}/list?brand=Shared`, 'shared', doubling)
          // The first holds its key's lock once it waits for the stalled table.
          await waitFor(async () => (await lockWaits(ctx.db)) > 0)
          const retry = await other.inject({
            method: 'POST',
            url: `${pricesPath}/list?brand=Shared`,
            headers: { 'idempotency-key': 'shared' },
            payload: doubling,
          })
          assert.equal(retry.statusCode, 409, retry.body)
          assert.equal(retry.json().code, 'idempotency-key-in-use')
        } finally {
          await held.release()
        }
        assert.equal((await first).statusCode, 200)
        const replayed = await other.inject({
          method: 'POST',
          url: `${pricesPath}/list?brand=Shared`,
          headers: { 'idempotency-key': 'shared' },
          payload: doubling,
        })
        assert.equal(replayed.headers['idempotent-replayed'], 'true')
        assert.equal(await changesOf(ctx.db, 'BULK_CHANGE'), 1)
      } finally {
        await other.close()
      }
    },
  )

  test('keys expire after IDEMPOTENCY_KEY_TTL: then the key is new again', async () => {
    const first = await send('POST', pricesPath, 'old', entry)
    assert.equal(first.statusCode, 200)
    await sql`UPDATE idempotency_key SET expires_at = now() - interval '1 second'`.execute(ctx.db.primary)
    const again = await send('POST', pricesPath, 'old', entry)
    assert.equal(again.statusCode, 409, 'run again: a duplicate now')
    assert.equal(again.json().code, 'duplicate-key')
    const kept = await send('POST', pricesPath, 'new', { ...entry, model: 'CA 9' })
    assert.equal(kept.statusCode, 200)
    const { rows } = await sql<{ ttl: number | string }>`
      SELECT extract(epoch FROM expires_at - created_at)::int AS ttl FROM idempotency_key WHERE key = 'new'`.execute(
      ctx.db.primary,
    )
    assert.deepEqual(
      rows.map((row) => Number(row.ttl)),
      [86_400],
      'kept 24 hours by default',
    )
  })
})

eachDatabase('idempotency keys and timeouts', (ctx) => {
  // One instance answers within 300 ms, so a large bulk change times out there; the retry goes to one that waits.
  const hasty = useTestApp(ctx, {
    env: { REQUEST_TIMEOUT_MS: '300', HEADERS_TIMEOUT_MS: '300', LONG_WRITE_TIMEOUT_MS: '300' },
  })
  const patient = useTestApp(ctx, { env: { REQUEST_TIMEOUT_MS: '120000' } })
  let port: number
  before(async () => {
    await hasty().listen({ port: 0, host: '127.0.0.1' })
    port = (hasty().server.address() as AddressInfo).port
  })

  test('a bulk change that timed out, retried with its key, multiplies every price exactly once', async (t) => {
    await clearGlassPrices(ctx.db)
    await sql`
      INSERT INTO glasses_price (manufacturer, brand, model, price, purchase, updated_by)
      SELECT 'Bulk', 'Timed', 'T ' || g, 100 + g % 1000, 50, 'seed' FROM generate_series(1, 20000) g`.execute(
      ctx.db.primary,
    )
    const before = await priceSum(ctx.db)
    const url = `${pricesPath}/list?brand=Timed`
    const headers = { 'content-type': 'application/json', 'idempotency-key': 'timed-out' }
    const first = await fetch(`http://127.0.0.1:${port}${url}`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ...doubling, coefficient: 2 }),
    })
    await first.text()
    // 503: timed out while it ran; 408: timed out while its body arrived (a loaded machine), so it never ran.
    assert.ok([200, 408, 503].includes(first.status), `first answer: ${first.status}`)
    t.diagnostic(`the first request answered ${first.status}`)
    // The client retries until the first request is over (409 while it still runs or rolls back).
    let retry = await patient().inject({ method: 'POST', url, headers, payload: { ...doubling, coefficient: 2 } })
    for (let attempt = 0; retry.statusCode === 409 && attempt < 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
      retry = await patient().inject({ method: 'POST', url, headers, payload: { ...doubling, coefficient: 2 } })
    }
    assert.equal(retry.statusCode, 200, retry.body)
    if (first.status === 200) assert.equal(retry.headers['idempotent-replayed'], 'true')
    await settled(ctx.db)
    assert.equal(await priceSum(ctx.db), before * 2n, 'every price doubled exactly once')
    assert.equal(await changesOf(ctx.db, 'BULK_CHANGE'), 1)
    const again = await patient().inject({ method: 'POST', url, headers, payload: { ...doubling, coefficient: 2 } })
    assert.equal(again.headers['x-price-change-batch'], retry.headers['x-price-change-batch'])
    assert.equal(await priceSum(ctx.db), before * 2n)
  })
})
