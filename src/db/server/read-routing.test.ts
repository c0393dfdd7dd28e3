import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { pricesPath } from '../../../test/fixtures/glass-prices.js'
import { buildTestApp } from '../../../test/harness.js'
import { type ReplicatedPair, standbyUnavailable, startReplicatedPair } from '../../../test/standby.js'
import { type Database, openDatabase } from '../database.js'

/*
 * Instances on a real primary and its streaming standby, all writing to the primary and reading from the standby
 * (DATABASE_READ_URL): A, which makes the writes, and B, once answering from its search index and once from SQL
 * alone. After every write A answered, the next search and listing of A and B show it, whether the standby
 * replays, is paused (a lagging standby), is down, or the primary is down; an instance reading the primary alone
 * tells what is true. Only the server: the embedded database has no standby.
 */

const model = 'RB3025 AVIATOR'
const entry = { manufacturer: 'Luxottica', brand: 'Ray-Ban', model, price: 11990, purchase: 4800 }

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe('reads from a streaming standby', { skip: standbyUnavailable }, () => {
  let pair: ReplicatedPair
  const databases: Database[] = []
  const apps: FastifyInstance[] = []
  /** Reads the primary alone: the truth the others are compared with. */
  let oracle: FastifyInstance
  let a: FastifyInstance
  /** B: reads on the standby, answered from the index (`indexed`) and from SQL alone (`sql`). */
  const b: Record<'indexed' | 'sql', FastifyInstance> = {} as never
  let bDb: Record<'indexed' | 'sql', Database>

  before(async () => {
    pair = await startReplicatedPair()
    const open = async (readUrl?: string) => {
      const db = await openDatabase({ url: pair.primaryUrl, readUrl, poolSize: 4, readMaxWaitMs: 200 })
      databases.push(db)
      return db
    }
    oracle = await buildTestApp(await open(), { SEARCH_INDEX: 'off' })
    a = await buildTestApp(await open(pair.standbyUrl))
    bDb = { indexed: await open(pair.standbyUrl), sql: await open(pair.standbyUrl) }
    b.indexed = await buildTestApp(bDb.indexed)
    b.sql = await buildTestApp(bDb.sql, { SEARCH_INDEX: 'off' })
    apps.push(oracle, a, b.indexed, b.sql)
  })
  after(async () => {
    for (const app of apps) await app.close().catch(() => {})
    for (const db of databases) await db.close().catch(() => {})
    pair?.close()
  })

  const listing = async (app: FastifyInstance) => {
    const response = await app.inject({ method: 'GET', url: `${pricesPath}/list?model=${encodeURIComponent(model)}` })
    assert.equal(response.statusCode, 200, response.body)
    return response.json() as { totalElements: number; content: { id: number; price: number }[] }
  }
  const search = async (app: FastifyInstance) => {
    const response = await app.inject({
      method: 'POST',
      url: '/api/v2/good/nomenclature/search/glasses',
      payload: { byPriceList: true, model },
    })
    assert.equal(response.statusCode, 200, response.body)
    return response.json() as { totalElements: number }
  }
  const create = async (price: number) => {
    const response = await a.inject({ method: 'POST', url: pricesPath, payload: { ...entry, price } })
    assert.equal(response.statusCode, 200, response.body)
    return response.json() as { id: number }
  }
  const update = async (id: number, price: number) => {
    const response = await a.inject({ method: 'PUT', url: `${pricesPath}/${id}`, payload: { ...entry, price } })
    assert.equal(response.statusCode, 200, response.body)
  }
  const remove = async (id: number) => {
    const response = await a.inject({ method: 'DELETE', url: `${pricesPath}/${id}` })
    assert.ok(response.statusCode < 300, response.body)
  }
  /** A's and B's answers equal the primary's, and show the entry at `price` (or no entry). */
  const assertBShows = async (price: number | undefined) => {
    const truth = await listing(oracle)
    assert.deepEqual(
      truth.content.map((item) => item.price),
      price === undefined ? [] : [price],
    )
    for (const app of [a, ...Object.values(b)]) {
      assert.deepEqual(await listing(app), truth)
      assert.deepEqual(await search(app), await search(oracle))
    }
  }
  const readiness = async (app: FastifyInstance) => {
    const response = await app.inject({ method: 'GET', url: '/actuator/health/readiness' })
    const body = response.json()
    // The search index's component is the same with or without a replica (operations-routes.test.ts): the servers here.
    assert.ok(body.components.searchIndex, 'readiness shows the search index')
    delete body.components.searchIndex
    return { code: response.statusCode, body }
  }
  const replicaReads = () => bDb.indexed.readRouting!.stats.reads.replica + bDb.sql.readRouting!.stats.reads.replica

  test('while the standby replays, B shows each write of A in its next listing and search, read on the standby', async () => {
    const before = replicaReads()
    const { id } = await create(11990)
    await assertBShows(11990)
    await update(id, 12990)
    await assertBShows(12990)
    await remove(id)
    await assertBShows(undefined)
    assert.ok(replicaReads() > before, 'the standby answered reads')
    for (const app of Object.values(b)) {
      assert.deepEqual((await readiness(app)).body, {
        status: 'UP',
        components: { primary: { status: 'UP' }, readReplica: { status: 'UP' } },
      })
    }
  })

  test('with the replay paused, B never answers stale: it reads from the primary, and from the standby again once resumed', async () => {
    await pair.query('standby', 'SELECT pg_wal_replay_pause()')
    try {
      const lagging = bDb.indexed.readRouting!.stats.reads.lagging
      const { id } = await create(13990)
      await assertBShows(13990)
      await update(id, 14990)
      await assertBShows(14990)
      assert.ok(bDb.indexed.readRouting!.stats.reads.lagging > lagging, 'reads went to the primary')
      assert.ok(bDb.indexed.readRouting!.stats.maxLagBytes > 0, 'the lag was seen')
      const metrics = (await b.indexed.inject({ method: 'GET', url: '/actuator/prometheus' })).body
      assert.match(metrics, /^optics_read_routing_total\{target="lagging"\} [1-9]/m)
      assert.match(metrics, /^optics_read_replica_lag_bytes [1-9]/m)
      await remove(id)
      await assertBShows(undefined)
    } finally {
      await pair.query('standby', 'SELECT pg_wal_replay_resume()')
    }
    const before = replicaReads()
    await assertBShows(undefined)
    assert.ok(replicaReads() > before, 'the standby answers again')
  })

  test('the standby down: reads answer from the primary at once, readiness shows it, and the standby takes reads again when back', async () => {
    pair.stop('standby')
    try {
      const { id } = await create(15990)
      const started = performance.now()
      await assertBShows(15990)
      assert.ok(performance.now() - started < 30_000, 'within one request timeout')
      for (const app of Object.values(b)) {
        assert.deepEqual(await readiness(app), {
          code: 200,
          body: { status: 'UP', components: { primary: { status: 'UP' }, readReplica: { status: 'DOWN' } } },
        })
        assert.equal(bDb.indexed.readRouting!.stats.replicaUp, false)
      }
      await remove(id)
      await assertBShows(undefined)
    } finally {
      pair.start('standby')
    }
    await waitFor('the standby back in the routing', async () => {
      await assertBShows(undefined)
      return bDb.indexed.readRouting!.stats.replicaUp && bDb.sql.readRouting!.stats.replicaUp
    })
    const before = replicaReads()
    await assertBShows(undefined)
    assert.ok(replicaReads() > before, 'the standby answers again')
    assert.equal((await readiness(b.indexed)).body.components.readReplica.status, 'UP')
  })

  test('the primary down: B keeps answering searches and listings from the standby, and writes answer 503 with Retry-After', async () => {
    const { id } = await create(16990)
    await assertBShows(16990)
    const shown = { listing: await listing(b.sql), search: await search(b.sql) }
    pair.stop('primary')
    try {
      for (const app of Object.values(b)) {
        assert.deepEqual(await listing(app), shown.listing)
        assert.deepEqual(await search(app), shown.search)
        const write = await app.inject({ method: 'PUT', url: `${pricesPath}/${id}`, payload: { ...entry, price: 1 } })
        assert.equal(write.statusCode, 503)
        assert.ok(write.headers['retry-after'], 'Retry-After is set')
        assert.match(String(write.headers['content-type']), /^application\/problem\+json/)
        assert.deepEqual(await readiness(app), {
          code: 200,
          body: { status: 'UP', components: { primary: { status: 'DOWN' }, readReplica: { status: 'UP' } } },
        })
      }
    } finally {
      pair.start('primary')
    }
    await waitFor('the primary back', async () => (await readiness(b.sql)).body.components.primary.status === 'UP')
    await update(id, 17990)
    await assertBShows(17990)
  })
})
