import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, test } from 'node:test'
import { Worker } from 'node:worker_threads'
import { sql } from 'kysely'
import packageJson from '../../package.json' with { type: 'json' }
import { clearGlassPrices, pricesPath, seedEntries } from '../../test/fixtures/glass-prices.js'
import { buildTestApp, eachDatabase, poll, testConfig, useTestApp } from '../../test/harness.js'
import { buildApp } from '../app.js'

/*
 * The actuator endpoints (probes, info, Prometheus metrics) and request ids, through the API. The metrics are
 * read back from the text a Prometheus server scrapes.
 */

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The value of one sample of the Prometheus text: the series `name` whose labels include `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!match || match[1] !== name) continue
    const present = Object.fromEntries(
      [...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((label) => [label[1], label[2]]),
    )
    if (Object.entries(labels).every(([key, value]) => present[key] === value)) return Number(match[3])
  }
  return undefined
}

eachDatabase('operations: probes, info and metrics', (ctx) => {
  const app = useTestApp(ctx)

  const scrape = async (target = app()) => {
    const response = await target.inject({ url: '/actuator/prometheus' })
    assert.equal(response.statusCode, 200)
    return response.body
  }

  describe('probes', () => {
    for (const path of ['/actuator/health', '/actuator/health/liveness', '/actuator/health/readiness']) {
      test(`${path} answers UP while the database answers`, async () => {
        const response = await app().inject({ url: path })
        assert.equal(response.statusCode, 200)
        const { components, ...health } = response.json()
        assert.deepEqual(health, { status: 'UP' })
        // Readiness shows the search index beside (this app never started its first load: it loads on demand).
        if (path.endsWith('readiness')) assert.equal(components.searchIndex.status, 'UP')
        else assert.equal(components, undefined)
      })
    }

    test('/actuator/info names the service, its version, the database driver and the uptime', async () => {
      const response = await app().inject({ url: '/actuator/info' })
      assert.equal(response.statusCode, 200)
      const info = response.json()
      assert.deepEqual(info.app, {
        name: packageJson.name,
        version: packageJson.version,
        description: packageJson.description,
      })
      assert.deepEqual(info.database, { driver: ctx.target, readReplica: false })
      assert.equal(info.node.version, process.versions.node)
      assert.ok(Number.isInteger(info.uptimeSeconds) && info.uptimeSeconds >= 0)
      assert.ok(Date.parse(info.startedAt) <= Date.now())
    })
  })

  describe('Prometheus metrics', () => {
    test('the scrape is the Prometheus text format with the process metrics and the service version', async () => {
      const response = await app().inject({ url: '/actuator/prometheus' })
      assert.equal(response.statusCode, 200)
      assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/)
      const text = response.body
      assert.ok((sample(text, 'process_cpu_user_seconds_total') ?? -1) >= 0)
      assert.ok((sample(text, 'nodejs_heap_size_used_bytes') ?? 0) > 0)
      assert.equal(sample(text, 'optics_info', { version: packageJson.version, driver: ctx.target }), 1)
      assert.equal(sample(text, 'optics_database_up'), 1)
    })

    test('the search index says how many answers it gave and how its tables were loaded', async () => {
      await app().searchIndex.catchUp()
      const before = await scrape()
      const fromIndex = sample(before, 'optics_search_index_answers_total', { source: 'index' }) ?? 0
      const suggested = await app().inject({
        url: '/api/v2/good/nomenclature/suggest?kind=glasses&field=brand&byPriceList=false&q=ra',
      })
      assert.equal(suggested.statusCode, 200)
      const after = await scrape()
      assert.equal(sample(after, 'optics_search_index_answers_total', { source: 'index' }), fromIndex + 1)
      assert.ok((sample(after, 'optics_search_index_loads_total', { how: 'read' }) ?? 0) >= 1)
      assert.equal(sample(after, 'optics_search_index_kinds', { state: 'loaded' }), 7)
      assert.equal(sample(after, 'optics_search_index_kinds', { state: 'reading' }), 0)
      // Given by the index's own thread (SEARCH_THREADS is 1 by default), whose heap is measured.
      assert.equal(
        sample(after, 'optics_search_index_answers_by_thread_total', { thread: 'index' }),
        sample(after, 'optics_search_index_answers_total', { source: 'index' }),
      )
      assert.equal(sample(after, 'optics_search_index_answers_by_thread_total', { thread: 'search' }) ?? 0, 0)
      const heap = sample(after, 'optics_search_index_thread_heap_bytes', { thread: 'index' })
      // Node.js 24 and recent 22 (22.23 was checked) measure a worker's heap; an older one leaves no sample, not a wrong one.
      if (typeof Worker.prototype.getHeapStatistics === 'function') assert.ok((heap ?? 0) > 1_000_000, `heap ${heap}`)
      else assert.equal(heap, undefined)
    })

    test("the service thread's event-loop delay is measured: its largest and 99th percentile stall", async () => {
      const text = await scrape()
      for (const name of ['nodejs_eventloop_lag_max_seconds', 'nodejs_eventloop_lag_p99_seconds']) {
        const value = sample(text, name)
        assert.ok(value !== undefined && value >= 0 && value < 60, `${name} = ${value}`)
      }
    })

    test('requests are counted and timed by route pattern and status, never by raw URL', async () => {
      await app().inject({ url: `${pricesPath}/912345` })
      await app().inject({ url: `${pricesPath}/912346` })
      await app().inject({ url: '/no/such/page-7731' })
      await app().inject({
        method: 'POST',
        url: '/api/v2/good/nomenclature/search/glasses',
        payload: { byPriceList: true },
      })
      const text = await scrape()
      const byId = { method: 'GET', uri: '/api/v2/glasses/prices/{id}', status: '404', outcome: 'CLIENT_ERROR' }
      assert.equal(sample(text, 'http_server_requests_seconds_count', byId), 2)
      assert.ok((sample(text, 'http_server_requests_seconds_sum', byId) ?? -1) >= 0)
      assert.equal(sample(text, 'http_server_requests_seconds_bucket', { ...byId, le: '+Inf' }), 2)
      assert.equal(sample(text, 'http_server_requests_seconds_count', { uri: 'NOT_FOUND', status: '404' }), 1)
      assert.equal(
        sample(text, 'http_server_requests_seconds_count', {
          method: 'POST',
          uri: '/api/v2/good/nomenclature/search/glasses',
          status: '200',
          outcome: 'SUCCESS',
        }),
        1,
      )
      assert.doesNotMatch(text, /912345|page-7731/)
    })

    test('each application counts its own requests', async () => {
      const labels = { uri: '/actuator/info', status: '200' }
      const before = sample(await scrape(), 'http_server_requests_seconds_count', labels) ?? 0
      const other = await buildTestApp(ctx.db)
      try {
        for (let i = 0; i < 3; i++) await other.inject({ url: '/actuator/info' })
        assert.equal(sample(await scrape(other), 'http_server_requests_seconds_count', labels), 3)
        assert.equal(sample(await scrape(), 'http_server_requests_seconds_count', labels) ?? 0, before)
      } finally {
        await other.close()
      }
    })

    test('the database pool is reported: open, idle, waiting and largest number of connections', async () => {
      const text = await scrape()
      const max = sample(text, 'optics_db_pool_max_connections', { pool: 'primary' })
      assert.equal(max, ctx.target === 'pglite' ? 1 : 5)
      const total = sample(text, 'optics_db_pool_connections', { pool: 'primary' }) ?? -1
      const idle = sample(text, 'optics_db_pool_idle_connections', { pool: 'primary' }) ?? -1
      assert.ok(total >= 1 && total <= max!, `total ${total}`)
      assert.ok(idle >= 0 && idle <= total, `idle ${idle}`)
      assert.equal(sample(text, 'optics_db_pool_waiting_requests', { pool: 'primary' }), 0)
    })

    test('a written kind shows as stale, with the seconds since its matview was last refreshed', async () => {
      await clearGlassPrices(ctx.db)
      await seedEntries(ctx.db, [{ manufacturer: 'M', brand: 'B', model: 'Stale 1', price: 100, purchase: 50 }])
      await sql`UPDATE catalog_state SET refreshed_at = now() - interval '1 hour' WHERE kind = 'glasses'`.execute(
        ctx.db.primary,
      )
      const text = await scrape()
      assert.equal(sample(text, 'optics_matview_stale', { kind: 'glasses' }), 1)
      const seconds = sample(text, 'optics_matview_stale_seconds', { kind: 'glasses' }) ?? 0
      assert.ok(seconds >= 3600 && seconds < 3600 + 600, `stale for ${seconds} s`)
      assert.equal(sample(text, 'optics_matview_stale', { kind: 'accessories' }), 0)
      assert.equal(sample(text, 'optics_matview_stale_seconds', { kind: 'accessories' }), 0)
    })

    test("a background refresh is timed per kind in the refreshing application's histogram and clears staleness", async () => {
      await seedEntries(ctx.db, [{ manufacturer: 'M', brand: 'B', model: 'Stale 2', price: 100, purchase: 50 }])
      const refreshing = await buildApp({
        config: testConfig({ MATVIEW_REFRESH: 'auto', MATVIEW_REFRESH_DELAY_MS: '0' }),
        db: ctx.db,
        logger: false,
      })
      try {
        await refreshing.ready()
        const text = await poll(
          () => scrape(refreshing),
          (scraped) => (sample(scraped, 'optics_matview_refresh_seconds_count', { kind: 'glasses' }) ?? 0) >= 1,
          'the glasses matview refresh',
        )
        assert.ok((sample(text, 'optics_matview_refresh_seconds_sum', { kind: 'glasses' }) ?? -1) >= 0)
        const fresh = await poll(
          () => scrape(refreshing),
          (scraped) => sample(scraped, 'optics_matview_stale', { kind: 'glasses' }) === 0,
          'the glasses matview to be fresh',
        )
        assert.equal(sample(fresh, 'optics_matview_stale_seconds', { kind: 'glasses' }), 0)
        // The application without a refresher refreshed nothing.
        assert.equal(sample(await scrape(), 'optics_matview_refresh_seconds_count', { kind: 'glasses' }), undefined)
      } finally {
        await refreshing.close()
        await clearGlassPrices(ctx.db)
      }
    })
  })

  describe('request ids', () => {
    test('a sane X-Request-Id is kept and echoed, on success and on errors', async () => {
      for (const [url, status] of [
        ['/actuator/health', 200],
        [`${pricesPath}/999999`, 404],
        [`${pricesPath}/abc`, 400],
        ['/nothing/here', 404],
      ] as const) {
        const response = await app().inject({ url, headers: { 'x-request-id': 'front-end.42:a/b+c=' } })
        assert.equal(response.statusCode, status, url)
        assert.equal(response.headers['x-request-id'], 'front-end.42:a/b+c=', url)
      }
    })

    test('without X-Request-Id each response carries a new UUID', async () => {
      const first = await app().inject({ url: '/actuator/health' })
      const second = await app().inject({
        method: 'POST',
        url: pricesPath,
        headers: { 'content-type': 'application/json' },
        payload: '{',
      })
      assert.equal(second.statusCode, 400)
      assert.match(String(first.headers['x-request-id']), uuid)
      assert.match(String(second.headers['x-request-id']), uuid)
      assert.notEqual(first.headers['x-request-id'], second.headers['x-request-id'])
    })

    test('an X-Request-Id that is too long or has odd characters is replaced by a UUID', async () => {
      for (const given of ['x'.repeat(129), 'two words', 'quote"d', 'semi;colon', 'ид-запроса', '']) {
        const response = await app().inject({ url: '/actuator/health', headers: { 'x-request-id': given } })
        assert.match(String(response.headers['x-request-id']), uuid, JSON.stringify(given))
      }
      const longest = 'x'.repeat(128)
      const kept = await app().inject({ url: '/actuator/health', headers: { 'x-request-id': longest } })
      assert.equal(kept.headers['x-request-id'], longest)
    })

    test('the logs are JSON lines, and every line of a request carries its id', async () => {
      const lines: Record<string, unknown>[] = []
      const stream = new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
          done()
        },
      })
      const logged = await buildApp({ config: testConfig(), db: ctx.db, logger: { level: 'info', stream } })
      try {
        await logged.inject({ url: `${pricesPath}/999999`, headers: { 'x-request-id': 'trace-7' } })
        await logged.inject({ url: '/actuator/health', headers: { 'x-request-id': 'bad\tid' } })
        const traced = lines.filter((line) => line.reqId === 'trace-7')
        assert.deepEqual(
          traced.map((line) => line.msg),
          ['incoming request', 'request completed'],
        )
        assert.deepEqual(traced[1]?.res, { statusCode: 404 })
        assert.ok(lines.every((line) => typeof line.level === 'number' && typeof line.time === 'number'))
        assert.ok(!JSON.stringify(lines).includes('bad\\tid'), 'a rejected id reached the logs')
        assert.ok(lines.some((line) => uuid.test(String(line.reqId))))
      } finally {
        await logged.close()
      }
    })
  })
})
