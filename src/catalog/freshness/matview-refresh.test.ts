import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { samples } from '../../../test/fixtures/catalog.js'
import { buildTestApp, eachDatabase } from '../../../test/harness.js'
import type { Database } from '../../db/database.js'
import { kinds } from '../kinds/kinds.js'
import { insertPriceEntries, insertSkus, refreshMatview } from './catalog-repository.js'
import { dataGeneration, matviewGeneration, readCatalogStates } from './catalog-state.js'
import { MatviewRefresher, type RefreshEvent } from './matview-refresh.js'

/*
 * Matview freshness (SPEC §7): every write marks its kind stale, whatever wrote it; the background refresher
 * makes it fresh again, one refresh of a kind at a time across instances.
 */

const glasses = kinds.find((kind) => kind.path === 'glasses')!

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

async function staleKinds(db: Database): Promise<string[]> {
  return (await readCatalogStates(db.primary))
    .filter((state) => state.stale)
    .map((state) => state.kind)
    .sort()
}

eachDatabase('matview freshness', (ctx) => {
  before(async () => {
    for (const kind of kinds) await refreshMatview(ctx.db.primary, kind)
  })

  describe('catalog state', () => {
    test('a write to any kind’s price list or nomenclature marks that kind alone stale; a refresh makes it fresh', async () => {
      assert.deepEqual(await staleKinds(ctx.db), [])
      for (const kind of kinds) {
        const { entry, sku } = samples[kind.path]!
        const before = await dataGeneration(ctx.db.primary, kind)
        await insertPriceEntries(ctx.db.primary, kind, [entry])
        assert.deepEqual(await staleKinds(ctx.db), [kind.path], `${kind.path}: price list`)
        assert.ok((await dataGeneration(ctx.db.primary, kind)) > before)
        await refreshMatview(ctx.db.primary, kind)
        assert.deepEqual(await staleKinds(ctx.db), [], `${kind.path}: refreshed`)
        assert.equal(await matviewGeneration(ctx.db.primary, kind), await dataGeneration(ctx.db.primary, kind))
        await insertSkus(ctx.db.primary, kind, [sku])
        assert.deepEqual(await staleKinds(ctx.db), [kind.path], `${kind.path}: nomenclature`)
        await refreshMatview(ctx.db.primary, kind, { concurrently: true })
      }
      assert.deepEqual(await staleKinds(ctx.db), [])
    })

    test('plain SQL updates, deletes, truncation and COPY all mark the kind stale', async () => {
      const writes: [string, () => Promise<unknown>][] = [
        ['update', () => sql`UPDATE glasses_price SET price = price + 1`.execute(ctx.db.primary)],
        ['delete', () => sql`DELETE FROM glasses_sku WHERE barcode = 'none'`.execute(ctx.db.primary)],
        [
          'copy',
          () =>
            ctx.db.rawTransaction((client) =>
              client.copyRows(
                'glasses_sku',
                ['barcode', 'manufacturer', 'brand', 'model'],
                (async function* () {
                  yield 'copied-1\tSafilo\tCarrera\tCARRERA 8862\n'
                })(),
              ),
            ),
        ],
        ['truncate', () => sql`TRUNCATE glasses_sku`.execute(ctx.db.primary)],
      ]
      for (const [name, write] of writes) {
        await write()
        assert.deepEqual(await staleKinds(ctx.db), ['glasses'], name)
        await refreshMatview(ctx.db.primary, glasses)
      }
      await insertSkus(ctx.db.primary, glasses, [samples.glasses!.sku])
      await refreshMatview(ctx.db.primary, glasses)
    })

    test('nomenclature status answers per kind: items, price entries, refreshedAt and stale', async () => {
      const app = await buildTestApp(ctx.db)
      try {
        await sql`UPDATE accessories_price SET purchase = purchase`.execute(ctx.db.primary)
        const response = await app.inject({ method: 'GET', url: '/api/v2/good/nomenclature/status' })
        assert.equal(response.statusCode, 200)
        const status = response.json().kinds as Record<string, unknown>[]
        assert.deepEqual(
          status.map((kind) => kind.kind),
          kinds.map((kind) => kind.path),
        )
        for (const kind of status) {
          const { rows } = await sql<{ items: string | number; entries: string | number }>`
            SELECT (SELECT count(*) FROM ${sql.table(kinds.find((k) => k.path === kind.kind)!.matview)}) AS items,
                   (SELECT count(*) FROM ${sql.table(kinds.find((k) => k.path === kind.kind)!.priceTable)}) AS entries`.execute(
            ctx.db.primary,
          )
          assert.ok(Number(rows[0]?.items) >= 1, `${kind.kind} has priced SKUs`)
          assert.equal(kind.items, Number(rows[0]?.items))
          assert.equal(kind.priceEntries, Number(rows[0]?.entries))
          assert.equal(kind.stale, kind.kind === 'accessories', String(kind.kind))
          assert.ok(!Number.isNaN(Date.parse(String(kind.refreshedAt))), `${kind.kind} refreshedAt`)
        }
        await refreshMatview(ctx.db.primary, kinds[0]!)
      } finally {
        await app.close()
      }
    })
  })

  describe('background refresh', () => {
    let app: FastifyInstance | undefined
    after(() => app?.close())

    test('a price change through the API is visible to a matview search once the refresh ends', async () => {
      app = await buildTestApp(ctx.db, { MATVIEW_REFRESH: 'auto', MATVIEW_REFRESH_DELAY_MS: '20' })
      const [entryId] = (
        await ctx.db.primary.selectFrom('glasses_price').select('id').where('model', '=', 'CARRERA 8862').execute()
      ).map((row) => Number(row.id))
      const search = async () =>
        (
          await app!.inject({
            method: 'POST',
            url: '/api/v2/good/nomenclature/search/glasses',
            payload: { byPriceList: false, model: 'CARRERA 8862' },
          })
        ).json().content[0]?.retailPrice
      const status = async () =>
        (await app!.inject({ method: 'GET', url: '/api/v2/good/nomenclature/status' }))
          .json()
          .kinds.find((kind: { kind: string }) => kind.kind === 'glasses')
      const before = await search()
      const put = await app.inject({
        method: 'PUT',
        url: `/api/v2/glasses/prices/${entryId}`,
        payload: { ...samples.glasses!.entry, price: before + 1000 },
      })
      assert.equal(put.statusCode, 200)
      const written = await dataGeneration(ctx.db.primary, glasses)
      const started = Date.now()
      await waitFor('the glasses matview is refreshed', async () => {
        const glassesStatus = await status()
        return !glassesStatus.stale && glassesStatus.refreshedGeneration >= written
      })
      assert.ok(Date.now() - started < 5000, 'the refresh follows the write promptly')
      assert.equal(await search(), before + 1000)
      await app.close()
      app = undefined
    })

    test('a write the service did not make (plain SQL) is noticed by polling and refreshed', async () => {
      app = await buildTestApp(ctx.db, { MATVIEW_REFRESH: 'auto', MATVIEW_REFRESH_DELAY_MS: '0' })
      await sql`UPDATE glasses_price SET price = price + 1`.execute(ctx.db.primary)
      assert.deepEqual(await staleKinds(ctx.db), ['glasses'])
      await waitFor('the poll finds the stale kind', async () => (await staleKinds(ctx.db)).length === 0, 10_000)
      await app.close()
      app = undefined
    })

    test('with MATVIEW_REFRESH=off nothing refreshes in the background', async () => {
      app = await buildTestApp(ctx.db, { MATVIEW_REFRESH: 'off', MATVIEW_REFRESH_DELAY_MS: '0' })
      await sql`UPDATE glasses_price SET price = price + 1`.execute(ctx.db.primary)
      await new Promise((resolve) => setTimeout(resolve, 1500))
      assert.deepEqual(await staleKinds(ctx.db), ['glasses'])
      await app.close()
      app = undefined
      await refreshMatview(ctx.db.primary, glasses)
    })

    test('two instances never refresh one kind at the same time, and each write is refreshed', async () => {
      // On the server, enough goods that a refresh takes a while, so overlapping attempts would show; the
      // embedded database runs one statement at a time anyway.
      const skus = ctx.target === 'postgres' ? 6000 : 300
      await sql`
        INSERT INTO glasses_price (manufacturer, brand, model, price, purchase)
        SELECT 'Bulk', 'Load', 'model ' || g, 1000 + g, 500 FROM generate_series(1, 500) g`.execute(ctx.db.primary)
      await sql`
        INSERT INTO glasses_sku (barcode, manufacturer, brand, model, color, size)
        SELECT 'bulk-' || g, 'Bulk', 'Load', 'model ' || (g % 500 + 1), 'black', '52-18-140'
        FROM generate_series(1, ${skus}) g`.execute(ctx.db.primary)
      await refreshMatview(ctx.db.primary, glasses)

      const other = ctx.target === 'postgres' ? await ctx.openAnother() : ctx.db
      const events: (RefreshEvent & { instance: string })[] = []
      const refreshers = [ctx.db, other].map(
        (db, index) =>
          new MatviewRefresher(db.primary, {
            kinds: [glasses],
            delayMs: 0,
            pollMs: 50,
            onRefreshed: (event) => events.push({ ...event, instance: String(index) }),
          }),
      )
      for (const refresher of refreshers) refresher.start()
      try {
        const writes = 4
        for (let write = 0; write < writes; write++) {
          await sql`UPDATE glasses_price SET price = price + 1 WHERE brand = 'Load'`.execute(ctx.db.primary)
          for (const refresher of refreshers) refresher.poke()
          await waitFor('both instances see the kind fresh', async () => (await staleKinds(ctx.db)).length === 0)
        }
        assert.ok(events.length >= writes, `every write was refreshed (${events.length} refreshes)`)
        const sorted = [...events].sort((a, b) => a.startedAt - b.startedAt)
        for (let index = 1; index < sorted.length; index++) {
          assert.ok(
            sorted[index]!.startedAt >= sorted[index - 1]!.finishedAt,
            `refresh ${index} (instance ${sorted[index]!.instance}) started before refresh ${index - 1} ended`,
          )
        }
      } finally {
        await Promise.all(refreshers.map((refresher) => refresher.stop()))
      }
    })
  })
})
