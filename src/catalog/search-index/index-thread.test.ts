import assert from 'node:assert/strict'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { before, test } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'kysely'
import { pino } from 'pino'
import { eachDatabase, poll } from '../../../test/harness.js'
import { seedCatalogue } from '../../demo/demo-catalogue.js'
import { glasses } from '../kinds/kinds.js'
import { SearchIndexThread } from './index-thread.js'

/*
 * The index on its own thread: while that thread is busy building a table (held busy here as a million rows
 * hold it), the service's thread keeps turning and every question is answered at once with "ask SQL"; once the
 * load ends the index answers again. The answers themselves are the equality test's (search-index-equality.test.ts).
 */

const searchRequest = {
  byPriceList: true,
  filters: {},
  page: { page: 0, size: 5, sort: [] },
}

const listingRequest = {
  filter: {},
  page: { page: 0, size: 5, sort: [] },
  sortColumn: 'ID' as const,
  sortDirection: 'ASC' as const,
  timezone: 'UTC',
}

const brand = glasses.itemFields.find((field) => field.name === 'brand')

eachDatabase('the search index on its own thread', (ctx) => {
  /** The index with a search thread beside it, and the index's thread alone, to compare their answers. */
  const threadedAndSingle = () => {
    const silent = pino({ level: 'silent' })
    const options = { timezone: 'UTC', listingKind: glasses.path }
    return {
      threaded: new SearchIndexThread(ctx.db, silent, { ...options, threads: 2 }),
      single: new SearchIndexThread(ctx.db, silent, { ...options, threads: 1 }),
    }
  }

  before(async () => {
    await seedCatalogue(ctx.db, { scale: 300, kinds: [glasses] })
  })

  test('while the index thread builds a table, the service thread is never held and SQL answers at once', async () => {
    assert.ok(brand, 'glasses have a brand field')
    const thread = new SearchIndexThread(ctx.db, pino({ level: 'silent' }), { timezone: 'UTC', holdFirstReadMs: 2_000 })
    const delay = monitorEventLoopDelay({ resolution: 5 })
    try {
      const loading = thread.catchUp()
      await poll(
        async () => thread.status.reading.length,
        (reading) => reading > 0,
        'the index thread reading a table',
        5,
      )
      assert.equal(thread.status.state, 'loading')
      delay.enable()
      const started = performance.now()
      const answers = await Promise.all([
        thread.search(glasses, searchRequest),
        thread.facets(glasses, true, {}),
        thread.listing(listingRequest),
        thread.suggestions(glasses, brand, false, 'ra', 5),
      ])
      const waited = performance.now() - started
      assert.deepEqual(answers, [undefined, undefined, undefined, undefined], 'SQL answers while the index builds')
      assert.ok(waited < 250, `answered in ${Math.round(waited)} ms, not after the build`)
      assert.equal(thread.served.sql, 4)
      // The service's thread keeps turning while the index's thread is held.
      await sleep(500)
      delay.disable()
      assert.ok(thread.status.reading.length > 0, 'still building')
      assert.ok(delay.max / 1e6 < 150, `the service thread was held ${Math.round(delay.max / 1e6)} ms`)

      await loading
      assert.deepEqual(thread.status, { state: 'loaded', kindsLoaded: 7, kinds: 7, reading: [] })
      const page = await thread.search(glasses, searchRequest)
      assert.ok(page, 'the index answers once loaded')
      assert.equal(page.content.length, 5)
      const suggested = await thread.suggestions(glasses, brand, false, 'ra', 5)
      assert.ok(suggested && suggested.length > 0, 'suggestions come from the index')
      assert.equal(thread.served.index, 2)
      assert.ok(thread.loads.read >= 2, 'the loads are counted on the service thread')
    } finally {
      delay.disable()
      await thread.close()
    }
  })

  test('a start waits for the index restored from its snapshot, and never for a table read in full', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'optics-snapshot-'))
    const silent = pino({ level: 'silent' })
    try {
      // A first start: the tables are read in full (held 5 s here, as a million rows hold them), so it goes on at
      // once: well before the hold ends, whatever else the machine runs (the thread's start included).
      const first = new SearchIndexThread(ctx.db, silent, { timezone: 'UTC', snapshotDir: dir, holdFirstReadMs: 5_000 })
      let started = performance.now()
      first.start()
      await first.restored(10_000)
      assert.ok(performance.now() - started < 4_000, `waited ${Math.round(performance.now() - started)} ms`)
      assert.equal(first.status.state, 'loading')
      assert.ok(first.status.kindsLoaded < 7, 'not every kind held yet')
      await poll(
        async () => first.loaded,
        (loaded) => loaded,
        'the first load',
      )
      await first.close()

      // A restart: it goes on once every kind answers from the restored index.
      const second = new SearchIndexThread(ctx.db, silent, {
        timezone: 'UTC',
        snapshotDir: dir,
        holdFirstReadMs: 3_000,
      })
      try {
        started = performance.now()
        second.start()
        await second.restored(10_000)
        // Settled by the restore, not by the 10 s it may wait at most.
        assert.ok(performance.now() - started < 6_000, `waited ${Math.round(performance.now() - started)} ms`)
        assert.equal(second.status.kindsLoaded, 7, 'every kind restored')
        assert.deepEqual(second.status.reading, [])
        const page = await second.search(glasses, searchRequest)
        assert.equal(page?.content.length, 5, 'answered from the restored index')
      } finally {
        await second.close()
      }
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  test('an invalid question is refused as the service thread would refuse it, not as an internal error', async () => {
    const thread = new SearchIndexThread(ctx.db, pino({ level: 'silent' }), { timezone: 'UTC' })
    try {
      await thread.catchUp()
      await assert.rejects(
        thread.search(glasses, {
          ...searchRequest,
          page: { page: 0, size: 5, sort: [{ property: 'id', direction: 'asc', ignoreCase: false }] },
        }),
        (error: unknown) => {
          assert.ok(error instanceof Error)
          assert.equal(error.name, 'ProblemError')
          assert.match(error.message, /cannot sort by 'id'/)
          return true
        },
      )
    } finally {
      await thread.close()
    }
  })

  test('a search thread beside the index answers from the tables it publishes, and a write shows in the next answer', async () => {
    assert.ok(brand, 'glasses have a brand field')
    const { threaded, single } = threadedAndSingle()
    const byPrice = {
      ...searchRequest,
      page: { page: 0, size: 5, sort: [{ property: 'retailPrice', direction: 'desc' as const, ignoreCase: false }] },
    }
    // One at a time: questions at once are shared between the threads, the least busy first.
    const ask = async (index: SearchIndexThread) => [
      await index.search(glasses, byPrice),
      await index.facets(glasses, true, {}),
      await index.listing({ ...listingRequest, sortColumn: 'PRICE', sortDirection: 'DESC' }),
      await index.suggestions(glasses, brand, false, 'ra', 5),
    ]
    try {
      await Promise.all([threaded.catchUp(), single.catchUp()])
      // Its tables arrive just after the load: once they have, the search thread answers.
      await poll(
        async () => {
          await threaded.search(glasses, byPrice)
          return threaded.served.threads
        },
        (answered) => answered > 0,
        'an answer from the search thread',
      )
      const before = threaded.served.threads
      assert.deepEqual(await ask(threaded), await ask(single), 'the same answers as the index alone')
      assert.equal(threaded.served.threads, before + 4, 'all four from the search thread')

      // The dearest entry becomes dearer still: the first answer after the write shows it, from either thread.
      await sql`UPDATE glasses_price SET price = price + 1000 WHERE id = (SELECT id FROM glasses_price ORDER BY price DESC, id LIMIT 1)`.execute(
        ctx.db.primary,
      )
      const [afterWrite, expected] = await Promise.all([ask(threaded), ask(single)])
      assert.deepEqual(afterWrite, expected)
      const listing = afterWrite[2] as { content: { price: string }[] } | undefined
      const top = listing?.content[0]
      const [{ max }] = (
        await sql<{ max: string }>`SELECT max(price)::text AS max FROM glasses_price`.execute(ctx.db.primary)
      ).rows as [{ max: string }]
      assert.equal(Number(top?.price), Number(max), 'the listing shows the new price at once')
      // And the search thread, given the new tables, answers again.
      const again = threaded.served.threads
      await poll(
        async () => {
          await threaded.listing({ ...listingRequest, sortColumn: 'PRICE', sortDirection: 'DESC' })
          return threaded.served.threads
        },
        (answered) => answered > again,
        'the search thread answering after the write',
      )
      assert.deepEqual(await ask(threaded), await ask(single))
    } finally {
      await Promise.all([threaded.close(), single.close()])
    }
  })

  test('a search thread that stops leaves its share to the index, answers unchanged, and is started again with every kind', async () => {
    assert.ok(brand, 'glasses have a brand field')
    const { threaded, single } = threadedAndSingle()
    const ask = async (index: SearchIndexThread) => [
      await index.search(glasses, searchRequest),
      await index.facets(glasses, false, {}),
      await index.listing(listingRequest),
      await index.suggestions(glasses, brand, false, 'ra', 5),
    ]
    const fromSearchThread = async () => {
      const before = threaded.served.threads
      await threaded.search(glasses, searchRequest)
      return threaded.served.threads > before
    }
    try {
      await Promise.all([threaded.catchUp(), single.catchUp()])
      await poll(fromSearchThread, (answered) => answered, 'an answer from the search thread')
      assert.equal(threaded.searchThreadsRunning, 1)

      await threaded.stopSearchThread(0)
      assert.equal(threaded.searchThreadsRunning, 0)
      // Meanwhile the index's own thread answers all, and the same.
      const before = threaded.served.threads
      assert.deepEqual(await ask(threaded), await ask(single))
      assert.equal(threaded.served.threads, before, 'none from the stopped thread')

      // Started again a second later and given the kind whole, it answers again, and the same.
      await poll(fromSearchThread, (answered) => answered, 'an answer from the search thread started again')
      assert.equal(threaded.searchThreadsRunning, 1)
      const again = threaded.served.threads
      assert.deepEqual(await ask(threaded), await ask(single))
      assert.equal(threaded.served.threads, again + 4, 'all four from the search thread started again')
    } finally {
      await Promise.all([threaded.close(), single.close()])
    }
  })
})
