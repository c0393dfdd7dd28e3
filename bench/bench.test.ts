import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, test } from 'node:test'
import { openServerSchema } from '../test/harness.js'
import { type BenchReport, runBench } from './bench.js'
import { writeReport } from './report.js'

/*
 * A smoke run of the benchmark harness at a tiny scale on both databases: every scenario runs on both sides
 * without an error, and the report shows each with its floor ratio. (The figures themselves mean nothing here.)
 * The cold mix runs 300 requests at 1 and 2 connections: each sent exactly once, on both sides.
 */

const COLD_REQUESTS = 300

const scenarioIds = [
  'cold-mix-1-connection',
  'cold-mix-2-connections',
  'a-glasses-matview',
  'a-glasses-price-list',
  'a-lenses-matview',
  'a-lenses-price-list',
  'b-glasses',
  'b-lenses',
  'c-lenses-index-diameter',
  'c-lenses-prescription',
  'd-listing',
  'e-read-by-id',
  'i-facets',
  'i-suggest',
  'f-bulk-change',
  'k-bulk-under-load',
  'j-write-then-search',
  'g-import',
  'h-refresh',
]

function checkReport(report: BenchReport, work: string): void {
  assert.deepEqual(
    report.scenarios.map((scenario) => scenario.id),
    scenarioIds,
  )
  for (const scenario of report.scenarios) {
    for (const side of [scenario.service, scenario.floor]) {
      assert.equal(side.errors, 0, `${scenario.id}: no request failed`)
      assert.ok(side.throughput > 0, `${scenario.id}: measured`)
    }
    assert.ok(scenario.ratio > 0, `${scenario.id}: a ratio to the floor`)
    if (scenario.type === 'once') assert.ok((scenario.rows ?? 0) > 0, `${scenario.id}: rows written`)
    if (scenario.id.startsWith('cold-mix')) {
      // Every request of the run's list answered once, no more, on both sides, at its own concurrency.
      assert.equal(scenario.requestsPerRun, COLD_REQUESTS)
      assert.equal(scenario.connections, scenario.id === 'cold-mix-1-connection' ? 1 : 2)
      for (const run of [...scenario.runs.service, ...scenario.runs.floor]) assert.equal(run.requests, COLD_REQUESTS)
    }
    if (scenario.type === 'load' && process.platform === 'linux') {
      // Processor time per request: the service's process and, on the server, PostgreSQL's on one side; the
      // driver's (and the server's) on the other.
      const service = scenario.service.cpuPerRequestUs
      const floor = scenario.floor.cpuPerRequestUs
      assert.ok(service && floor, `${scenario.id}: processor time measured`)
      assert.ok((service.service ?? -1) >= 0 && service.client >= 0 && floor.client >= 0, scenario.id)
      assert.equal(floor.service, null, `${scenario.id}: no service on the floor side`)
      // The server's time where its processes are visible here (both sides alike); the embedded one has none apart.
      assert.equal(service.database === null, floor.database === null, `${scenario.id}: database time on both sides`)
      if (report.driver === 'pglite') assert.equal(service.database, null, scenario.id)
    }
  }
  if (process.platform === 'linux') {
    // Over all load scenarios together the service's process did measurable work.
    const serviceTotal = report.scenarios.reduce((sum, s) => sum + (s.service.cpuPerRequestUs?.service ?? 0), 0)
    assert.ok(serviceTotal > 0, 'the service used processor time')
  }
  assert.equal(report.scenarios.find((s) => s.id === 'g-import')?.rows, report.catalogue.lenses_sku)
  // The bulk change under load: reads measured before and during it, and every PUT on its entries answered 200, 412
  // or 409, never 503.
  const underLoad = report.scenarios.find((s) => s.id === 'k-bulk-under-load')?.details?.figures as
    | { readsPerRun: { before: number; during: number }; readErrors: number; putStatuses: Record<string, number> }
    | undefined
  assert.ok(underLoad, 'k-bulk-under-load: its reads and writes reported')
  assert.ok(underLoad.readsPerRun.before > 0 && underLoad.readsPerRun.during > 0, JSON.stringify(underLoad))
  assert.equal(underLoad.readErrors, 0)
  const statuses = Object.keys(underLoad.putStatuses)
  assert.ok(statuses.length > 0 && statuses.every((status) => ['200', '412', '409'].includes(status)), statuses.join())
  assert.ok(report.peakRssMiB === null || report.peakRssMiB > 0)

  const file = writeReport(report, join(work, 'results'), join(work, 'REPORT.md'))
  assert.equal(JSON.parse(readFileSync(file, 'utf8')).commit, report.commit)
  const markdown = readFileSync(join(work, 'REPORT.md'), 'utf8')
  for (const scenario of report.scenarios) assert.ok(markdown.includes(`| ${scenario.title} |`), scenario.id)
  assert.ok(markdown.includes('** (medians of the runs): the change of'), 'the bulk change under load: its figures')
  assert.equal(report.searchIndex, 'on')
  assert.ok(!markdown.includes('Failed requests'))
}

const tiny = {
  scale: 150,
  seconds: 0.4,
  warmupSeconds: 0,
  connections: 2,
  runs: 1,
  only: [],
  reuse: false,
  coldRequests: COLD_REQUESTS,
}
const quiet = () => {}

describe('benchmark harness, smoke run [pglite]', () => {
  test('every scenario runs against its floor and lands in the report', async () => {
    const work = mkdtempSync(join(tmpdir(), 'optics-bench-test-'))
    try {
      const report = await runBench({ ...tiny, dataDir: join(work, 'data'), log: quiet })
      assert.equal(report.driver, 'pglite')
      checkReport(report, work)
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
  })
})

const serverUrl = process.env.TEST_DATABASE_URL
describe('benchmark harness, smoke run [postgres]', {
  skip: serverUrl ? false : 'TEST_DATABASE_URL is not set: the PostgreSQL half is skipped',
}, () => {
  test('every scenario runs against its floor and lands in the report', async () => {
    const work = mkdtempSync(join(tmpdir(), 'optics-bench-test-'))
    const { db, schema, cleanup } = await openServerSchema(serverUrl as string)
    await db.close()
    const url = new URL(serverUrl as string)
    url.searchParams.set('options', `-c search_path=${schema},public`)
    try {
      const report = await runBench({ ...tiny, url: url.toString(), dataDir: join(work, 'data'), log: quiet })
      assert.equal(report.driver, 'postgres')
      checkReport(report, work)
    } finally {
      await cleanup()
      rmSync(work, { recursive: true, force: true })
    }
  })
})
