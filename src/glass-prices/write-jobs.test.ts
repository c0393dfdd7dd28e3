import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import {
  changeCount,
  clearGlassPrices,
  numberedEntries,
  pricesPath,
  seedEntries,
  slowPriceUpdates,
  storedEntries,
  waitFor,
} from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'

/*
 * Long writes as jobs (`Prefer: respond-async`): 202 with Location, the job polled to its end, its result the
 * synchronous call's answer, its change in the change log; failures and lost instances reported as problems.
 */

const doubling = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 2, round: 'WHOLE' }
const async = { prefer: 'respond-async, wait=0' }

eachDatabase('write jobs', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: async () => {
      await clearGlassPrices(ctx.db)
      await sql`DELETE FROM write_job`.execute(ctx.db.primary)
    },
  })

  /** Polls the job the 202 names until it has ended; its last state. */
  const finished = async (location: string) => {
    let job: Record<string, any> = {}
    await waitFor(async () => {
      const response = await app().inject({ method: 'GET', url: location })
      assert.equal(response.statusCode, 200, response.body)
      job = response.json()
      return job.state !== 'running'
    })
    return job
  }

  test('a bulk change with Prefer: respond-async answers 202 with the job, which ends with the 200 answer', async () => {
    await seedEntries(ctx.db, numberedEntries('Job', 3))
    const accepted = await app().inject({
      method: 'POST',
      url: `${pricesPath}/list?brand=Job`,
      headers: async,
      payload: doubling,
    })
    assert.equal(accepted.statusCode, 202, accepted.body)
    assert.equal(accepted.headers['preference-applied'], 'respond-async')
    const location = String(accepted.headers.location)
    assert.match(location, new RegExp(`^${pricesPath}/jobs/\\d+$`))
    assert.equal(accepted.json().operation, 'bulk-change')
    const job = await finished(location)
    assert.equal(job.state, 'succeeded', JSON.stringify(job))
    assert.equal(job.result.status, 200)
    assert.equal(job.result.headers['x-changed-count'], '3')
    assert.equal(job.result.body, null)
    assert.equal(String(job.batch), job.result.headers['x-price-change-batch'])
    assert.deepEqual(
      (await storedEntries(ctx.db)).map((row) => row.price),
      ['200.00', '400.00', '600.00'],
    )
    // The change log shows the job's change.
    const changes = (await app().inject({ method: 'GET', url: `${pricesPath}/changes` })).json()
    assert.equal(changes.content[0].id, job.batch)
    assert.equal(changes.content[0].parameters.job, job.id)
  })

  test('a job refused as the synchronous call would be fails with its problem, and writes nothing', async () => {
    await seedEntries(ctx.db, numberedEntries('Bad', 2))
    const accepted = await app().inject({
      method: 'POST',
      url: `${pricesPath}/list?brand=Bad`,
      headers: async,
      payload: { ...doubling, difference: -100000 },
    })
    assert.equal(accepted.statusCode, 202, accepted.body)
    const job = await finished(String(accepted.headers.location))
    assert.equal(job.state, 'failed')
    assert.equal(job.problem.status, 422)
    assert.equal(job.problem.code, 'bulk-change-rejected')
    assert.equal(job.result, null)
    assert.equal(await changeCount(ctx.db), 0)
  })

  test('an upload and a revert run as jobs too', async () => {
    const accepted = await app().inject({
      method: 'POST',
      url: `${pricesPath}/import`,
      headers: { ...async, 'content-type': 'text/csv' },
      payload: 'manufacturer,brand,model,price,purchase\nUp,Load,U 1,100,50\nUp,Load,U 2,200,100\n',
    })
    assert.equal(accepted.statusCode, 202, accepted.body)
    const imported = await finished(String(accepted.headers.location))
    assert.equal(imported.state, 'succeeded', JSON.stringify(imported))
    assert.equal(imported.result.body.created, 2)
    assert.equal(imported.batch, imported.result.body.batch)
    const revert = await app().inject({
      method: 'POST',
      url: `${pricesPath}/changes/${imported.batch}/revert`,
      headers: async,
    })
    assert.equal(revert.statusCode, 202, revert.body)
    const reverted = await finished(String(revert.headers.location))
    assert.equal(reverted.state, 'succeeded', JSON.stringify(reverted))
    assert.equal(reverted.result.body.restoredCount, 2)
    assert.deepEqual(await storedEntries(ctx.db), [])
  })

  test('a running job whose instance stopped beating is reported failed (job-lost)', async () => {
    const { rows } = await sql<{ id: number | string }>`
      INSERT INTO write_job (operation, created_by, instance, heartbeat_at)
      VALUES ('bulk-change', 'anna', 'a stopped instance', now() - interval '10 minutes') RETURNING id`.execute(
      ctx.db.primary,
    )
    const response = await app().inject({ method: 'GET', url: `${pricesPath}/jobs/${rows[0]?.id}` })
    assert.equal(response.statusCode, 200)
    assert.equal(response.json().state, 'failed')
    assert.equal(response.json().problem.code, 'job-lost')
    const missing = await app().inject({ method: 'GET', url: `${pricesPath}/jobs/999999` })
    assert.equal(missing.statusCode, 404)
  })

  test('a job held by the database is polled from memory while it runs, and reports the clock times', async () => {
    await seedEntries(ctx.db, numberedEntries('Held', 2))
    // The job's UPDATE takes 1.5 s (on the embedded database it holds the one connection all that time).
    const slow = await slowPriceUpdates(ctx.db, 1.5)
    let location = ''
    let polledAt = 0
    try {
      const accepted = await app().inject({
        method: 'POST',
        url: `${pricesPath}/list?brand=Held`,
        headers: async,
        payload: doubling,
      })
      assert.equal(accepted.statusCode, 202, accepted.body)
      location = String(accepted.headers.location)
      await new Promise((resolve) => setTimeout(resolve, 500))
      const started = performance.now()
      const poll = await app().inject({ method: 'GET', url: location })
      const pollMs = performance.now() - started
      polledAt = Date.now()
      assert.equal(poll.statusCode, 200, poll.body)
      assert.equal(poll.json().state, 'running')
      assert.ok(poll.json().startedAt, 'a running job says when its work began')
      assert.equal(poll.json().finishedAt, null)
      // Its two entries are being written (the slow statement).
      assert.deepEqual(poll.json().progress, { phase: 'writing', done: 0, total: 2 })
      assert.ok(pollMs < 100, `the poll of a running job took ${Math.round(pollMs)} ms`)
    } finally {
      await waitFor(async () => (await app().inject({ method: 'GET', url: location })).json().state !== 'running')
      await slow.remove()
    }
    const job = await finished(location)
    assert.equal(job.state, 'succeeded', JSON.stringify(job))
    const [created, begun, ended] = [job.createdAt, job.startedAt, job.finishedAt].map((at) => Date.parse(at))
    assert.ok(created! <= begun! && begun! <= ended!, JSON.stringify(job))
    // It ended after its 1.5 s statement, after the poll that saw it running: not at its transaction's start.
    assert.ok(ended! - begun! >= 1400, `${ended! - begun!} ms between start and end`)
    assert.ok(ended! >= polledAt - 50, 'finishedAt is when the job ended')
    assert.deepEqual(job.progress, { phase: 'done', done: 2, total: 2 })
    // The change log's time is when the change committed, after the slow statement, too.
    const changes = (await app().inject({ method: 'GET', url: `${pricesPath}/changes` })).json()
    assert.equal(changes.content[0].id, job.batch)
    assert.ok(Date.parse(changes.content[0].createdAt) >= polledAt - 50, JSON.stringify(changes.content[0]))
  })
})
