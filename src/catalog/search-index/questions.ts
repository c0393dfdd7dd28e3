import { GLASS_PRICE_TEXT_FIELDS, readsSkus } from '../../domain/glass-price-fields.js'
import type { ItemField, Kind } from '../kinds/kind.js'
import { activeFilters, type ExactFilters, type FilterValues, type SearchRequest } from '../search/search-query.js'
import { rankSuggestions } from '../search/suggestion-ranking.js'
import { type IndexedSearch, NotIndexable } from './conditions.js'
import { facetTables } from './facet-counts.js'
import { fieldValueCounts } from './field-values.js'
import { type IndexedListing, listingTable } from './glass-listing.js'
import type { IndexCall } from './index-protocol.js'
import type { KindVersions } from './kind-versions.js'
import { withScratch } from './scratch.js'
import { searchTables } from './search.js'
import { asciiNorm, type ProbedNorm } from './text.js'

/*
 * What the index is asked, described once for every thread that answers it (search-index.ts on the index's own
 * thread, replica.ts on the search threads beside it): the kind, which of its tables' versions the answer reads, the
 * texts it normalises, and the computation over the tables.
 */

export interface Question<T> {
  readonly kind: Kind
  /** What the answer reads: the matview and the price list (true), the matview alone (false), the price list alone. */
  readonly reads: boolean | 'listing'
  readonly filters: FilterValues
  /** Texts `norm` reads beside the kind's substring filters' values (the glass price listing's). */
  readonly moreTexts: readonly string[]
  readonly compute: (tables: IndexedSearch, norm: (text: string) => string) => T
}

export const questions = {
  search: (kind: Kind, request: SearchRequest): Question<unknown> => ({
    kind,
    reads: request.byPriceList,
    filters: request.filters,
    moreTexts: [],
    compute: (tables, norm) => searchTables(kind, tables, request, norm),
  }),

  facets: (kind: Kind, byPriceList: boolean, filters: FilterValues, exact?: ExactFilters): Question<unknown> => ({
    kind,
    reads: byPriceList,
    filters,
    moreTexts: [],
    compute: (tables, norm) => facetTables(kind, tables, byPriceList, filters, norm, exact),
  }),

  /** The glass price listing over the price table of `kind` (its reader's, glass-listing-reader.ts). */
  listing: (kind: Kind, request: IndexedListing): Question<unknown> => ({
    kind,
    // A filter on the SKUs' attribute reads the matview too, as a price-list search does: both must be current.
    reads: readsSkus(request.filter) ? true : 'listing',
    filters: {},
    // Every described text filter's value is normalised (domain/glass-price-fields.ts), whatever the kind's filters.
    moreTexts: GLASS_PRICE_TEXT_FIELDS.flatMap(({ name }) => request.filter[name] ?? []),
    compute: (tables, norm) => listingTable({ ...tables, kind }, request, norm),
  }),

  suggestions: (
    kind: Kind,
    field: ItemField,
    byPriceList: boolean,
    query: string,
    limit: number,
  ): Question<unknown> => ({
    kind,
    reads: byPriceList,
    filters: {},
    moreTexts: [],
    compute: (tables) => {
      const values = fieldValueCounts(tables, field, byPriceList)
      if (!values) throw new NotIndexable('no such field in this mode')
      return rankSuggestions(values, query, limit)
    },
  }),
}

/**
 * Whether the tables show (at least) the versions the question reads. Both tables always come from one snapshot (a
 * load replaces them together), so a newer pair is a state the database has shown since the request arrived.
 */
export function holdsVersions(tables: IndexedSearch, wanted: KindVersions, reads: boolean | 'listing'): boolean {
  if (reads === 'listing') return tables.prices.dataGeneration >= wanted.dataGeneration
  if (tables.matview.matviewVersion < wanted.matviewVersion) return false
  return !reads || tables.prices.dataGeneration >= wanted.dataGeneration
}

/** `optics_norm` of a text where this thread can compute it (ASCII, or characters the database agreed on). */
export function localNormOf(probed: ProbedNorm | undefined): (text: string) => string | undefined {
  return (text) => asciiNorm(text) ?? probed?.norm(text)
}

/** The texts of a question whose normal forms only the database can give. */
export function textsToNormalise(question: Question<unknown>, localNorm: (text: string) => string | undefined) {
  const texts = new Set<string>()
  for (const { filter, value } of activeFilters(question.kind, question.filters)) {
    if (filter.match === 'substring' && localNorm(String(value)) === undefined) texts.add(String(value))
  }
  for (const text of question.moreTexts) if (localNorm(text) === undefined) texts.add(text)
  return texts
}

/** The answer over `tables`, or undefined where SQL must answer (a filter only SQL can read). */
export function computeAnswer<T>(
  question: Question<T>,
  tables: IndexedSearch,
  norm: (text: string) => string,
): T | undefined {
  try {
    // The answer's working arrays come from buffers kept between answers (scratch.ts).
    return withScratch(() => question.compute(tables, norm))
  } catch (error) {
    if (error instanceof NotIndexable) return undefined
    throw error
  }
}

/**
 * The question a call of the service's thread asks (index-protocol.ts), or undefined where SQL answers it: a
 * listing of another time zone than the index's, or a field no suggestion reads.
 */
export function questionOfCall(
  call: IndexCall,
  context: {
    readonly kinds: ReadonlyMap<string, Kind>
    readonly listingKind?: string | undefined
    readonly timezone: string
  },
): Question<unknown> | undefined {
  if (call.method === 'listing') {
    const kind = context.listingKind === undefined ? undefined : context.kinds.get(context.listingKind)
    return kind && call.request.timezone === context.timezone ? questions.listing(kind, call.request) : undefined
  }
  if (call.method === 'catchUp' || call.method === 'close') return undefined
  const kind = context.kinds.get(call.kind)
  if (!kind) throw new Error(`no kind '${call.kind}'`)
  switch (call.method) {
    case 'search':
      return questions.search(kind, call.request as SearchRequest)
    case 'facets':
      return questions.facets(kind, call.byPriceList, call.filters as FilterValues, call.exact)
    case 'suggestions': {
      const field = kind.valueFields.find((candidate) => candidate.name === call.field)
      return field ? questions.suggestions(kind, field, call.byPriceList, call.query, call.limit) : undefined
    }
  }
}
