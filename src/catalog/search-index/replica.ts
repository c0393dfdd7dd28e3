import type { Kind, ValueType } from '../kinds/kind.js'
import type { IndexedSearch } from './conditions.js'
import { computedEntryRows, keepComputedEntryRows } from './entry-rows.js'
import { computedCooccurrences, keepComputedCooccurrence } from './facet-counts.js'
import { computedOrders, type KeySpec, keepComputedOrder } from './kept-orders.js'
import { type MatviewTable, matviewTable, type PriceTable, priceTable } from './load.js'
import type { IdentifiedTable } from './merge.js'
import { type BuiltPostings, type Codes, Column, type KeptValue, type Table, type TextForms } from './table.js'

/*
 * The index's tables as the search threads hold them (SEARCH_THREADS; replica-worker.ts). The index's own thread
 * loads and brings the tables forward; each time a kind's tables are replaced it publishes them to every search
 * thread, which installs them whole, both tables of the kind at once, so a thread answers from one version or the
 * other and never from a mix.
 *
 * One copy in memory: every array a table keeps of its rows (codes, ids, tiebreak order, the orders computed for
 * sorts) lives in shared memory (table.ts), and crosses as a reference, not a copy. What crosses by copy is text:
 * a column's dictionary crosses once, and after a write only the values the write added to it; a column the write
 * left alone crosses as its name. Once the index's thread has warmed a kind read or restored in full (warm-up.ts),
 * it gives what it built (postings, ranks, n-gram postings, orders, facets' co-occurrence counts, the SKU ↔ entry
 * pairing: {@link PublishedBuilt}), by reference too; a search thread builds only what it needs before that, and
 * what is left.
 *
 * A publication refers to the one before it for the same thread and kind (`sequence`); a thread that missed one or
 * failed to install it asks for the kind whole again.
 */

export type PublishedColumn =
  /** The very column published last (same values, same rows). */
  | { readonly name: string; readonly kept: true }
  | {
      readonly name: string
      readonly type: ValueType
      readonly codes: Codes
      readonly dictionary:
        | { readonly same: true }
        /** The dictionary published last with these values added at its end. */
        | { readonly added: readonly string[]; readonly forms: readonly [string, TextForms][] }
        | { readonly values: readonly string[]; readonly forms: readonly [string, TextForms][] }
      /**
       * With a whole dictionary: what was built of it already (restored from a snapshot, or built since), so the
       * thread's first answers build none of it again.
       */
      readonly built?: BuiltColumn | undefined
    }

export interface PublishedTable {
  readonly rows: number
  readonly columns: readonly PublishedColumn[]
  readonly ids: readonly Uint32Array[]
  readonly tie: Uint32Array
  readonly rowByTie: Uint32Array
  readonly orders: readonly { specs: KeySpec[]; tieDescending: boolean; rows: Uint32Array }[]
}

export interface PublishedKind {
  readonly kind: string
  readonly sequence: number
  /** 'same': the table published last. */
  readonly matview:
    | 'same'
    | (PublishedTable & { readonly matviewVersion: number; readonly refreshedGeneration: number })
  readonly prices: 'same' | (PublishedTable & { readonly dataGeneration: number })
}

type TableName = 'matview' | 'prices'

/** What one column's values and rows gave, built on the index's thread: its postings and what snapshots keep. */
export interface BuiltColumn {
  readonly name: string
  readonly postings?: BuiltPostings | undefined
  readonly kept: readonly [string, KeptValue][]
}

/**
 * What the index's thread built of a kind's tables once it warmed them (warm-up.ts), for the tables of publication
 * `sequence`: a search thread takes it rather than building it again, and in shared memory it is one copy.
 */
export interface PublishedBuilt {
  readonly kind: string
  readonly sequence: number
  readonly matview: BuiltTable
  readonly prices: BuiltTable
  /** The SKU ↔ entry pairing (entry-rows.ts). */
  readonly entryRows: Int32Array | undefined
}

interface BuiltTable {
  readonly columns: readonly BuiltColumn[]
  readonly orders: PublishedTable['orders']
  /** Facets' co-occurrence counts, by the two columns' names (facet-counts.ts). */
  readonly cooccurrences: readonly [string, string, Uint32Array][]
}

/** The arrays that cross by reference; any other (an array not made in shared memory) is copied into it, once. */
const sharedCopies = new WeakMap<ArrayBufferView, ArrayBufferView>()
function shared<T extends Codes>(array: T): T {
  if (array.buffer instanceof SharedArrayBuffer) return array
  const known = sharedCopies.get(array)
  if (known) return known as T
  const copy = new (array.constructor as new (buffer: SharedArrayBuffer) => T)(new SharedArrayBuffer(array.byteLength))
  copy.set(array as never)
  sharedCopies.set(array, copy)
  return copy
}

