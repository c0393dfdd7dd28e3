import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, test } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { pricesPath } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, testConfig, useTestApp } from '../../test/harness.js'
import { buildApp } from '../app.js'

/*
 * Spring Boot Actuator's /actuator/metrics and /actuator/loggers, through the API: the metrics read back as Spring
 * shows Micrometer's meters, and log levels changed at run time, seen in the log lines written after the change.
 */

interface Metric {
  name: string
  description: string | null
  baseUnit: string | null
  measurements: { statistic: string; value: number }[]
  availableTags: { tag: string; values: string[] }[]
}

const statistic = (metric: Metric, name: string) =>
  metric.measurements.find((measurement) => measurement.statistic === name)?.value

function assertProblem(response: LightMyRequestResponse, status: number, field?: string): void {
  assert.equal(response.statusCode, status, response.body)
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
  if (field)
    assert.deepEqual(
      response.json().errors.map((error: { field: string }) => error.field),
      [field],
    )
}

eachDatabase('actuator: metrics as Spring Boot shows them', (ctx) => {
  const app = useTestApp(ctx)
  const metric = async (name: string, query = ''): Promise<Metric> => {
    const response = await app().inject({ url: `/actuator/metrics/${name}${query}` })
    assert.equal(response.statusCode, 200, response.body)
    return response.json()
  }

  test('the names are sorted and hold the requests, the process and the service, named as Micrometer', async () => {
    await app().inject({ url: '/actuator/info' })
    const response = await app().inject({ url: '/actuator/metrics' })
    assert.equal(response.statusCode, 200)
    const { names } = response.json() as { names: string[] }
    assert.deepEqual(names, [...names].sort())
    for (const name of ['http.server.requests', 'process.cpu.user', 'nodejs.heap.size.used', 'optics.database.up']) {
      assert.ok(names.includes(name), name)
    }
    assert.ok(!names.some((name) => name.includes('_')), 'no Prometheus names')
  })

  test('requests are a timer: COUNT, TOTAL_TIME and MAX in seconds, narrowed by tags', async () => {
    for (const id of [912345, 912346, 912347]) await app().inject({ url: `${pricesPath}/${id}` })
    const uri = `uri:${pricesPath}/{id}`
    const byId = await metric('http.server.requests', `?tag=${encodeURIComponent(uri)}&tag=status:404`)
    assert.equal(byId.name, 'http.server.requests')
    assert.equal(byId.baseUnit, 'seconds')
    assert.match(byId.description ?? '', /HTTP requests/)
    assert.deepEqual(
      byId.measurements.map((measurement) => measurement.statistic),
      ['COUNT', 'TOTAL_TIME', 'MAX'],
    )
    assert.equal(statistic(byId, 'COUNT'), 3)
    const total = statistic(byId, 'TOTAL_TIME') ?? -1
    const max = statistic(byId, 'MAX') ?? -1
    assert.ok(max > 0 && max <= total, `max ${max}, total ${total}`)
    // The tags asked for are not offered again; the others are, with the values of the series kept.
    assert.deepEqual(byId.availableTags, [
      { tag: 'method', values: ['GET'] },
      { tag: 'outcome', values: ['CLIENT_ERROR'] },
    ])

    const all = await metric('http.server.requests')
    assert.ok((statistic(all, 'COUNT') ?? 0) > 3, 'every request counts without tags')
    assert.ok((statistic(all, 'MAX') ?? 0) >= max)
    const uris = all.availableTags.find((tag) => tag.tag === 'uri')?.values ?? []
    assert.ok(uris.includes(`${pricesPath}/{id}`) && uris.includes('/actuator/info'), uris.join(' '))
    assert.ok(!uris.some((value) => value.includes('912345')), 'route patterns, never raw URLs')
  })

  test('a gauge is a VALUE summed over its series, a counter a COUNT, with their base units', async () => {
    const up = await metric('optics.database.up')
    assert.deepEqual(up.measurements, [{ statistic: 'VALUE', value: 1 }])
    assert.deepEqual(up.availableTags, [])
    const pool = await metric('optics.db.pool.max.connections', '?tag=pool:primary')
    assert.deepEqual(pool.measurements, [{ statistic: 'VALUE', value: ctx.target === 'pglite' ? 1 : 5 }])
    const heap = await metric('nodejs.heap.size.used')
    assert.equal(heap.baseUnit, 'bytes')
    assert.ok((statistic(heap, 'VALUE') ?? 0) > 0)
    const cpu = await metric('process.cpu.user')
    assert.equal(cpu.baseUnit, 'seconds')
    assert.ok((statistic(cpu, 'COUNT') ?? -1) >= 0)
  })

  test('an unknown name, or tags no series has, is a 404 problem; a tag without a colon a 400 naming tag', async () => {
    assertProblem(await app().inject({ url: '/actuator/metrics/no.such.metric' }), 404)
    assertProblem(await app().inject({ url: '/actuator/metrics/http.server.requests?tag=method:BREW' }), 404)
    assertProblem(await app().inject({ url: '/actuator/metrics/http.server.requests?tag=method' }), 400, 'tag')
    assertProblem(await app().inject({ url: '/actuator/metrics/http.server.requests?tag=:GET' }), 400, 'tag')
  })
})

