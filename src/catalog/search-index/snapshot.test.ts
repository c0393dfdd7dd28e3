import assert from 'node:assert/strict'
import { mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { pino } from 'pino'
import { byBrand, rowsOf, tableOf } from '../../../test/fixtures/index-tables.js'
import { buildTestApp, eachDatabase, poll } from '../../../test/harness.js'
import { seedCatalogue } from '../../demo/demo-catalogue.js'
import type { Kind } from '../kinds/kind.js'
import { glasses, kinds } from '../kinds/kinds.js'
import {
  type FieldValues,
  rankSuggestions,
  trigramPostings,
  withTrigramPostings,
} from '../search/suggestion-ranking.js'
import { normSortKey, prepareTextColumn, substringCandidates } from './matching.js'
import { SearchIndex } from './search-index.js'
import { readSnapshot, type SnapshotIdentity, snapshotLayout, writeSnapshot } from './snapshot.js'
import { type Column, KEPT_MEMOS } from './table.js'

/*
 * The search index kept on disk between runs: a restart answers from the restored tables with nothing read in full,
 * a write made while the service was down is found by comparing every row, and a file of another database or a
 * damaged one is never used.
 */

const identity: SnapshotIdentity = {
  system: '7713187882479995009',
  database: 'optics',
  schema: 'public',
  migration: '0016-write-schema',
  row: '1234',
  versions: { dataGeneration: 7, matviewVersion: 3, refreshedGeneration: 6 },
}

describe('the snapshot file', () => {
  const dirs: string[] = []
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))))
  const tables = () => ({
    matview: tableOf(
      [
        { id: 4, brand: 'Ray-Ban', price: '1200.50' },
        { id: 1, brand: 'Очки «Зрение»', price: null },
        { id: 9, brand: null, price: '7' },
      ],
      byBrand,
    ),
    prices: tableOf([{ id: 2, brand: 'Carrera', price: '99.99' }], byBrand),
  })
  const layout = snapshotLayout(glasses, { matview: ['brand', 'price'], prices: ['brand', 'price'] })

  test('gives back the rows, values and order written, exact only for the same database at the same moment', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'optics-snapshot-'))
    dirs.push(dir)
    const written = tables()
    await writeSnapshot(dir, glasses, layout, identity, written)
    const same = await readSnapshot(dir, glasses, layout, identity)
    assert.ok(!('ignored' in same))
    assert.equal(same.exact, true)
    assert.deepEqual(rowsOf(same.matview), rowsOf(written.matview))
    assert.deepEqual(rowsOf(same.prices), rowsOf(written.prices))
    assert.deepEqual([...same.matview.rowByTie], [...written.matview.rowByTie])
    assert.deepEqual(same.versions, identity.versions)

    const later = await readSnapshot(dir, glasses, layout, {
      ...identity,
      row: '1300',
      versions: { ...identity.versions, dataGeneration: 8 },
    })
    assert.ok(!('ignored' in later))
    assert.equal(later.exact, false, 'a later moment: a starting point to compare, not the data as it stands')
    const rewritten = await readSnapshot(dir, glasses, layout, { ...identity, row: '999' })
    assert.ok(!('ignored' in rewritten))
    assert.equal(rewritten.exact, false, 'the same versions written by another transaction (a restored database)')
  })

  test('keeps what was built of a large dictionary: the restored column sorts and finds substrings with nothing to build', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'optics-snapshot-'))
    dirs.push(dir)
    // More distinct values than a substring search scans one by one: they get n-gram postings.
    const rows = Array.from({ length: 3_000 }, (_, index) => ({
      id: index + 1,
      brand: `${index % 2 === 0 ? 'Ray' : 'Optica'}-${(index * 7919) % 3_000} Model`,
      price: String(index % 50),
    }))
    const written = { matview: tableOf(rows, byBrand), prices: tableOf(rows.slice(0, 10), byBrand) }
    const brand = written.matview.columns.get('brand') as Column
    prepareTextColumn(brand)
    const sorted = normSortKey(brand, false)
    brand.ranks()
    brand.ranks(true)
    const suggestions = (column: Column): FieldValues => ({
      values: column.values,
      normalised: column.norms,
      counts: Uint32Array.from(column.values, (_, code) => (code === 0 ? 0 : column.count(code))),
    })
    brand.memo(KEPT_MEMOS.trigrams, () => trigramPostings(suggestions(brand)))
    const builtKeys = brand.kept().map(([key]) => key)
    assert.deepEqual(builtKeys.toSorted(), [
      'grams2',
      'grams3',
      'lower ranks',
      'norm ranks',
      'ranks',
      'suggestion trigrams',
    ])
    await writeSnapshot(dir, glasses, layout, identity, written)

    const restored = await readSnapshot(dir, glasses, layout, identity)
    assert.ok(!('ignored' in restored))
    const again = restored.matview.columns.get('brand') as Column
    // Restored, not to be built on first use: the same arrays and postings, before any request.
    assert.deepEqual(
      again.kept().map(([key, value]) => [key, value instanceof Uint32Array ? [...value] : [...value.slots]]),
      brand.kept().map(([key, value]) => [key, value instanceof Uint32Array ? [...value] : [...value.slots]]),
    )
    assert.deepEqual([...normSortKey(again, false).ranks], [...sorted.ranks])
    assert.deepEqual([...again.ranks(true)], [...brand.ranks(true)])
    for (const needle of ['ay-1', 'ptica-29', 'model', 'zz']) {
      const found = substringCandidates(again, needle)
      assert.deepEqual(found && [...found.codes], [...(substringCandidates(brand, needle)?.codes ?? [])], needle)
    }
    // Suggestions rank through the restored trigram postings as through the built ones.
    const restoredList = suggestions(again)
    withTrigramPostings(
      restoredList.normalised,
      again.memo(KEPT_MEMOS.trigrams, () => assert.fail('rebuilt')),
    )
    for (const query of ['ray-12', 'optica 7 model', 'moddel']) {
      const ranked = rankSuggestions(restoredList, query, 5)
      assert.equal(ranked.length, 5, query)
      assert.deepEqual(ranked, rankSuggestions(suggestions(brand), query, 5), query)
    }
    // The small table built nothing, and keeps nothing beside its rows.
    assert.deepEqual((restored.prices.columns.get('brand') as Column).kept(), [])
  })

  test('refuses kept arrays that cannot be the column’s, so such a file is read anew', () => {
    const brand = tables().matview.columns.get('brand') as Column
    // Two values and NULL: ranks are 3 codes' below 4.
    assert.throws(() => brand.restoreKept('ranks', new Uint32Array(5)), /ranks of another size/)
    assert.throws(() => brand.restoreKept('ranks', Uint32Array.of(0, 9, 1)), /ranks of another size/)
    assert.throws(() => brand.restoreKept('ranks', Uint32Array.of(1, 0)), /ranks differs/)
    const postings = (items: number[]) => ({
      slots: new Map([[97, 0]]),
      offsets: Uint32Array.of(0, items.length),
      items: Uint32Array.from(items),
    })
    assert.throws(() => brand.restoreKept('grams2', postings([1, 7])), /grams2 differs/)
    assert.throws(
      () => brand.restoreKept('grams2', { ...postings([1]), offsets: Uint32Array.of(0, 2) }),
      /grams2 differs/,
    )
    assert.throws(() => brand.restoreKept('an unknown', Uint32Array.of(0, 1, 2)), /not kept by this build/)
    brand.restoreKept('grams2', postings([1, 2]))
    assert.deepEqual(
      brand.kept().map(([key]) => key),
      ['grams2'],
    )
  })

  test('is not used for another cluster, database, schema or migration, other columns, or when damaged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'optics-snapshot-'))
    dirs.push(dir)
    await writeSnapshot(dir, glasses, layout, identity, tables())
    const ignored = async (reading: SnapshotIdentity, readLayout = layout) => {
      const verdict = await readSnapshot(dir, glasses, readLayout, reading)
      return 'ignored' in verdict ? verdict.ignored : 'used'
    }
    assert.match(await ignored({ ...identity, system: '1' }), /another database/)
    assert.match(await ignored({ ...identity, database: 'optics_copy' }), /another database/)
    assert.match(await ignored({ ...identity, schema: 'test_2' }), /another database/)
    assert.match(await ignored({ ...identity, migration: '0017-more' }), /another database/)
    const otherColumns = snapshotLayout(glasses, { matview: ['brand'], prices: ['brand', 'price'] })
    assert.match(await ignored(identity, otherColumns), /other columns/)
    assert.equal(await ignored(identity), 'used')
    const lenses = kinds.find((kind) => kind.path === 'lenses')!
    assert.deepEqual(await readSnapshot(dir, lenses, layout, identity), { ignored: 'no file' })

    const file = join(dir, `${glasses.path}.snapshot`)
    const whole = await readFile(file)
    await truncate(file, whole.byteLength - 20)
    assert.match(await ignored(identity), /unreadable: .*cut short/)
    await writeFile(file, 'not a snapshot at all, but long enough to have a header')
    assert.match(await ignored(identity), /unreadable/)
  })
})