/** The index's side: what one search thread holds of each kind, and the next publication for it. */
export class Publisher {
  readonly #held = new Map<string, { sequence: number; matview: IdentifiedTable; prices: IdentifiedTable }>()

  /** The publication of the kind's `tables` to this thread, and what it then holds. */
  publish(kind: string, tables: IndexedSearch): PublishedKind {
    const before = this.#held.get(kind)
    const sequence = (before?.sequence ?? 0) + 1
    const matview = tables.matview
    const prices = tables.prices
    const message: PublishedKind = {
      kind,
      sequence,
      matview:
        before?.matview === matview
          ? 'same'
          : {
              ...publishTable(matview, before?.matview),
              matviewVersion: matview.matviewVersion,
              refreshedGeneration: matview.refreshedGeneration,
            },
      prices:
        before?.prices === prices
          ? 'same'
          : { ...publishTable(prices, before?.prices), dataGeneration: prices.dataGeneration },
    }
    this.#held.set(kind, { sequence, matview, prices })
    return message
  }

  /** What was built of the kind's `tables`, if they are the ones this thread was given last. */
  built(kind: string, tables: IndexedSearch): PublishedBuilt | undefined {
    const held = this.#held.get(kind)
    if (!held || held.matview !== tables.matview || held.prices !== tables.prices) return undefined
    const builtOf = (table: Table): BuiltTable => ({
      columns: [...table.columns].map(([name, column]) => builtColumn(name, column)),
      orders: sharedOrders(table),
      cooccurrences: computedCooccurrences(table),
    })
    return {
      kind,
      sequence: held.sequence,
      matview: builtOf(tables.matview),
      prices: builtOf(tables.prices),
      entryRows: computedEntryRows(tables.matview, tables.prices),
    }
  }

  /** The thread lost what it held of the kind: the next publication is whole. */
  forget(kind: string): void {
    this.#held.delete(kind)
  }
}

function publishTable(table: IdentifiedTable, before: IdentifiedTable | undefined): PublishedTable {
  const columns: PublishedColumn[] = []
  for (const [name, column] of table.columns) {
    const previous = before?.columns.get(name)
    if (previous === column) {
      columns.push({ name, kept: true })
      continue
    }
    const codes = shared(column.codes)
    const { type } = column
    let dictionary: Extract<PublishedColumn, { codes: Codes }>['dictionary']
    if (previous && previous.values === column.values) dictionary = { same: true }
    else if (previous && extends_(column.values, previous.values)) {
      dictionary = {
        added: column.values.slice(previous.values.length),
        forms: [...column.nonAsciiForms(previous.values.length)],
      }
    } else dictionary = { values: column.values, forms: [...column.nonAsciiForms()] }
    // A whole dictionary crosses with what was built of it.
    const built = 'values' in dictionary ? builtColumn(name, column) : undefined
    columns.push({ name, type, codes, dictionary, built })
  }
  return {
    rows: table.rows,
    columns,
    ids: table.ids.map(shared),
    tie: shared(table.tie),
    rowByTie: shared(table.rowByTie),
    orders: sharedOrders(table),
  }
}

/** The orders computed for the table, as they cross. */
function sharedOrders(table: Table): PublishedTable['orders'] {
  return computedOrders(table).map((order) => ({ ...order, rows: shared(order.rows) }))
}

function builtColumn(name: string, column: Column): BuiltColumn {
  return {
    name,
    postings: column.builtPostings,
    kept: column.kept().map(([key, value]) => [key, standalone(value)]),
  }
}

/** Takes what was built of a column elsewhere ({@link builtColumn}). */
function adoptBuilt(column: Column, built: BuiltColumn): void {
  if (built.postings) column.adoptPostings(built.postings)
  for (const [key, value] of built.kept) column.restoreKept(key, value)
}

/**
 * A kept value as it may cross: an array in shared memory by reference, any other copied (a view into a larger
 * buffer would copy all of it).
 */
function standalone(value: KeptValue): KeptValue {
  const alone = (array: Uint32Array) =>
    array.buffer instanceof SharedArrayBuffer || array.byteLength === array.buffer.byteLength ? array : array.slice()
  return value instanceof Uint32Array
    ? alone(value)
    : { ...value, offsets: alone(value.offsets), items: alone(value.items) }
}

/** Whether `values` are `base` with more values at the end. */
function extends_(values: readonly string[], base: readonly string[]): boolean {
  if (values.length <= base.length) return false
  for (let code = 0; code < base.length; code++) if (values[code] !== base[code]) return false
  return true
}

