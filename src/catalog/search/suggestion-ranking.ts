import { normaliseKeyText } from '../kinds/kind-schema.js'
import { type PackedPostings, packPostings } from './packed-postings.js'

/*
 * Ranking a field's values as suggestions for what is typed, whichever engine lists the values: SQL (suggest.ts)
 * or the search index (search-index/field-values.ts). Prefix matches first, then substrings, then values similar
 * by trigrams (pg_trgm's measure).
 */

/** pg_trgm's default `similarity_threshold`. */
const SIMILARITY_THRESHOLD = 0.3

export type SuggestionMatch = 'prefix' | 'substring' | 'similar'

export interface Suggestion {
  readonly value: string
  readonly count: number
  readonly match: SuggestionMatch
}

/**
 * A field's distinct values with how many rows carry each, as parallel lists: value `i` is `values[i]`, normalised
 * as `normalised[i]`, carried by `counts[i]` rows (0: none, skipped; the search index lists values no row carries
 * any more, and NULL, that way). The `normalised` list's identity keys its trigram postings, so lists that share
 * it (the search index's data versions with the same values) share them.
 */
export interface FieldValues {
  readonly values: readonly string[]
  readonly normalised: readonly string[]
  readonly counts: ArrayLike<number>
  /**
   * The indexes that may contain a normalised query (every one that does is among them), from an n-gram index;
   * undefined (or returning undefined): look at every value.
   */
  readonly candidates?: (query: string) => Iterable<number> | undefined
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

/** A value as suggestions compare it with a query (`optics_norm`'s rules: trimmed, lower case, ё as е). */
export function suggestionText(value: string): string {
  return normaliseKeyText(value)
}

/** Orders value indexes by count, highest first, then by value. */
const byCount =
  ({ values, counts }: FieldValues) =>
  (a: number, b: number) => {
    const [x, y] = [values[a] as string, values[b] as string]
    return (counts[b] as number) - (counts[a] as number) || (x < y ? -1 : x > y ? 1 : 0)
  }

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

/** For each trigram, the indexes of the values holding it (packed), and how many distinct trigrams each value has. */
export interface TrigramPostings extends PackedPostings<string> {
  /** Value index → how many distinct trigrams it has. */
  readonly sizes: Uint32Array
}

// Built once per list of normalised texts: a cached list stands for one data version; the search index's lists
// share their texts across data versions with the same values, so a write that changes counts alone keeps them.
const postingsOf = new WeakMap<readonly string[], TrigramPostings>()

/** The trigram postings of a list of values (built once per list of texts; the search index builds them as it loads). */
export function trigramPostings(list: FieldValues): TrigramPostings {
  const texts = list.normalised
  return (
    postingsOf.get(texts) ??
    withTrigramPostings(
      texts,
      packPostings<string>(0, texts.length, (index, visit) => {
        for (const gram of trigrams(texts[index] as string)) visit(gram)
      }),
    )
  )
}

/**
 * Takes `packed` as the trigram postings of `texts` (as {@link trigramPostings} builds them: the search index keeps
 * them in its snapshot files, so a restart need not build them again), unless that list has its own already.
 */
export function withTrigramPostings(texts: readonly string[], packed: PackedPostings<string>): TrigramPostings {
  const built = postingsOf.get(texts)
  if (built) return built
  // A value is listed once under each of its distinct trigrams.
  const sizes = new Uint32Array(texts.length)
  for (const index of packed.items) sizes[index] = (sizes[index] as number) + 1
  const postings = { slots: packed.slots, offsets: packed.offsets, items: packed.items, sizes }
  postingsOf.set(texts, postings)
  return postings
}

/** Whether suggestions over these values score similarity through trigram postings. */
export const indexedForSimilarity = (list: FieldValues) => list.values.length > INDEXED_VALUES

/**
 * Each value's index with its similarity to the query's trigrams (pg_trgm's measure, {@link similarity}); values
 * below `threshold` may be left out. A value at `threshold` shares at least `threshold` × (the query's trigrams) of
 * them, so it holds one of all but that many minus one of the query's commonest trigrams: only the rarest trigrams'
 * postings are walked for candidates (the commonest, such as a word's first letter padded, can list a third of a
 * large field), and the commonest are then looked up for the candidates alone, by binary search in their postings.
 */
function* similarValues(
  list: FieldValues,
  wanted: Set<string>,
  threshold: number,
): Generator<{ index: number; score: number }> {
  if (wanted.size === 0) return
  const texts = list.normalised
  if (!indexedForSimilarity(list)) {
    for (let index = 0; index < texts.length; index++) {
      yield { index, score: similarity(wanted, trigrams(texts[index] as string)) }
    }
    return
  }
  const postings = trigramPostings(list)
  const { slots, offsets, items } = postings
  const length = (slot: number) => (offsets[slot + 1] as number) - (offsets[slot] as number)
  // The query's trigrams some value holds, rarest first; one no value holds is rarer still.
  const present = [...wanted].flatMap((gram) => slots.get(gram) ?? []).sort((a, b) => length(a) - length(b))
  const needed = Math.max(1, Math.ceil(threshold * wanted.size - 1e-9))
  const walked = Math.max(0, wanted.size - needed + 1 - (wanted.size - present.length))
  // The shared-trigram counts live in one buffer kept between calls (a count per value of a 300,000-value field,
  // allocated per keystroke, made the collector run full collections); cleared again when the scores are read.
  if (sharedCounts.length < texts.length) sharedCounts = new Uint32Array(texts.length)
  const shared = sharedCounts
  const touched: number[] = []
  try {
    for (const slot of present.slice(0, walked)) {
      for (let at = offsets[slot] as number; at < (offsets[slot + 1] as number); at++) {
        const index = items[at] as number
        if (shared[index] === 0) touched.push(index)
        shared[index] = (shared[index] as number) + 1
      }
    }
    const looked = present.slice(walked)
    for (const index of touched) {
      let common = shared[index] as number
      for (const slot of looked) if (holds(items, offsets[slot] as number, offsets[slot + 1] as number, index)) common++
      const size = postings.sizes[index] as number
      yield { index, score: common / (wanted.size + size - common) }
    }
  } finally {
    for (const index of touched) shared[index] = 0
  }
}

/** Whether the ascending `items[from … to - 1]` hold `item`. */
function holds(items: Uint32Array, from: number, to: number, item: number): boolean {
  let [low, high] = [from, to]
  while (low < high) {
    const middle = (low + high) >>> 1
    if ((items[middle] as number) < item) low = middle + 1
    else high = middle
  }
  return low < to && items[low] === item
}

/** The counts of {@link similarValues}, all zero between calls (each runs through without yielding to others). */
let sharedCounts = new Uint32Array(0)

/** The best `limit` values of `list` for a normalised query: prefix matches, then substrings, then similar values. */
export function rankSuggestions(list: FieldValues, query: string, limit: number): Suggestion[] {
  const { values, normalised, counts } = list
  const order = byCount(list)

  // One pass: the best `limit` of each class are kept as they come (no sort of thousands of values).
  const prefix: number[] = []
  const substring: number[] = []
  const consider = (index: number) => {
    if (counts[index] === 0) return
    const text = normalised[index] as string
    if (text.startsWith(query)) keepBest(prefix, index, limit, order)
    else if (text.includes(query)) keepBest(substring, index, limit, order)
  }
  const candidates = list.candidates?.(query)
  if (candidates) for (const index of candidates) consider(index)
  else for (let index = 0; index < values.length; index++) consider(index)
  const suggestion = (index: number, match: SuggestionMatch): Suggestion => ({
    value: values[index] as string,
    count: counts[index] as number,
    match,
  })
  const found: Suggestion[] = [
    ...prefix.map((index) => suggestion(index, 'prefix')),
    ...substring.map((index) => suggestion(index, 'substring')),
  ].slice(0, limit)
  if (found.length < limit) {
    const wanted = trigrams(query)
    const similar: { index: number; score: number }[] = []
    const bySimilarity = (a: { index: number; score: number }, b: { index: number; score: number }) =>
      b.score - a.score || order(a.index, b.index)
    for (const candidate of similarValues(list, wanted, SIMILARITY_THRESHOLD)) {
      const { index, score } = candidate
      if (counts[index] === 0 || score < SIMILARITY_THRESHOLD || (normalised[index] as string).includes(query)) continue
      keepBest(similar, candidate, limit - found.length, bySimilarity)
    }
    for (const { index } of similar) found.push(suggestion(index, 'similar'))
  }
  return found
}
