import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page, Paging, SearchBody } from '../api.js'
import { EXPORT_CAP, readView } from './view-export.js'

/* Reading the view on screen for a file: every page in the order asked, and no more than the cap. */

/** A search of `total` numbered rows that answers at most `maxSize` a page, as the service clamps `size`. */
function fakeSearch(total: number, maxSize: number, calls: Paging[]) {
  return {
    search: async (_kind: string, _body: SearchBody, paging: Paging): Promise<Page> => {
      calls.push(paging)
      const size = Math.min(paging.size, maxSize)
      const from = paging.page * size
      const content = Array.from({ length: Math.max(0, Math.min(size, total - from)) }, (_, i) => ({ n: from + i }))
      const totalPages = Math.ceil(total / size)
      return {
        content,
        number: paging.page,
        size,
        numberOfElements: content.length,
        totalElements: total,
        totalPages,
        first: paging.page === 0,
        last: paging.page >= totalPages - 1,
        empty: content.length === 0,
      } as unknown as Page
    },
  }
}

test('every row of a search under the cap, page after page, in order, with the sort asked', async () => {
  const calls: Paging[] = []
  const progress: [number, number][] = []
  const view = await readView(
    fakeSearch(2_345, 2_000, calls),
    'lenses',
    { byPriceList: false },
    'retailPrice,desc',
    (read, of) => progress.push([read, of]),
    new AbortController().signal,
  )
  assert.equal(view.total, 2_345)
  assert.deepEqual(
    view.items.map((item) => item.n),
    Array.from({ length: 2_345 }, (_, i) => i),
  )
  assert.ok(calls.every((call) => call.sort === 'retailPrice,desc'))
  assert.deepEqual(progress.at(-1), [2_345, 2_345])
})

test('a search larger than the cap gives the first rows up to the cap and its whole total', async () => {
  const calls: Paging[] = []
  const view = await readView(
    fakeSearch(25_000, 500, calls),
    'lenses',
    { byPriceList: false },
    '',
    () => {},
    new AbortController().signal,
  )
  assert.equal(view.total, 25_000)
  assert.equal(view.items.length, EXPORT_CAP)
  assert.equal(view.items.at(-1)?.n, EXPORT_CAP - 1)
  assert.equal(calls.length, EXPORT_CAP / 500, 'no page past the cap is asked for')
})
