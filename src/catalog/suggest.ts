import { type Kysely, type RawBuilder, sql } from 'kysely'
import { invalidField } from '../http/problem.js'
import { dataVersionSql, readDataVersion, searchReads } from './catalog-state.js'
import { normaliseKeyText } from './demo-generator.js'
import { facetFields } from './facets.js'
import type { Kind } from './kind.js'
import type { ResultCache } from './result-cache.js'
import type { SearchIndex } from './search-index/search-index.js'
import { fieldSql } from './search-query.js'

/*
 * Suggestions for what an optician types into one field: the field's values that start with it first, then
 * those that contain it, then, so that a typo ("essilr") still finds "Essilor", those similar to it by trigrams
 * (pg_trgm's measure). Each with how many items have it. The distinct values of a field are read once per data
 * version (one GROUP BY) and kept in the result cache, so each keystroke is answered from memory.
 */

export const MAX_SUGGESTIONS = 10
/** pg_trgm's default `similarity_threshold`. */
export const SIMILARITY_THRESHOLD = 0.3

export type SuggestionMatch = 'prefix' | 'substring' | 'similar'

export interface Suggestion {
  readonly value: string
  readonly count: number
  readonly match: SuggestionMatch
}

export interface FieldValue {
  readonly value: string
  readonly normalised: string
  readonly count: number
}

/**
 * The trigrams of a text as pg_trgm forms them: each word (letters and digits) padded with two spaces before and
 * one after, cut into every three-character window; as a set.
 */
export function trigrams(normalised: string): Set<string> {
  const grams = new Set<string>()
  for (const word of normalised.split(/[^\p{L}\p{N}]+/u)) {
    if (word === '') continue
    const padded = `  ${word} `
    for (let index = 0; index + 3 <= padded.length; index++) grams.add(padded.slice(index, index + 3))
  }
  return grams
}

/** pg_trgm's `similarity`: shared trigrams over all distinct trigrams of both. */
export function similarity(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0
  let shared = 0
  for (const gram of a) if (b.has(gram)) shared++
  return shared / (a.size + b.size - shared)
}

/** The text fields a kind can suggest in a mode. */
export function suggestableFields(kind: Kind, byPriceList: boolean): string[] {
  return facetFields(kind, byPriceList).text.map((field) => field.name)
}

async function fieldValues(
  db: Kysely<any>,
  kind: Kind,
  byPriceList: boolean,
  column: RawBuilder<unknown>,
  fieldName: string,
  cache?: ResultCache,
): Promise<FieldValue[]> {
  const reads = searchReads(byPriceList)
  const from = byPriceList ? sql`${sql.table(kind.priceTable)} AS e` : sql`${sql.table(kind.matview)} AS m`
  const compute = async () => {
    const { rows } = await sql<{ value: string; count: number | string; version: string | null }>`
      SELECT ${column} AS value, count(*) AS count, ${dataVersionSql(kind, reads)} AS version
      FROM ${from} WHERE ${column} IS NOT NULL GROUP BY ${column}`.execute(db)
    return {
      value: rows.map((row) => ({
        value: row.value,
        normalised: normaliseKeyText(row.value),
        count: Number(row.count),
      })),
      version: rows[0]?.version ?? null,
    }
  }
  if (!cache?.enabled) return (await compute()).value
  const key = JSON.stringify(['suggest', kind.path, byPriceList, fieldName])
  return cache.getOrCompute(key, await readDataVersion(db, kind, reads), compute)
}

export function suggestionValue(value: string, count: number): FieldValue {
  return { value, count, normalised: normaliseKeyText(value) }
}

const byCount = (a: FieldValue, b: FieldValue) =>
  b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0)

/** Inserts `item` into `best` (sorted by `order`, at most `limit` long) if it belongs there. */
function keepBest<T>(best: T[], item: T, limit: number, order: (a: T, b: T) => number): void {
  if (limit <= 0) return
  if (best.length === limit && order(item, best[limit - 1] as T) >= 0) return
  let at = best.length
  while (at > 0 && order(item, best[at - 1] as T) < 0) at--
  best.splice(at, 0, item)
  if (best.length > limit) best.pop()
}

/** Above this many values, similarity is computed only for values sharing a trigram with the query. */
const INDEXED_VALUES = 2000

export interface TrigramPostings {
  /** Trigram → indexes of the values holding it. */
  readonly grams: Map<string, number[]>
  /** Value index → how many distinct trigrams it has. */
  readonly sizes: Uint32Array
}

// Built once per list of texts. A list of values stands for one data version (cached, or kept by the search index);
// the search index lists the same texts in the same places for every version with the same values, and says so
// (`shareTrigrams`), so a write that changes counts alone keeps the postings.
const postingsOf = new WeakMap<object, TrigramPostings>()
const textsOf = new WeakMap<readonly FieldValue[], readonly string[]>()

/** Declares that value `i` of `values` is normalised as `texts[i + 1]`: postings are kept with `texts`. */
export function shareTrigrams(values: readonly FieldValue[], texts: readonly string[]): void {
  textsOf.set(values, texts)
}

/**
 * For a long list of values: the indexes of the values that may contain a normalised query (every value whose
 * normalised text contains it is among them), or undefined to look at every value.
 */
