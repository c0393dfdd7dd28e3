import assert from 'node:assert/strict'
import { test } from 'node:test'
import v8 from 'node:v8'
import vm from 'node:vm'
import { clearGlassPrices, numberedEntries, pricesPath, seedEntries } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import { ResultCache } from './result-cache.js'

/*
 * The result and page caches are bounded in bytes of heap, measured from what they hold. The measure is checked
 * against the heap growth a full cache really causes (with the collector run before each reading), and the issue's
 * probe — many distinct large pages from one client — against the heap of the whole service.
 */

v8.setFlagsFromString('--expose-gc')
const collect = vm.runInNewContext('gc') as () => void

/** Heap in use after a full collection. */
function heapUsed(): number {
  collect()
  collect()
  return process.memoryUsage().heapUsed
}

/** A page as the listing builds it: `size` entries of distinct text and exact prices, and the envelope. */
function pageOf(seed: number, size: number) {
  return {
    content: Array.from({ length: size }, (_, index) => ({
      id: seed * 10_000 + index,
      manufacturer: `Manufacturer ${seed}-${index}`,
      brand: `Brand ${seed}-${index}`,
      model: `Model ${seed}-${index} Тест`,
      price: 1000 + index + 0.5,
      purchase: 500 + index,
      lastUpdatedOn: `2026-01-${String((index % 28) + 1).padStart(2, '0')}`,
      user: `user.${seed}.${index}`,
    })),
    pageable: { pageNumber: seed, pageSize: size, offset: seed * size, paged: true, unpaged: false },
    totalElements: 1_000_000 + seed,
    size,
  }
}

test('a cache never holds more bytes than its bound, evicting the least recent, and refuses one huge entry', () => {
  const cache = new ResultCache(1024 * 1024)
  for (let seed = 0; seed < 200; seed++) {
    cache.set(`page ${seed}`, 'v1', pageOf(seed, 50))
    assert.ok(cache.bytes <= cache.maxBytes, `${cache.bytes} bytes after ${seed + 1} pages`)
  }
  assert.ok(cache.bytes > cache.maxBytes / 2, 'it fills up')
  assert.equal(cache.get('page 0', 'v1'), undefined, 'the oldest is gone')
  assert.ok(cache.get('page 199', 'v1'), 'the newest is there')
  cache.set('huge', 'v1', pageOf(999, 2000))
  assert.equal(cache.get('huge', 'v1'), undefined, 'an entry above an eighth of the bound is not remembered')
  assert.ok(cache.get('page 199', 'v1'), 'and it flushed nothing')
})

test('the measured size bounds the heap a full cache really holds, and is not far above it', () => {
  const cache = new ResultCache(256 * 1024 * 1024)
  const before = heapUsed()
  // Pages as a driver hands them over (flat strings, parsed from the wire), held by the cache alone.
  for (let seed = 0; seed < 40; seed++) cache.set(`page ${seed}`, 'v1', JSON.parse(JSON.stringify(pageOf(seed, 500))))
  const grown = heapUsed() - before
  assert.equal(cache.size, 40)
  assert.ok(grown <= cache.bytes, `the heap grew by ${grown} bytes, more than the ${cache.bytes} measured`)
  assert.ok(grown >= cache.bytes / 3, `the heap grew by ${grown} bytes, far less than the ${cache.bytes} measured`)
})

eachDatabase('page cache bound under many distinct large pages', (ctx) => {
  const app = useTestApp(ctx, {
    env: { SEARCH_INDEX: 'off', PAGE_CACHE_MB: '2' },
    setup: async () => {
      await clearGlassPrices(ctx.db)
      await seedEntries(ctx.db, numberedEntries('Large', 1200))
      // The SQL path remembers whole unfiltered pages; the search index has no page cache.
    },
  })

  test('120 distinct pages of 1,001–1,120 entries from one client leave the heap under +16 MiB', async () => {
    const before = heapUsed()
    for (let index = 0; index < 120; index++) {
      const size = 1001 + index
      const response =
        index % 2 === 0
          ? await app().inject({ method: 'GET', url: `${pricesPath}/list?size=${size}` })
          : await app().inject({
              method: 'POST',
              url: `/api/v2/good/nomenclature/search/glasses?size=${size}`,
              payload: { byPriceList: true },
            })
      assert.equal(response.statusCode, 200)
      assert.equal(response.json().content.length, Math.min(size, 1200))
      assert.ok(app().pageCache.bytes <= 2 * 1024 * 1024, `${app().pageCache.bytes} bytes of pages remembered`)
    }
    assert.ok(app().pageCache.size > 0, 'pages are remembered, within the bound')
    // Every one of these pages remembered would hold some 50 MiB.
    const grown = heapUsed() - before
    assert.ok(grown < 16 * 1024 * 1024, `the heap grew by ${Math.round(grown / 1024 / 1024)} MiB`)
  })
})
