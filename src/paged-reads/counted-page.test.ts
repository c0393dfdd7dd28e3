import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type CountedPageSource, FENCED_MATCHES, readCountedPage } from './counted-page.js'

/*
 * How a page is read decides whether it costs what its count costs or walks most of a table: no read may look at
 * more rows than the count says match. The source below answers like a table whose matches all sort last: a walk
 * of the first `walk` rows in order finds none of them unless it covers the whole table.
 */

const TABLE_ROWS = 1_000_000

function source(matches: number, options: { walkable: boolean; sort?: boolean }) {
  const reads: { fenced: boolean; walk: number | undefined }[] = []
  const page = { page: 0, size: 10, sort: [] }
  const rows = Array.from({ length: Math.min(10, matches) }, (_, index) => ({ id: TABLE_ROWS - matches + index }))
  const counted: CountedPageSource<{ id: number }> = {
    filtered: true,
    countKey: 'count',
    pageKey: 'page',
    page,
    walkable: options.walkable,
    count: async () => ({ value: matches, version: '1' }),
    currentVersion: async () => '1',
    async readRows(fenced, walk) {
      reads.push({ fenced, walk })
      // The matches are the last rows in order: a walk sees them only if it reaches the end of the table.
      if (walk !== undefined && walk < TABLE_ROWS) return { rows: [], version: undefined }
      return { rows, version: '1' }
    },
  }
  return { counted, reads }
}

test('a page of few matches is read fenced: the matches whole, through their index', async () => {
  const { counted, reads } = source(500, { walkable: true })
  const page = await readCountedPage(counted)
  assert.equal(page.totalElements, 500)
  assert.deepEqual(reads, [{ fenced: true, walk: undefined }])
})

test('many matches clustered late: the walk stops after as many rows as match, then the matches are read fenced', async () => {
  const matches = FENCED_MATCHES * 2
  const { counted, reads } = source(matches, { walkable: true })
  const page = await readCountedPage(counted)
  assert.equal(page.content.length, 10)
  assert.deepEqual(reads, [
    { fenced: false, walk: matches },
    { fenced: true, walk: undefined },
  ])
})

test('many matches spread through the order: the walk fills the page and nothing else is read', async () => {
  const matches = TABLE_ROWS
  const { counted, reads } = source(matches, { walkable: true })
  const page = await readCountedPage(counted)
  assert.equal(page.content.length, 10)
  assert.deepEqual(reads, [{ fenced: false, walk: matches }])
})

test('many matches in an order without an index to walk are read fenced', async () => {
  const { counted, reads } = source(FENCED_MATCHES * 2, { walkable: false })
  await readCountedPage(counted)
  assert.deepEqual(reads, [{ fenced: true, walk: undefined }])
})