export type SubstringCandidates = (query: string) => Iterable<number> | undefined
const candidatesOf = new WeakMap<readonly FieldValue[], SubstringCandidates>()

/** Declares how to find the values of `values` that may contain a query (the search index's n-gram index). */
export function shareCandidates(values: readonly FieldValue[], find: SubstringCandidates): void {
  candidatesOf.set(values, find)
}

/** The trigram postings of a list of values (built once per list; the search index builds them as it loads). */
export function trigramPostings(values: readonly FieldValue[]): TrigramPostings {
  const texts = textsOf.get(values)
  const key: object = texts ?? values
  let postings = postingsOf.get(key)
  if (!postings) {
    const grams = new Map<string, number[]>()
    const sizes = new Uint32Array(values.length)
    values.forEach((value, index) => {
      const own = trigrams(value.normalised)
      sizes[index] = own.size
      for (const gram of own) {
        const list = grams.get(gram)
        if (list) list.push(index)
        else grams.set(gram, [index])
      }
    })
    postings = { grams, sizes }
    postingsOf.set(key, postings)
  }
  return postings
}

/** Whether suggestions over these values score similarity through trigram postings. */
export const indexedForSimilarity = (values: readonly FieldValue[]) => values.length > INDEXED_VALUES

/**
 * Each value with its similarity to the query's trigrams (pg_trgm's measure, {@link similarity}); values that
 * share no trigram with it (similarity 0) may be left out.
 */
function* similarValues(
  values: readonly FieldValue[],
  wanted: Set<string>,
): Generator<{ value: FieldValue; score: number }> {
  if (wanted.size === 0) return
  if (values.length <= INDEXED_VALUES) {
    for (const value of values) yield { value, score: similarity(wanted, trigrams(value.normalised)) }
    return
  }
  const postings = trigramPostings(values)
  const shared = new Uint32Array(values.length)
  const touched: number[] = []
  for (const gram of wanted) {
    for (const index of postings.grams.get(gram) ?? []) {
      if (shared[index] === 0) touched.push(index)
      shared[index] = (shared[index] as number) + 1
    }
  }
  for (const index of touched) {
    const common = shared[index] as number
    const size = postings.sizes[index] as number
    yield { value: values[index] as FieldValue, score: common / (wanted.size + size - common) }
  }
}

/** The suggestions for `query` in a kind's text field; 400 naming `field` or `q` when they are unusable. */
export async function suggest(
  db: Kysely<any>,
  kind: Kind,
  request: { readonly field: string; readonly q: string; readonly byPriceList: boolean; readonly limit?: number },
  cache?: ResultCache,
  index?: SearchIndex,
): Promise<Suggestion[]> {
  const field = kind.itemFields.find((candidate) => candidate.name === request.field)
  const column = field && field.type === 'text' ? fieldSql(field, request.byPriceList) : null
  if (!field || !column) {
    throw invalidField(
      'field',
      `'${request.field}' is not a text field of ${kind.path}${request.byPriceList ? ' price-list entries' : ''}; ` +
        `allowed: ${suggestableFields(kind, request.byPriceList).join(', ')}`,
    )
  }
  const query = normaliseKeyText(request.q)
  if (query === '') throw invalidField('q', 'must not be blank')
  const limit = Math.min(request.limit ?? MAX_SUGGESTIONS, MAX_SUGGESTIONS)
  const values: readonly FieldValue[] =
    (await index?.fieldValues(kind, field, request.byPriceList)) ??
    (await fieldValues(db, kind, request.byPriceList, column, field.name, cache))

  // One pass: the best `limit` of each class are kept as they come (no sort of thousands of values).
  const prefix: FieldValue[] = []
  const substring: FieldValue[] = []
  const consider = (value: FieldValue) => {
    // The search index lists values no row carries any more (count 0) until they leave its dictionary.
    if (value.count === 0) return
    if (value.normalised.startsWith(query)) keepBest(prefix, value, limit, byCount)
    else if (value.normalised.includes(query)) keepBest(substring, value, limit, byCount)
  }
  const candidates = candidatesOf.get(values)?.(query)
  if (candidates) for (const index of candidates) consider(values[index] as FieldValue)
  else for (const value of values) consider(value)
  const found: Suggestion[] = [
    ...prefix.map((value) => ({ value: value.value, count: value.count, match: 'prefix' as const })),
    ...substring.map((value) => ({ value: value.value, count: value.count, match: 'substring' as const })),
  ].slice(0, limit)
  if (found.length < limit) {
    const wanted = trigrams(query)
    const similar: { value: FieldValue; score: number }[] = []
    const bySimilarity = (a: { value: FieldValue; score: number }, b: { value: FieldValue; score: number }) =>
      b.score - a.score || byCount(a.value, b.value)
    for (const { value, score } of similarValues(values, wanted)) {
      if (value.count === 0 || score < SIMILARITY_THRESHOLD || value.normalised.includes(query)) continue
      keepBest(similar, { value, score }, limit - found.length, bySimilarity)
    }
    for (const { value } of similar) found.push({ value: value.value, count: value.count, match: 'similar' })
  }
  return found
}
