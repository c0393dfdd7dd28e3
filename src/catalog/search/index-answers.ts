import type { Page } from '../../http/page.js'
import type { ItemField, Kind } from '../kinds/kind.js'
import type { Facets } from './facet-fields.js'
import type { ExactFilters, FilterValues, SearchRequest } from './search-query.js'
import type { Suggestion } from './suggestion-ranking.js'

/**
 * The answers a search asks of the in-memory search index (search-index/) before its own SQL; each resolves to
 * undefined where SQL must answer instead (the index off, loading, behind the data, or a filter only SQL reads).
 */
export interface SearchIndexAnswers {
  search(kind: Kind, request: SearchRequest): Promise<Page<Record<string, unknown>> | undefined>
  /** The facets of a search body (prescription already read). */
  facets(kind: Kind, byPriceList: boolean, filters: FilterValues, exact?: ExactFilters): Promise<Facets | undefined>
  /** The best `limit` suggestions for a normalised query in a text field. */
  suggestions(
    kind: Kind,
    field: ItemField,
    byPriceList: boolean,
    query: string,
    limit: number,
  ): Promise<Suggestion[] | undefined>
}
