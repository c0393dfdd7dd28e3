import { type Kysely, type RawBuilder, sql } from 'kysely'
import type { Tables } from '../../db/tables.js'
import { message } from '../../domain/messages.js'
import { invalidField } from '../../http/problem.js'
import type { ResultCache } from '../../paged-reads/result-cache.js'
import { dataVersionSql, readDataVersion, searchReads } from '../freshness/catalog-state.js'
import type { Kind } from '../kinds/kind.js'
import { facetFields } from './facet-fields.js'
import type { SearchIndexAnswers } from './index-answers.js'
import { fieldSql } from './search-query.js'
import { type FieldValues, rankSuggestions, type Suggestion, suggestionText } from './suggestion-ranking.js'

/*
 * Suggestions for what an optician types into one field: the field's values that start with it first, then
 * those that contain it, then, so that a typo ("essilr") still finds "Essilor", those similar to it by trigrams
 * (pg_trgm's measure). Each with how many items have it. The distinct values of a field are read once per data
 * version (one GROUP BY) and kept in the result cache, so each keystroke is answered from memory.
 */

export const MAX_SUGGESTIONS = 10
/** The text fields a kind can suggest in a mode. */
function suggestableFields(kind: Kind, byPriceList: boolean): string[] {
  return facetFields(kind, byPriceList).text.map((field) => field.name)
}

async function fieldValues(
  db: Kysely<Tables>,
  kind: Kind,
  byPriceList: boolean,
  column: RawBuilder<unknown>,
  fieldName: string,
  cache?: ResultCache,
): Promise<FieldValues> {
  const reads = searchReads(byPriceList)
  const from = byPriceList ? sql`${sql.table(kind.priceTable)} AS e` : sql`${sql.table(kind.matview)} AS m`
  const compute = async () => {
    const { rows } = await sql<{ value: string; count: number | string; version: string | null }>`
      SELECT ${column} AS value, count(*) AS count, ${dataVersionSql(kind, reads)} AS version
      FROM ${from} WHERE ${column} IS NOT NULL GROUP BY ${column}`.execute(db)
    return {
      value: {
        values: rows.map((row) => row.value),
        normalised: rows.map((row) => suggestionText(row.value)),
        counts: rows.map((row) => Number(row.count)),
      },
      version: rows[0]?.version ?? null,
    }
  }
  if (!cache?.enabled) return (await compute()).value
  const key = JSON.stringify(['suggest', kind.path, byPriceList, fieldName])
  return cache.getOrCompute(key, await readDataVersion(db, kind, reads), compute)
}

/** The suggestions for `query` in a kind's text field; 400 naming `field` or `q` when they are unusable. */
export async function suggest(
  db: Kysely<Tables>,
  kind: Kind,
  request: { readonly field: string; readonly q: string; readonly byPriceList: boolean; readonly limit?: number },
  cache?: ResultCache,
  index?: SearchIndexAnswers,
): Promise<Suggestion[]> {
  const field = kind.valueFields.find((candidate) => candidate.name === request.field)
  const column = field && field.type === 'text' ? fieldSql(field, request.byPriceList) : null
  if (!field || !column) {
    throw invalidField(
      'field',
      message(request.byPriceList ? 'validation.notEntryTextField' : 'validation.notTextField', {
        field: request.field,
        kind: kind.path,
        allowed: suggestableFields(kind, request.byPriceList).join(', '),
      }),
    )
  }
  const query = suggestionText(request.q)
  if (query === '') throw invalidField('q', message('validation.blank'))
  const limit = Math.min(request.limit ?? MAX_SUGGESTIONS, MAX_SUGGESTIONS)
  const indexed = await index?.suggestions(kind, field, request.byPriceList, query, limit)
  if (indexed) return indexed
  return rankSuggestions(await fieldValues(db, kind, request.byPriceList, column, field.name, cache), query, limit)
}