/** A search thread's side: the tables of each kind, as last published. */
export class ReplicaTables {
  readonly #held = new Map<string, { sequence: number; tables: IndexedSearch }>()
  readonly #kinds: ReadonlyMap<string, Kind>

  constructor(kinds: readonly Kind[]) {
    this.#kinds = new Map(kinds.map((kind) => [kind.path, kind]))
  }

  tables(kind: string): IndexedSearch | undefined {
    return this.#held.get(kind)?.tables
  }

  get kindsHeld(): number {
    return this.#held.size
  }

  /**
   * Installs a publication: both tables at once, or nothing (an error, and the kind is dropped: it must be
   * published whole again).
   */
  install(published: PublishedKind): IndexedSearch {
    const kind = this.#kinds.get(published.kind)
    if (!kind) throw new Error(`no kind '${published.kind}'`)
    const before = this.#held.get(published.kind)
    try {
      if (published.sequence !== (before?.sequence ?? 0) + 1) {
        throw new Error(`publication ${published.sequence} of ${kind.path} after ${before?.sequence ?? 'none'}`)
      }
      const matview: MatviewTable =
        published.matview === 'same'
          ? (held(before, 'matview') as MatviewTable)
          : matviewTable(kind, installTable(published.matview, before?.tables.matview), published.matview, false)
      const prices: PriceTable =
        published.prices === 'same'
          ? (held(before, 'prices') as PriceTable)
          : priceTable(
              kind,
              installTable(published.prices, before?.tables.prices),
              published.prices.dataGeneration,
              false,
            )
      for (const [table, given] of [
        [matview, published.matview],
        [prices, published.prices],
      ] as const) {
        if (given === 'same') continue
        for (const order of given.orders) keepComputedOrder(table, order.specs, order.tieDescending, order.rows)
      }
      const tables = { matview, prices }
      this.#held.set(kind.path, { sequence: published.sequence, tables })
      return tables
    } catch (error) {
      this.#held.delete(kind.path)
      throw error
    }
  }

  /**
   * Takes what the index's thread built of the tables of publication `built.sequence`; the tables held, or undefined
   * where they are other tables by now (nothing taken).
   */
  adoptBuilt(built: PublishedBuilt): IndexedSearch | undefined {
    const held = this.#held.get(built.kind)
    if (!held || held.sequence !== built.sequence) return undefined
    for (const name of ['matview', 'prices'] as const) {
      const table = held.tables[name]
      for (const given of built[name].columns) {
        const column = table.columns.get(given.name)
        if (!column) throw new Error(`column ${given.name}: not in the ${name} table held`)
        adoptBuilt(column, given)
      }
      for (const order of built[name].orders) keepComputedOrder(table, order.specs, order.tieDescending, order.rows)
      for (const [by, of, counts] of built[name].cooccurrences) {
        const [byColumn, ofColumn] = [table.columns.get(by), table.columns.get(of)]
        if (byColumn && ofColumn) keepComputedCooccurrence(byColumn, ofColumn, counts)
      }
    }
    if (built.entryRows) keepComputedEntryRows(held.tables.matview, held.tables.prices, built.entryRows)
    return held.tables
  }
}

function held(before: { tables: IndexedSearch } | undefined, name: TableName): Table {
  const table = before?.tables[name]
  if (!table) throw new Error(`the ${name} table published last is not held`)
  return table
}

function installTable(published: PublishedTable, before: Table | undefined): IdentifiedTable {
  const columns = new Map<string, Column>()
  for (const given of published.columns) {
    const previous = before?.columns.get(given.name)
    if ('kept' in given) {
      if (!previous) throw new Error(`column ${given.name}: kept, but none was published`)
      columns.set(given.name, previous)
      continue
    }
    const { dictionary } = given
    if ('values' in dictionary) {
      const column = new Column(given.name, given.type, dictionary.values as string[], given.codes)
      if (column.type === 'text') column.setForms(new Map(dictionary.forms))
      if (given.built) adoptBuilt(column, given.built)
      columns.set(given.name, column)
      continue
    }
    if (!previous) throw new Error(`column ${given.name}: its dictionary was not published`)
    columns.set(
      given.name,
      'same' in dictionary
        ? previous.withCodes(given.codes)
        : previous.withAddedValues(dictionary.added, given.codes, new Map(dictionary.forms)),
    )
  }
  return {
    rows: published.rows,
    columns,
    ids: [...published.ids],
    tie: published.tie,
    rowByTie: published.rowByTie,
  }
}
