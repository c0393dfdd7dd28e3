import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { byBrand, type Row, rowsOf, tableOf } from '../../../test/fixtures/index-tables.js'
import { glasses } from '../kinds/kinds.js'
import type { IndexedSearch } from './conditions.js'
import { matviewTable, priceTable } from './load.js'
import type { IdentifiedTable } from './merge.js'
import { type PublishedKind, type PublishedTable, Publisher, ReplicaTables } from './replica.js'
import type { Column } from './table.js'

/*
 * The index's tables as a search thread holds them: published whole once, then after each write only what it
 * changed (a column the write left alone crosses as its name, a dictionary as the values added to it), every array
 * in shared memory so it crosses by reference; installed both tables at once, or not at all.
 */

const frames: Row[] = [
  { id: 4, brand: 'Ray-Ban', price: '1200.50' },
  { id: 1, brand: 'Очки «Зрение»', price: null },
  { id: 9, brand: null, price: '7' },
]
const entries: Row[] = [
  { id: 2, brand: 'Carrera', price: '99.99' },
  { id: 3, brand: 'Ray-Ban', price: '150' },
]

/** The normal forms of the non-ASCII brand, as the database gives them at a load. */
const forms = new Map([['Очки «Зрение»', { norm: 'очки «зрение»', lower: 'очки «зрение»' }]])

function indexed(matview: IdentifiedTable, prices: IdentifiedTable, generation: number): IndexedSearch {
  for (const table of [matview, prices]) (table.columns.get('brand') as Column).setForms(forms)
  return {
    matview: matviewTable(glasses, matview, { matviewVersion: 1, refreshedGeneration: 1 }, false),
    prices: priceTable(glasses, prices, generation, false),
  }
}

/** What crosses to a search thread: the message as a structured clone (shared memory stays shared). */
const crossed = (message: PublishedKind): PublishedKind => structuredClone(message)

/** Every array of a published table, which must live in shared memory to cross without a copy. */
function arraysOf(table: PublishedTable): ArrayBufferView[] {
  return [
    ...table.columns.flatMap((column) => ('codes' in column ? [column.codes] : [])),
    ...table.ids,
    table.tie,
    table.rowByTie,
    ...table.orders.map((order) => order.rows),
  ]
}

/** The price list after a write of one entry's price: the other columns are the very same objects. */
function withPrice(prices: IdentifiedTable, id: number, price: string): IdentifiedTable {
  const column = prices.columns.get('price') as Column
  const values = Array.from({ length: prices.rows }, (_, row) =>
    prices.ids[0]?.[row] === id ? price : column.values[column.codes[row] as number] || null,
  )
  return { ...prices, columns: new Map([...prices.columns, ['price', column.extend(values, new Map())]]) }
}

