import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { type FieldValues, indexedForSimilarity, rankSuggestions, similarity, trigrams } from './suggestion-ranking.js'

/*
 * Suggestions over a large field (a frame model's values) find similar values through trigram postings, walking only
 * the query's rarest trigrams. They must rank exactly as comparing the query with every value does.
 */

const letters = ['a', 'b', 'c', 'r', 'p', 'x', 'g', 'u', '1', '5', '7', '8', ' ', '-']
const word = fc.array(fc.constantFrom(...letters), { minLength: 2, maxLength: 9 }).map((chars) => chars.join('').trim())

/** The best `limit` of every value, by brute force: pg_trgm's similarity of each one to the query. */
function bruteForce(list: FieldValues, query: string, limit: number) {
  const wanted = trigrams(query)
  const scored = list.normalised
    .map((text, index) => ({ index, text, score: similarity(wanted, trigrams(text)) }))
    .filter((value) => (list.counts[value.index] as number) > 0)
  const order = (a: (typeof scored)[number], b: (typeof scored)[number]) =>
    (list.counts[b.index] as number) - (list.counts[a.index] as number) ||
    (a.text < b.text ? -1 : a.text > b.text ? 1 : 0)
  const prefix = scored.filter((v) => v.text.startsWith(query)).sort(order)
  const substring = scored.filter((v) => !v.text.startsWith(query) && v.text.includes(query)).sort(order)
  const found = [...prefix, ...substring].slice(0, limit).map((v) => v.text)
  const similar = scored
    .filter((v) => !v.text.includes(query) && v.score >= 0.3)
    .sort((a, b) => b.score - a.score || order(a, b))
    .slice(0, limit - found.length)
    .map((v) => v.text)
  return [...found, ...similar]
}

test('suggestions over a large field rank as comparing with every value does', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(word, { minLength: 2100, maxLength: 2600, selector: (text) => text }),
      fc.array(word, { minLength: 20, maxLength: 20 }),
      fc.integer({ min: 1, max: 10 }),
      (texts, queries, limit) => {
        const values = texts.filter((text) => text !== '')
        const list: FieldValues = {
          values,
          normalised: values,
          counts: values.map((_, index) => (index % 7 === 0 ? 0 : 1 + (index % 3))),
        }
        assert.ok(indexedForSimilarity(list), 'the field is large enough to use trigram postings')
        for (const query of queries) {
          if (query === '') continue
          assert.deepEqual(
            rankSuggestions(list, query, limit).map((suggestion) => suggestion.value),
            bruteForce(list, query, limit),
            `query ${JSON.stringify(query)}`,
          )
        }
      },
    ),
    { numRuns: 15 },
  )
})
