import type { ItemField } from '../kinds/kind.js'
import {
  type FieldValues,
  indexedForSimilarity,
  suggestionText,
  trigramPostings,
  withTrigramPostings,
} from '../search/suggestion-ranking.js'
import { fieldColumn, type IndexedSearch } from './conditions.js'
import { substringCandidates } from './matching.js'
import { KEPT_MEMOS, NULL_CODE, type Table } from './table.js'

/* The distinct values of an item field with their counts, as suggestions rank them (suggest.ts). */

/**
 * Every value of an item field's dictionary with how many rows carry it (0 for a value no row carries any more,
 * and for NULL), or undefined where there is none: value `i` is the column's code `i`. The list of normalised
 * texts is kept with the dictionary, so the similarity postings of suggestions outlive writes that change counts
 * alone.
 */
export function fieldValueCounts(
  tables: IndexedSearch,
  field: ItemField,
  byPriceList: boolean,
): FieldValues | undefined {
  const table: Table = byPriceList ? tables.prices : tables.matview
  const column = fieldColumn(table, field, byPriceList)
  if (!column) return undefined
  // Kept with the column: the same list serves every keystroke until the data changes.
  return column.rowMemo('suggestion values', (): FieldValues => {
    const { norms } = column
    // Where a suggestion text equals the normal form (nearly always), the same string serves both.
    const texts = column.memo('suggestion texts', () =>
      column.values.map((value, code) => {
        if (code === NULL_CODE) return ''
        const text = suggestionText(value)
        return text === norms[code] ? (norms[code] as string) : text
      }),
    )
    // A substring of a suggestion text is one of its normal form too where the two agree: the column's n-gram
    // index finds the candidates, and the few values whose forms differ are always looked at.
    const differing = column.memo('suggestion texts differing', () => {
      const codes: number[] = []
      for (let code = 1; code < texts.length; code++) if (texts[code] !== norms[code]) codes.push(code)
      return codes
    })
    const counts = new Uint32Array(column.distinct)
    for (let code = 1; code < column.distinct; code++) counts[code] = column.count(code)
    const list: FieldValues = {
      values: column.values,
      normalised: texts,
      counts,
      candidates: (query) => {
        const codes = substringCandidates(column, query)?.codes
        return codes && differing.length > 0 ? [...codes, ...differing] : codes
      },
    }
    // The similarity postings of a large field, kept with the column's values (and in snapshots, restored here).
    if (indexedForSimilarity(list)) {
      withTrigramPostings(
        texts,
        column.memo(KEPT_MEMOS.trigrams, () => trigramPostings(list)),
      )
    }
    return list
  })
}