describe('a search thread’s replica of the index', () => {
  test('is published whole once, by reference, and holds the same rows and values', () => {
    const tables = indexed(tableOf(frames, byBrand), tableOf(entries, byBrand), 5)
    // Built before the publication (as a snapshot restores it): it crosses with the dictionary.
    const ranks = (tables.matview.columns.get('brand') as Column).ranks()
    const message = new Publisher().publish(glasses.path, tables)
    assert.ok(message.matview !== 'same' && message.prices !== 'same')
    for (const table of [message.matview, message.prices]) {
      for (const column of table.columns) {
        assert.ok('codes' in column && 'values' in column.dictionary, `${column.name} crosses whole`)
      }
      for (const array of arraysOf(table)) {
        assert.ok(array.buffer instanceof SharedArrayBuffer, 'every array crosses by reference')
      }
    }
    const replica = new ReplicaTables([glasses])
    const held = replica.install(crossed(message))
    assert.deepEqual(rowsOf(held.matview), rowsOf(tables.matview))
    assert.deepEqual(rowsOf(held.prices), rowsOf(tables.prices))
    assert.equal(held.prices.dataGeneration, 5)
    // A non-ASCII value's normal forms cross with it: a substring filter on the thread finds it as the index does.
    const brand = held.matview.columns.get('brand') as Column
    const original = tables.matview.columns.get('brand') as Column
    assert.deepEqual(brand.norms, original.norms)
    const kept = new Map(brand.kept())
    assert.ok(kept.get('ranks') instanceof Uint32Array, 'the ranks built before came with the column')
    assert.deepEqual([...(kept.get('ranks') as Uint32Array)], [...ranks])
  })

  test('after a write, only what changed crosses, and the rest is the very table and column held', () => {
    const publisher = new Publisher()
    const replica = new ReplicaTables([glasses])
    const first = indexed(tableOf(frames, byBrand), tableOf(entries, byBrand), 5)
    const before = replica.install(crossed(publisher.publish(glasses.path, first)))

    const second = { matview: first.matview, prices: priceTable(glasses, withPrice(first.prices, 2, '105.00'), 6) }
    const message = publisher.publish(glasses.path, second)
    assert.equal(message.matview, 'same', 'the matview did not change')
    assert.ok(message.prices !== 'same')
    const byName = new Map(message.prices.columns.map((column) => [column.name, column]))
    assert.deepEqual(byName.get('brand'), { name: 'brand', kept: true })
    const price = byName.get('price')
    assert.ok(price && 'dictionary' in price && 'added' in price.dictionary)
    assert.deepEqual(price.dictionary.added, ['105.00'], 'only the new value crosses')

    const after = replica.install(crossed(message))
    assert.equal(after.matview, before.matview, 'the same matview table, with what it built kept')
    assert.equal(after.prices.columns.get('brand'), before.prices.columns.get('brand'), 'the same brand column')
    assert.deepEqual(rowsOf(after.prices), rowsOf(second.prices))
    assert.equal(after.prices.dataGeneration, 6)
  })

  test('a publication out of turn is refused and the kind dropped, until it is published whole again', () => {
    const publisher = new Publisher()
    const replica = new ReplicaTables([glasses])
    const first = indexed(tableOf(frames, byBrand), tableOf(entries, byBrand), 5)
    publisher.publish(glasses.path, first) // lost on the way
    const second = { matview: first.matview, prices: priceTable(glasses, withPrice(first.prices, 3, '151'), 6) }
    assert.throws(() => replica.install(crossed(publisher.publish(glasses.path, second))), /publication 2/)
    assert.equal(replica.tables(glasses.path), undefined, 'nothing of the kind is held')

    publisher.forget(glasses.path)
    const whole = publisher.publish(glasses.path, second)
    const held = replica.install(crossed(whole))
    assert.deepEqual(rowsOf(held.prices), rowsOf(second.prices))
  })

  test('takes what the index’s thread built of the tables it holds, by reference, and not of older ones', () => {
    const publisher = new Publisher()
    const replica = new ReplicaTables([glasses])
    const first = indexed(tableOf(frames, byBrand), tableOf(entries, byBrand), 5)
    replica.install(crossed(publisher.publish(glasses.path, first)))
    const brand = first.matview.columns.get('brand') as Column
    const built = { postings: brand.postings, ranks: brand.ranks() }
    const message = publisher.built(glasses.path, first)
    assert.ok(message)

    const held = replica.adoptBuilt(structuredClone(message))
    const column = held?.matview.columns.get('brand')
    const rows = column?.builtPostings?.rows
    assert.ok(rows, 'the postings are taken, not built again')
    assert.ok(rows.buffer instanceof SharedArrayBuffer, 'in shared memory: one copy')
    assert.deepEqual([...rows], [...built.postings.rows])
    assert.deepEqual([...column.ranks()], [...built.ranks])

    // Built for tables the thread no longer holds: nothing is taken.
    const second = { matview: first.matview, prices: priceTable(glasses, withPrice(first.prices, 2, '1.00'), 6) }
    replica.install(crossed(publisher.publish(glasses.path, second)))
    assert.equal(replica.adoptBuilt(structuredClone(message)), undefined)
    assert.equal(publisher.built(glasses.path, first), undefined, 'the index gives only what the thread holds')
  })
})