eachDatabase('actuator: log levels changed at run time', (ctx) => {
  let app: FastifyInstance
  const lines: Record<string, unknown>[] = []
  before(async () => {
    const stream = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line))
        done()
      },
    })
    app = await buildApp({ config: testConfig(), db: ctx.db, logger: { level: 'info', stream } })
    await app.ready()
  })
  after(() => app?.close())

  const setLevel = (name: string, configuredLevel: unknown) =>
    app.inject({ method: 'POST', url: `/actuator/loggers/${name}`, payload: { configuredLevel } })
  const levelsOf = async (name: string) => (await app.inject({ url: `/actuator/loggers/${name}` })).json()
  /** The messages logged for one request, by its id. */
  const loggedFor = async (url: string): Promise<unknown[]> => {
    const id = `log-${Math.random().toString(36).slice(2)}`
    await app.inject({ url, headers: { 'x-request-id': id } })
    return lines.filter((line) => line.reqId === id).map((line) => line.msg)
  }

  test('the list names the levels, ROOT at the start level and the named loggers with their prefixes', async () => {
    const response = await app.inject({ url: '/actuator/loggers' })
    assert.equal(response.statusCode, 200)
    const body = response.json()
    assert.deepEqual(body.levels, ['OFF', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE'])
    assert.deepEqual(body.loggers.ROOT, { configuredLevel: 'INFO', effectiveLevel: 'INFO' })
    assert.deepEqual(body.loggers['optics.catalog.search-index'], { configuredLevel: null, effectiveLevel: 'INFO' })
    assert.deepEqual(body.loggers['optics.catalog'], { configuredLevel: null, effectiveLevel: 'INFO' })
    assert.equal(Object.keys(body.loggers)[0], 'ROOT')
  })

  test("ROOT set to WARN silences the requests' info lines at once; null brings them back", async () => {
    assert.deepEqual(await loggedFor('/actuator/health'), ['incoming request', 'request completed'])
    const set = await setLevel('ROOT', 'WARN')
    assert.equal(set.statusCode, 204)
    assert.equal(set.body, '')
    assert.deepEqual(await levelsOf('ROOT'), { configuredLevel: 'WARN', effectiveLevel: 'WARN' })
    assert.deepEqual(await loggedFor('/actuator/health'), [])
    assert.equal((await levelsOf('optics.glass-prices.write-jobs')).effectiveLevel, 'WARN')
    assert.equal((await setLevel('ROOT', null)).statusCode, 204)
    assert.deepEqual(await levelsOf('ROOT'), { configuredLevel: 'INFO', effectiveLevel: 'INFO' })
    assert.deepEqual(await loggedFor('/actuator/health'), ['incoming request', 'request completed'])
  })

  test('a level set on a prefix holds for the loggers under it, in any case, until reset', async () => {
    assert.equal((await setLevel('optics.catalog', 'debug')).statusCode, 204)
    assert.deepEqual(await levelsOf('optics.catalog'), { configuredLevel: 'DEBUG', effectiveLevel: 'DEBUG' })
    assert.deepEqual(await levelsOf('optics.catalog.search-index'), { configuredLevel: null, effectiveLevel: 'DEBUG' })
    assert.equal((await levelsOf('optics.glass-prices.write-jobs')).effectiveLevel, 'INFO')
    // The named logger's own level follows: a child set to TRACE keeps it while its parent goes quiet.
    assert.equal((await setLevel('optics.catalog.search-index', 'TRACE')).statusCode, 204)
    assert.equal((await setLevel('optics', 'OFF')).statusCode, 204)
    assert.equal((await levelsOf('optics.catalog.search-index')).effectiveLevel, 'TRACE')
    assert.equal((await levelsOf('optics.glass-prices.scheduled-changes')).effectiveLevel, 'OFF')
    for (const name of ['optics', 'optics.catalog', 'optics.catalog.search-index']) await setLevel(name, null)
    assert.deepEqual(await levelsOf('optics.catalog.search-index'), { configuredLevel: null, effectiveLevel: 'INFO' })
  })

  test("a level that is none of Spring's is a 400 naming configuredLevel; an unknown logger a 404", async () => {
    for (const level of ['LOUD', 'FINE', '', 3]) assertProblem(await setLevel('ROOT', level), 400, 'configuredLevel')
    assertProblem(
      await app.inject({ method: 'POST', url: '/actuator/loggers/ROOT', payload: {} }),
      400,
      'configuredLevel',
    )
    assertProblem(await setLevel('no.such.logger', 'DEBUG'), 404)
    assertProblem(await app.inject({ url: '/actuator/loggers/no.such.logger' }), 404)
    assert.deepEqual(await levelsOf('ROOT'), { configuredLevel: 'INFO', effectiveLevel: 'INFO' })
  })
})
