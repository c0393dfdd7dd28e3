import { compareDecimal, type DecimalValue, parseDecimal } from '../../domain/decimal.js'
import type { ValueType } from '../kinds/kind.js'
import type { PackedPostings } from '../search/packed-postings.js'
import { asciiLower, asciiNorm, compareCodePoints } from './text.js'

/*
 * A table in memory: rows in a fixed order (the order SQL gives them without a requested sort), each column
 * dictionary-coded. Code 0 is NULL in every column; codes 1… are the column's distinct values as the database
 * printed them. A value is kept once per column however many rows carry it, so a million rows cost a few bytes per
 * column each. Per column, on demand: the rows of each value (postings, for filters), the values' ranks in
 * PostgreSQL's order (for sorts) and their normalised text (for substring filters).
 */

export const NULL_CODE = 0

export type Codes = Uint8Array | Uint16Array | Uint32Array

/** A column's postings as far as they are built: the offsets alone (enough to count), or the rows too. */
export interface BuiltPostings {
  readonly offsets: Uint32Array
  readonly rows?: Uint32Array | undefined
}

/** Per value: what `optics_norm` and `lower` make of it. Computed by the caller for non-ASCII values. */
export interface TextForms {
  readonly norm: string
  readonly lower: string
}

/**
 * What a snapshot keeps of a column beside its rows (snapshot.ts): what derives from its values alone and costs a
 * restart most to build again at a million rows (sorting hundreds of thousands of texts, n-gram postings), so a
 * restored kind answers its first requests as fast as a warmed one: an array, or postings by numeric or text keys.
 */
export type KeptValue = Uint32Array | PackedPostings<number> | PackedPostings<string>

/**
 * The memo keys whose values snapshots keep: the n-gram postings of a large dictionary (matching.ts), the ranks of
 * its normal forms (a listing's sort), its codes in rank order (facets) and its suggestions' trigram postings
 * (field-values.ts). Named here, so a build reads back the
 * very keys it writes, whichever modules it has loaded.
 */
export const KEPT_MEMOS = {
  grams2: 'grams2',
  grams3: 'grams3',
  normRanks: 'norm ranks',
  codesByRank: 'codes by rank',
  trigrams: 'suggestion trigrams',
} as const
const keptMemoKeys = new Set<string>(Object.values(KEPT_MEMOS))

/** The values' ranks, kept beside the memos under these names. */
const RANKS = 'ranks'
const LOWER_RANKS = 'lower ranks'

export class Column {
  readonly name: string
  readonly type: ValueType
  /** Code → the value as the database printed it (index 0, NULL, holds ''). */
  readonly values: readonly string[]
  /** Row → code. */
  readonly codes: Codes
  /** Code → the value as JSON carries it: text, or a number (display only). */
  readonly json: readonly (string | number | null)[]
  #offsets: Uint32Array | undefined
  #postings: { offsets: Uint32Array; rows: Uint32Array } | undefined
  #ranks: Uint32Array | undefined
  #lowerRanks: Uint32Array | undefined
  #decimals: (DecimalValue | undefined)[] | undefined
  #norms: string[] | undefined
  #lowers: string[] | undefined
  // Derived from the values alone: shared by the columns of later data versions with the same values.
  #memo = new Map<string, unknown>()
  // Derived from the rows too.
  readonly #rowMemo = new Map<string, unknown>()
  // Value → code; shared (and extended) by the columns of later data versions, see {@link extend}.
  #codeOf: Map<string, number> | undefined

  constructor(name: string, type: ValueType, values: string[], codes: Codes, json?: (string | number | null)[]) {
    this.name = name
    this.type = type
    this.values = values
    this.codes = codes
    this.json =
      json ?? values.map((value, code) => (code === NULL_CODE ? null : type === 'text' ? value : Number(value)))
  }