const requests = [
  { method: 'POST', url: '/api/v2/good/nomenclature/search/glasses?size=5', payload: { byPriceList: false } },
  {
    method: 'POST',
    url: '/api/v2/good/nomenclature/search/glasses?size=5&sort=retailPrice,desc',
    payload: { byPriceList: true, brand: 'ra' },
  },
  { method: 'POST', url: '/api/v2/good/nomenclature/search/lenses?size=5', payload: { byPriceList: false } },
  { method: 'POST', url: '/api/v2/good/nomenclature/search/lenses/facets', payload: { byPriceList: false } },
  { method: 'POST', url: '/api/v2/good/nomenclature/search/accessories?size=5', payload: { byPriceList: true } },
  { method: 'GET', url: '/api/v2/good/nomenclature/suggest?kind=glasses&field=brand&q=ra&byPriceList=false' },
  { method: 'GET', url: '/api/v2/glasses/prices/list?sortColumn=PRICE&sortDirection=DESC&page=0&size=5' },
] as const

async function answers(app: FastifyInstance): Promise<unknown[]> {
  const bodies: unknown[] = []
  for (const request of requests) {
    const response = await app.inject(request)
    assert.equal(response.statusCode, 200, `${request.url}: ${response.body}`)
    bodies.push(response.json())
  }
  return bodies
}

