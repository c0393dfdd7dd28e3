import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { buildPage, parsePageRequest, parseSort, resolveTotal } from './page.js'

const options = { defaultSize: 10, maxSize: 2000 }
const read = (query: Record<string, unknown>) => {
  const { page, size } = parsePageRequest(query, options)
  return [page, size]
}

describe('paging parameters, read as Spring reads them', () => {
  test('no parameters give page 0 of the default size', () => {
    assert.deepEqual(read({}), [0, 10])
  })

  test('a blank page or size counts as not given', () => {
    assert.deepEqual(read({ page: '', size: '  ' }), [0, 10])
  })

  test('a page that is negative, not a number or beyond 32 bits becomes 0', () => {
    for (const page of ['-1', 'a', '99999999999', '1.5', '0x10', ' 3']) {
      assert.deepEqual(read({ page }), [0, 10], `page=${page}`)
    }
  })

  test('a size below 1, not a number or beyond 32 bits becomes the default size', () => {
    for (const size of ['0', '-5', 'a', '99999999999', '2.5']) {
      assert.deepEqual(read({ size }), [0, 10], `size=${size}`)
    }
  })

  test('a size above the maximum is clamped to it', () => {
    assert.deepEqual(read({ size: '5000' }), [0, 2000])
    assert.deepEqual(read({ size: '2000' }), [0, 2000])
  })

  test('a leading plus sign is accepted', () => {
    assert.deepEqual(read({ page: '+2', size: '+25' }), [2, 25])
  })

  test('of repeated values the first wins', () => {
    assert.deepEqual(read({ page: ['2', '7'], size: ['5', '50'] }), [2, 5])
  })

  test('the listing default size applies where the caller gives it', () => {
    assert.equal(parsePageRequest({ size: '0' }, { defaultSize: 20, maxSize: 2000 }).size, 20)
  })
})

describe('sort parameters', () => {
  test('a property without a direction sorts ascending, case-sensitively', () => {
    assert.deepEqual(parseSort('brand'), [{ property: 'brand', direction: 'asc', ignoreCase: false }])
  })

  test('the direction is case-insensitive and applies to every property of its value', () => {
    assert.deepEqual(parseSort('brand,model,DESC'), [
      { property: 'brand', direction: 'desc', ignoreCase: false },
      { property: 'model', direction: 'desc', ignoreCase: false },
    ])
  })

  test('repeated sort values keep their own directions, in order', () => {
    assert.deepEqual(parseSort(['brand', 'retailPrice,desc']), [
      { property: 'brand', direction: 'asc', ignoreCase: false },
      { property: 'retailPrice', direction: 'desc', ignoreCase: false },
    ])
  })

  test('ignorecase after the direction is read', () => {
    assert.deepEqual(parseSort('model,asc,IgnoreCase'), [{ property: 'model', direction: 'asc', ignoreCase: true }])
  })

  test('blank values and empty properties are skipped', () => {
    assert.deepEqual(parseSort(['', ' ', ',desc', 'brand,,']), [
      { property: 'brand', direction: 'asc', ignoreCase: false },
    ])
  })

  test('parts of dots only are dropped before the direction is read, as Spring Data drops them', () => {
    for (const value of ['.', '.,ASC', '..,desc', ' . ,asc,ignorecase']) assert.deepEqual(parseSort(value), [], value)
    for (const value of ['.,brand,desc', 'brand,.,desc', 'brand,desc,.']) {
      assert.deepEqual(parseSort(value), [{ property: 'brand', direction: 'desc', ignoreCase: false }], value)
    }
    assert.deepEqual(parseSort('frame.brand'), [{ property: 'frame.brand', direction: 'asc', ignoreCase: false }])
  })
})

describe('the page envelope', () => {
  const request = (page: number, size = 10, sorted = false) => ({
    page,
    size,
    sort: sorted ? [{ property: 'brand', direction: 'asc' as const, ignoreCase: false }] : [],
  })

  test('keys come in the order Jackson writes them', () => {
    assert.deepEqual(Object.keys(buildPage([], request(0), 0)), [
      'content',
      'pageable',
      'totalPages',
      'totalElements',
      'last',
      'size',
      'number',
      'sort',
      'first',
      'numberOfElements',
      'empty',
    ])
    assert.deepEqual(Object.keys(buildPage([], request(0), 0).pageable), [
      'pageNumber',
      'pageSize',
      'sort',
      'offset',
      'paged',
      'unpaged',
    ])
  })

  test('nothing matching: no pages, first and last, empty', () => {
    const page = buildPage([], request(0), 0)
    assert.equal(page.totalPages, 0)
    assert.equal(page.totalElements, 0)
    assert.equal(page.first, true)
    assert.equal(page.last, true)
    assert.equal(page.empty, true)
    assert.equal(page.numberOfElements, 0)
  })

  test('a page past the end is empty and last, and keeps its number and offset', () => {
    const page = buildPage([], request(5), 23)
    assert.deepEqual(
      [page.number, page.pageable.offset, page.totalPages, page.totalElements, page.first, page.last, page.empty],
      [5, 50, 3, 23, false, true, true],
    )
  })

  test('the last, partial page of 23 is page 2 with 3 items', () => {
    const page = buildPage([1, 2, 3], request(2), 23)
    assert.deepEqual([page.numberOfElements, page.first, page.last, page.totalPages], [3, false, true, 3])
  })

  test('the first full page of 23 is not the last', () => {
    const page = buildPage([...Array(10).keys()], request(0), 23)
    assert.deepEqual([page.first, page.last, page.totalPages, page.size], [true, false, 3, 10])
  })

  test('both sort objects reflect whether a sort was asked for', () => {
    assert.deepEqual(buildPage([], request(0, 10, true), 0).sort, { empty: false, sorted: true, unsorted: false })
    assert.deepEqual(buildPage([], request(0, 10, true), 0).pageable.sort, {
      empty: false,
      sorted: true,
      unsorted: false,
    })
    assert.deepEqual(buildPage([], request(0), 0).sort, { empty: true, sorted: false, unsorted: true })
  })

  test('a total the page contradicts is corrected to offset plus items, as PageImpl does', () => {
    assert.equal(buildPage([1, 2], request(1), 5).totalElements, 12)
  })
})

describe('resolving the total', () => {
  const never = async () => assert.fail('the count must not run')

  test('a short first page is the whole result, without counting', async () => {
    assert.equal(await resolveTotal({ page: 0, size: 10, sort: [] }, 7, never), 7)
  })

  test('a short later page ends the result at offset plus its length, without counting', async () => {
    assert.equal(await resolveTotal({ page: 2, size: 10, sort: [] }, 3, never), 23)
  })

  test('a full page or an empty later page needs the count', async () => {
    assert.equal(await resolveTotal({ page: 0, size: 10, sort: [] }, 10, async () => 42), 42)
    assert.equal(await resolveTotal({ page: 9, size: 10, sort: [] }, 0, async () => 42), 42)
  })
})
