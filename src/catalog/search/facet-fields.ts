import type { ItemField, Kind } from '../kinds/kind.js'
import { fieldSql } from './search-query.js'

/*
 * What a search's facets are, whichever engine counts them: SQL (facets.ts) or the search index
 * (search-index/facet-counts.ts).
 */

/** At most this many values per text field, the most frequent first. */
export const FACET_VALUES = 50

export interface FacetValue {
  readonly value: string
  readonly count: number
}

export interface TextFacet {
  readonly values: FacetValue[]
  /** How many distinct values there are in all (more than `values.length` when the list is cut). */
  readonly distinct: number
}

export interface NumericFacet {
  readonly min: number | null
  readonly max: number | null
}

export interface Facets {
  /** Items matching every filter. */
  readonly total: number
  readonly text: Record<string, TextFacet>
  readonly numeric: Record<string, NumericFacet>
}

/**
 * The text and numeric fields a mode can show (in price-list mode, those an entry carries): every item field and
 * every text filter beside them, so each text filter of a form has its drop-down.
 */
export function facetFields(kind: Kind, byPriceList: boolean): { text: ItemField[]; numeric: ItemField[] } {
  const available = kind.valueFields.filter((field) => fieldSql(field, byPriceList) !== null)
  return {
    text: available.filter((field) => field.type === 'text'),
    numeric: available.filter((field) => field.type !== 'text'),
  }
}