eachDatabase('search index snapshot in the service', (ctx) => {
  let dir = ''
  let before: unknown[] = []
  const env = () => ({ SEARCH_INDEX_SNAPSHOT_DIR: dir, RESULT_CACHE: 'off' })
  const loaded = async () => {
    const app = await buildTestApp(ctx.db, env())
    await app.searchIndex.catchUp()
    return app
  }
  after(() => rm(dir, { recursive: true, force: true }))

  test('a restart restores every kind from its snapshot and answers as before, with no table read', async () => {
    dir = await mkdtemp(join(tmpdir(), 'optics-snapshot-'))
    await seedCatalogue(ctx.db, { scale: 300 })
    const first = await loaded()
    assert.equal(first.searchIndex.loads.read, kinds.length * 2, 'the first start reads every table')
    before = await answers(first)
    await first.close()
    assert.deepEqual(
      (await readdir(dir)).sort(),
      kinds.map((kind) => `${kind.path}.snapshot`).sort(),
      'a file per kind, written when the first load ended and when the service stopped',
    )

    const second = await loaded()
    try {
      assert.deepEqual(second.searchIndex.loads, { read: 0, changes: 0, restored: kinds.length })
      const ready = await second.inject({ method: 'GET', url: '/actuator/health/readiness' })
      assert.equal(ready.statusCode, 200)
      assert.deepEqual(ready.json().components.searchIndex.details, {
        state: 'loaded',
        kindsLoaded: kinds.length,
        kinds: kinds.length,
        reading: [],
      })
      const served = second.searchIndex.served.index
      assert.deepEqual(await answers(second), before)
      assert.equal(second.searchIndex.served.index, served + requests.length, 'every answer from the index')
    } finally {
      await second.close()
    }
  })

  test('a price changed while the service was down shows after the restart: every row is compared', async () => {
    const plain = await buildTestApp(ctx.db)
    const listed = await plain.inject({
      method: 'GET',
      url: '/api/v2/glasses/prices/list?sortColumn=PRICE&sortDirection=DESC&page=0&size=1',
    })
    type Entry = { id: number; manufacturer: string; brand: string; model: string; price: number; purchase: number }
    const [top] = listed.json().content as Entry[]
    assert.ok(top)
    const { manufacturer, brand, model, purchase } = top
    const changed = await plain.inject({
      method: 'PUT',
      url: `/api/v2/glasses/prices/${top.id}`,
      payload: { manufacturer, brand, model, purchase, price: top.price + 1000 },
    })
    assert.equal(changed.statusCode, 200, changed.body)
    await plain.close()

    const restarted = await loaded()
    try {
      assert.equal(restarted.searchIndex.loads.restored, kinds.length, 'every kind restored')
      assert.equal(restarted.searchIndex.loads.read, 0, 'no table read anew: the change was patched in')
      const served = restarted.searchIndex.served.index
      const now = await restarted.inject(requests[6])
      assert.equal(restarted.searchIndex.served.index, served + 1, 'answered from the restored index')
      assert.equal(now.json().content[0].id, top.id)
      assert.equal(now.json().content[0].price, top.price + 1000, 'the price changed while the service was down')
    } finally {
      await restarted.close()
    }
  })

  test('a damaged snapshot is read anew from the database, and the answers stay right', async () => {
    const file = join(dir, `${glasses.path}.snapshot`)
    const damaged = Math.floor((await readFile(file)).byteLength / 2)
    await truncate(file, damaged)
    const restarted = await loaded()
    try {
      assert.equal(restarted.searchIndex.loads.restored, kinds.length - 1)
      assert.equal(restarted.searchIndex.loads.read, 2, 'the glasses matview and price list read anew')
      const plain = await buildTestApp(ctx.db, { SEARCH_INDEX: 'off', RESULT_CACHE: 'off' })
      try {
        assert.deepEqual(await answers(restarted), await answers(plain), 'as SQL answers')
      } finally {
        await plain.close()
      }
    } finally {
      await restarted.close()
    }
    assert.ok((await readFile(file)).byteLength > damaged, 'the damaged file is written anew, whole')
  })
})