  /** A value derived from the column's values (not its rows), computed once. */
  memo<T>(key: string, make: () => T): T {
    if (!this.#memo.has(key)) this.#memo.set(key, make())
    return this.#memo.get(key) as T
  }

  /** What a snapshot keeps of what is built so far ({@link KeptValue}), by name. */
  kept(): [string, KeptValue][] {
    const kept: [string, KeptValue][] = []
    if (this.#ranks) kept.push([RANKS, this.#ranks])
    if (this.#lowerRanks) kept.push([LOWER_RANKS, this.#lowerRanks])
    for (const [key, value] of this.#memo) if (keptMemoKeys.has(key)) kept.push([key, value as KeptValue])
    return kept
  }

  /**
   * Takes what a snapshot kept under `key` (see {@link kept}) for these same values; a key this build does not keep,
   * or a value that cannot be one of this column's (its size, a code out of range), is refused with an error.
   */
  restoreKept(key: string, value: KeptValue): void {
    const distinct = this.values.length
    const fits = (array: Uint32Array, length: number, below: number) =>
      array.length === length && array.every((item) => item < below)
    if (value instanceof Uint32Array) {
      // Ranks per code (at most one past the last value's, for NULL), or codes in some order (NULL's left out).
      if (!(fits(value, distinct, distinct + 1) || fits(value, distinct - 1, distinct))) {
        throw new Error(`column ${this.name}: ${key} of another size`)
      }
    } else {
      const { offsets, items, slots } = value
      let ordered = offsets.length === slots.size + 1 && offsets[0] === 0 && offsets[slots.size] === items.length
      for (let slot = 0; ordered && slot < slots.size; slot++) ordered = offsets[slot]! <= offsets[slot + 1]!
      if (!ordered || !items.every((item) => item < distinct)) throw new Error(`column ${this.name}: ${key} differs`)
    }
    if (key === RANKS || key === LOWER_RANKS) {
      if (!(value instanceof Uint32Array) || value.length !== distinct) {
        throw new Error(`column ${this.name}: ${key} differs`)
      }
      if (key === RANKS) this.#ranks = value
      else this.#lowerRanks = value
      return
    }
    if (!keptMemoKeys.has(key)) throw new Error(`column ${this.name}: ${key} is not kept by this build`)
    this.#memo.set(key, value)
  }

  /** A value derived from the column's rows, computed once. */
  rowMemo<T>(key: string, make: () => T): T {
    if (!this.#rowMemo.has(key)) this.#rowMemo.set(key, make())
    return this.#rowMemo.get(key) as T
  }

  /** The code of `value`, or undefined where no row of this column carries it. */
  codeOf(value: string): number | undefined {
    if (!this.#codeOf) {
      this.#codeOf = new Map()
      for (let code = 1; code < this.values.length; code++) this.#codeOf.set(this.values[code] as string, code)
    }
    const code = this.#codeOf.get(value)
    // The map may have been extended for a later version of the column: codes past this one's values are not here.
    return code !== undefined && code < this.values.length ? code : undefined
  }

  /** Of `values`, those this column does not hold (each once). */
  newValues(values: readonly (string | null)[]): string[] {
    const found = new Set<string>()
    for (const value of values) if (value !== null && this.codeOf(value) === undefined) found.add(value)
    return [...found]
  }

  /**
   * A column of the same name holding `values` as its rows, its dictionary this one's with the new values added
   * at the end (so this column's codes keep their meaning in it). `forms`: the normal forms of the new non-ASCII
   * text values. What derives from the values alone is shared where no value is new.
   */
  extend(values: readonly (string | null)[], forms: ReadonlyMap<string, TextForms>): Column {
    const added = this.newValues(values)
    const distinct = this.values.length + added.length
    this.codeOf('')
    const codeOf = this.#codeOf as Map<string, number>
    for (let index = 0; index < added.length; index++) codeOf.set(added[index] as string, this.values.length + index)
    const codes = codesFor(distinct, values.length)
    for (let row = 0; row < values.length; row++) {
      const value = values[row] as string | null
      codes[row] = value === null ? NULL_CODE : (codeOf.get(value) as number)
    }
    if (added.length === 0) return this.withCodes(codes)
    const column = this.withAddedValues(added, codes, forms)
    column.#codeOf = codeOf
    return column
  }

  /**
   * A column of the same name whose dictionary is this one's with `added` at the end, holding `codes` as its rows
   * (in that dictionary); `forms`: the normal forms of the added non-ASCII text values.
   */
  withAddedValues(added: readonly string[], codes: Codes, forms: ReadonlyMap<string, TextForms>): Column {
    const dictionary = [...this.values, ...added]
    const json = [...this.json]
    for (const value of added) json.push(this.type === 'text' ? value : Number(value))
    const column = new Column(this.name, this.type, dictionary, codes, json)
    if (this.type === 'text' && this.#norms) {
      const more = new Column(this.name, this.type, ['', ...added], new Uint8Array(0))
      more.setForms(forms)
      column.#norms = [...this.#norms, ...more.norms.slice(1)]
      column.#lowers = [...(this.#lowers as string[]), ...more.lowers.slice(1)]
    } else if (this.type === 'text') column.setForms(forms)
    return column
  }

  /** The normal forms of the non-ASCII values among codes `from` and after (what {@link setForms} must be given). */
  nonAsciiForms(from = 1): Map<string, TextForms> {
    const forms = new Map<string, TextForms>()
    if (this.type !== 'text') return forms
    for (let code = Math.max(from, 1); code < this.values.length; code++) {
      const value = this.values[code] as string
      if (asciiNorm(value) === undefined) {
        forms.set(value, { norm: this.norms[code] as string, lower: this.lowers[code] as string })
      }
    }
    return forms
  }

  /** The same values with other rows (`codes` in this column's dictionary), sharing what derives from the values. */
  withCodes(codes: Codes): Column {
    const column = new Column(
      this.name,
      this.type,
      this.values as string[],
      codes,
      this.json as (string | number | null)[],
    )
    column.#memo = this.#memo
    column.#codeOf = this.#codeOf
    column.#ranks = this.#ranks
    column.#lowerRanks = this.#lowerRanks
    column.#decimals = this.#decimals
    column.#norms = this.#norms
    column.#lowers = this.#lowers
    return column
  }

  /**
   * The same rows with a dictionary of the values they hold (`used[code]` set), in the same relative order: what
   * derives from the values is computed again on first use, the normal forms excepted (kept).
   */
  compacted(used: Uint8Array): Column {
    const newCode = new Uint32Array(this.values.length)
    const values: string[] = ['']
    const json: (string | number | null)[] = [null]
    for (let code = 1; code < this.values.length; code++) {
      if (!used[code]) continue
      newCode[code] = values.length
      values.push(this.values[code] as string)
      json.push(this.json[code] as string | number | null)
    }
    const codes = codesFor(values.length, this.codes.length)
    for (let row = 0; row < codes.length; row++) codes[row] = newCode[this.codes[row] as number] as number
    const column = new Column(this.name, this.type, values, codes, json)
    if (this.#norms && this.#lowers) {
      const [norms, lowers] = [this.#norms, this.#lowers]
      column.#norms = values.map((_, code) => (code === NULL_CODE ? (norms[NULL_CODE] as string) : ''))
      column.#lowers = values.map((_, code) => (code === NULL_CODE ? (lowers[NULL_CODE] as string) : ''))
      for (let code = 1; code < this.values.length; code++) {
        if (!used[code]) continue
        const at = newCode[code] as number
        column.#norms[at] = norms[code] as string
        column.#lowers[at] = lowers[code] as string
      }
    }
    return column
  }

  get distinct(): number {
    return this.values.length
  }

  /** The non-ASCII values, whose normal forms the database must give ({@link setForms}). */
  nonAsciiValues(): string[] {
    if (this.type !== 'text') return []
    return this.values.filter((value, code) => code !== NULL_CODE && asciiNorm(value) === undefined)
  }

  /** Sets each value's normal forms; `given` holds those of the non-ASCII values. */
  setForms(given: ReadonlyMap<string, TextForms>): void {
    const norms: string[] = new Array(this.values.length)
    const lowers: string[] = new Array(this.values.length)
    for (let code = 0; code < this.values.length; code++) {
      const value = this.values[code] as string
      const norm = asciiNorm(value)
      if (norm !== undefined) {
        const lower = asciiLower(value) as string
        norms[code] = norm
        lowers[code] = lower === norm ? norm : lower
        continue
      }
      const forms = given.get(value)
      if (!forms) throw new Error(`column ${this.name}: no normal form for a value`)
      norms[code] = forms.norm
      lowers[code] = forms.lower
    }
    this.#norms = norms
    this.#lowers = lowers
  }

  /** `optics_norm` of each value (text columns). */
  get norms(): readonly string[] {
    if (!this.#norms) this.setForms(new Map())
    return this.#norms as string[]
  }

  /** `lower` of each value (text columns). */
  get lowers(): readonly string[] {
    if (!this.#lowers) this.setForms(new Map())
    return this.#lowers as string[]
  }

  /** The same values with the rows rearranged: row `i` of the result is row `order[i]` of this column. */
  permuted(order: Uint32Array): Column {
    const codes = codesFor(this.values.length, order.length)
    for (let index = 0; index < order.length; index++) codes[index] = this.codes[order[index] as number] as number
    return this.withCodes(codes)
  }

  /** Each value as an exact decimal (numeric columns). */
  get decimals(): readonly (DecimalValue | undefined)[] {
    this.#decimals ??= this.values.map((value, code) => (code === NULL_CODE ? undefined : parseDecimal(value)))
    return this.#decimals
  }

  /**
   * Where each code's rows start in its postings: code c is carried by `offsets[c + 1] - offsets[c]` rows. Counting
   * needs no more, so the rows themselves are built only for a column something filters by ({@link postings}).
   */
  get offsets(): Uint32Array {
    if (!this.#offsets) {
      const offsets = sharedUint32(this.values.length + 1)
      const { codes } = this
      for (let row = 0; row < codes.length; row++) {
        const slot = (codes[row] as number) + 1
        offsets[slot] = (offsets[slot] as number) + 1
      }
      for (let code = 0; code < this.values.length; code++) {
        offsets[code + 1] = (offsets[code + 1] as number) + (offsets[code] as number)
      }
      this.#offsets = offsets
    }
    return this.#offsets
  }

  /** The rows of each code, ascending: rows of code c are `rows[offsets[c]] … rows[offsets[c + 1] - 1]`. */
  get postings(): { offsets: Uint32Array; rows: Uint32Array } {
    if (!this.#postings) {
      const { offsets, codes } = this
      const next = offsets.slice(0, this.values.length)
      const rows = sharedUint32(codes.length)
      for (let row = 0; row < codes.length; row++) {
        const code = codes[row] as number
        const at = next[code] as number
        next[code] = at + 1
        rows[at] = row
      }
      this.#postings = { offsets, rows }
    }
    return this.#postings
  }

  /**
   * What is built of the postings already (what a search thread is given of them, replica.ts): the offsets, and the
   * rows if built.
   */
  get builtPostings(): BuiltPostings | undefined {
    return this.#postings ?? (this.#offsets ? { offsets: this.#offsets } : undefined)
  }

  /** Takes the postings built for these same rows elsewhere (another thread's copy of the column); refused if they cannot be. */
  adoptPostings(postings: BuiltPostings): void {
    const { offsets, rows } = postings
    if (offsets.length !== this.values.length + 1 || (rows && rows.length !== this.codes.length)) {
      throw new Error(`column ${this.name}: postings of another size`)
    }
    this.#offsets ??= offsets
    if (rows) this.#postings ??= { offsets: this.#offsets, rows }
  }

  /** How many rows carry code `code`. */
  count(code: number): number {
    const { offsets } = this
    return (offsets[code + 1] as number) - (offsets[code] as number)
  }

  /**
   * Each code's rank in PostgreSQL's ascending order (text in byte order, numbers by value; equal values share a
   * rank); NULL ranks after every value. `ignoreCase`: ranks of `lower(value)`.
   */
  ranks(ignoreCase = false): Uint32Array {
    if (ignoreCase && this.type === 'text') {
      this.#lowerRanks ??= textRanks(this.lowers)
      return this.#lowerRanks
    }
    if (!this.#ranks) {
      this.#ranks =
        this.type === 'text'
          ? textRanks(this.values)
          : this.#rank((code) => this.decimals[code] as DecimalValue, compareDecimal)
    }
    return this.#ranks
  }

  #rank<T>(key: (code: number) => T, compare: (a: T, b: T) => number): Uint32Array {
    const codes = Array.from({ length: this.values.length - 1 }, (_, index) => index + 1)
    codes.sort((a, b) => compare(key(a), key(b)))
    const ranks = sharedUint32(this.values.length)
    let rank = 0
    for (let index = 0; index < codes.length; index++) {
      const code = codes[index] as number
      if (index > 0 && compare(key(codes[index - 1] as number), key(code)) !== 0) rank++
      ranks[code] = rank
    }
    ranks[NULL_CODE] = codes.length === 0 ? 0 : rank + 1
    return ranks
  }
}

/**
 * Dense ranks of texts (index 0, NULL, ranks last) in code point order: JavaScript's own sort where that is the
 * same (no surrogate pairs among them), else the slower comparison.
 */
export function textRanks(texts: readonly string[]): Uint32Array {
  const sorted = texts.slice(1)
  let surrogates = false
  for (const text of sorted) {
    for (let index = 0; index < text.length && !surrogates; index++) surrogates = text.charCodeAt(index) >= 0xd800
    if (surrogates) break
  }
  if (surrogates) sorted.sort(compareCodePoints)
  else sorted.sort()
  const rankOf = new Map<string, number>()
  let rank = -1
  for (let index = 0; index < sorted.length; index++) {
    const text = sorted[index] as string
    if (index === 0 || text !== sorted[index - 1]) rankOf.set(text, ++rank)
  }
  const ranks = sharedUint32(texts.length)
  for (let code = 1; code < texts.length; code++) ranks[code] = rankOf.get(texts[code] as string) as number
  ranks[NULL_CODE] = rank + 1
  return ranks
}

/** Rows of one table being read: values dictionary-coded as they arrive. */
export class ColumnBuilder {
  readonly name: string
  readonly type: ValueType
  readonly #byValue = new Map<string, number>()
  readonly #values: string[] = ['']
  #codes = new Uint32Array(1024)
  #length = 0
  // Rows often repeat the previous row's value (goods of one model arrive together).
  #last: string | null = null
  #lastCode = NULL_CODE

  constructor(name: string, type: ValueType) {
    this.name = name
    this.type = type
  }

  push(value: string | null): void {
    let code = NULL_CODE
    if (value === this.#last) code = this.#lastCode
    else if (value !== null) {
      code = this.#byValue.get(value) ?? 0
      if (code === 0) {
        code = this.#values.length
        // A copy of its own: a value cut from the text read would keep that whole text alive.
        this.#values.push(value.length >= 13 ? Buffer.from(value, 'utf8').toString('utf8') : value)
        this.#byValue.set(value, code)
      }
      this.#last = value
      this.#lastCode = code
    }
    if (this.#length === this.#codes.length) {
      const grown = new Uint32Array(this.#codes.length * 2)
      grown.set(this.#codes)
      this.#codes = grown
    }
    this.#codes[this.#length++] = code
  }

  build(): Column {
    const used = this.#codes.subarray(0, this.#length)
    const codes = codesFor(this.#values.length, used.length)
    codes.set(used)
    return new Column(this.name, this.type, this.#values, codes)
  }
}

/**
 * An array of `rows` codes, as narrow as `distinct` codes allow. Like every array a table's rows keep, it lives in
 * shared memory, so the search threads read the one copy (replica.ts).
 */
export function codesFor(distinct: number, rows: number): Codes {
  return distinct <= 0x100
    ? new Uint8Array(new SharedArrayBuffer(rows))
    : distinct <= 0x10000
      ? new Uint16Array(new SharedArrayBuffer(rows * 2))
      : new Uint32Array(new SharedArrayBuffer(rows * 4))
}

/** `length` zeros in shared memory (see {@link codesFor}). */
export const sharedUint32 = (length: number): Uint32Array<SharedArrayBuffer> =>
  new Uint32Array(new SharedArrayBuffer(length * 4))
export const sharedInt32 = (length: number): Int32Array<SharedArrayBuffer> =>
  new Int32Array(new SharedArrayBuffer(length * 4))

/** Rows in their stored order, by column name; `tie` orders rows by the SQL path's unique tiebreak. */
export interface Table {
  readonly rows: number
  readonly columns: ReadonlyMap<string, Column>
  /** Row → its rank in the tiebreak order (`sku_id, price_id` of a matview row, `id` of an entry). */
  readonly tie: Uint32Array
  /** Tiebreak rank → row. */
  readonly rowByTie: Uint32Array
}

/**
 * One stable counting-sort pass: `order` rearranged by `keys[row]` ∈ [0, range), rows with equal keys keeping their
 * order. Passes from the least significant key to the most significant one sort by all of them (LSD radix sort).
 */
export function countingPass(order: Uint32Array, keys: ArrayLike<number>, range: number): Uint32Array<ArrayBufferLike> {
  const starts = new Uint32Array(range + 1)
  for (let index = 0; index < order.length; index++) {
    const slot = (keys[order[index] as number] as number) + 1
    starts[slot] = (starts[slot] as number) + 1
  }
  for (let value = 0; value < range; value++)
    starts[value + 1] = (starts[value + 1] as number) + (starts[value] as number)
  const sorted = new Uint32Array(order.length)
  for (let index = 0; index < order.length; index++) {
    const row = order[index] as number
    const value = keys[row] as number
    const at = starts[value] as number
    starts[value] = at + 1
    sorted[at] = row
  }
  return sorted
}

/**
 * Ids as the index keeps them, 4 bytes a row in shared memory: each a whole number below 2^32, checked here, where
 * they are read (a table whose ids do not fit is not indexed: SQL answers for it).
 */
export function idsOf(values: ArrayLike<number>): Uint32Array<SharedArrayBuffer> {
  const ids = sharedUint32(values.length)
  for (let row = 0; row < values.length; row++) {
    const value = values[row] as number
    if (!(Number.isInteger(value) && value >= 0 && value < 2 ** 32)) throw new Error('an id out of the index range')
    ids[row] = value
  }
  return ids
}

/** Rows sorted by ascending integer ids (each below 2^32), the first id most significant: radix passes of 16 bits. */
export function sortByIds(rows: number, ids: readonly Uint32Array[]): Uint32Array {
  let order: Uint32Array = new Uint32Array(rows)
  for (let row = 0; row < rows; row++) order[row] = row
  const digits = new Uint16Array(rows)
  for (let index = ids.length - 1; index >= 0; index--) {
    const id = ids[index] as Uint32Array
    for (let row = 0; row < rows; row++) digits[row] = (id[row] as number) & 0xffff
    order = countingPass(order, digits, 0x10000)
    for (let row = 0; row < rows; row++) digits[row] = Math.floor((id[row] as number) / 0x10000)
    order = countingPass(order, digits, 0x10000)
  }
  return order
}

/** Per row, the rank of its value in `column` (ascending, NULL last). */
export function rowRanks(column: Column): Uint32Array {
  const ranks = column.ranks()
  const { codes } = column
  const keys = new Uint32Array(codes.length)
  for (let row = 0; row < codes.length; row++) keys[row] = ranks[codes[row] as number] as number
  return keys
}

/** `tie` and `rowByTie` from the rows in tiebreak order. */
export function tieOf(rowByTie: Uint32Array): Pick<Table, 'tie' | 'rowByTie'> {
  const tie = sharedUint32(rowByTie.length)
  for (let rank = 0; rank < rowByTie.length; rank++) tie[rowByTie[rank] as number] = rank
  return { tie, rowByTie }
}