eachDatabase('search index snapshot kept while the service runs', (ctx) => {
  const dirs: string[] = []
  after(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))))

  test('the kinds whose tables moved are written again every few minutes, so a crash loses little', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'optics-snapshot-'))
    dirs.push(dir)
    await seedCatalogue(ctx.db, { scale: 100 })
    const index = new SearchIndex(ctx.db, pino({ level: 'silent' }), {
      enabled: true,
      timezone: 'UTC',
      kinds,
      snapshotDir: dir,
      snapshotEveryMs: 200,
    })
    try {
      await index.catchUp()
      const modified = async (kind: Kind) => (await stat(join(dir, `${kind.path}.snapshot`))).mtimeMs
      const lenses = kinds.find((kind) => kind.path === 'lenses')!
      await poll(
        () => readdir(dir),
        (files) => files.length === kinds.length,
        'the first load written',
      )
      const [glassesAt, lensesAt] = [await modified(glasses), await modified(lenses)]
      await sql`UPDATE glasses_price SET price = price + 1 WHERE id = (SELECT min(id) FROM glasses_price)`.execute(
        ctx.db.primary,
      )
      await index.catchUp()
      await poll(
        () => modified(glasses),
        (at) => at > glassesAt,
        'the moved kind written again',
      )
      await new Promise((resolve) => setTimeout(resolve, 500))
      assert.equal(await modified(lenses), lensesAt, 'a kind that did not move is not written again')
    } finally {
      await index.close()
    }
  })
})
