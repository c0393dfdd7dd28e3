import type { KindForm } from '../api.js'
import { storage } from '../storage.js'

/*
 * The counter's state in the location, so a reload, a bookmark and a shared link return to the same screen:
 * `#/?kind=lenses&in=price-list&manufacturer=Hoya&exact=manufacturer&sort=retailPrice,asc&page=2&rows=50`.
 * Every filter is a parameter named as the API names the field; `exact` lists those picked from a list, `page`
 * counts from 1 as the pager shows it, `rows` is the page size. The last kind chosen is remembered on this
 * browser and opens when the location names none.
 */

export interface KindQuery {
  readonly values: Readonly<Record<string, string>>
  /** The text fields whose value was picked from a list: exact filters (the API's `exact`). */
  readonly exact: readonly string[]
  readonly page: number
  readonly size: number
  readonly sort: string
}

export const emptyQuery: KindQuery = { values: {}, exact: [], page: 0, size: 20, sort: '' }

export interface CounterState {
  readonly kind: string
  readonly byPriceList: boolean
  readonly query: KindQuery
}

const KIND_KEY = 'optics-catalog.counter-kind'
const PRICE_LIST = 'price-list'

/** The query part of a hash route (`#/?a=1` → `a=1`). */
const hashQuery = (hash: string): URLSearchParams => new URLSearchParams(hash.split('?')[1] ?? '')

const positive = (text: string | null): number | undefined => {
  const number = Number(text)
  return text !== null && Number.isInteger(number) && number > 0 ? number : undefined
}

/** The state a location's hash names, for the kinds there are; what it lacks or names wrongly is the default. */
export function readLocation(hash: string, forms: readonly KindForm[]): CounterState {
  const params = hashQuery(hash)
  const named = (kind: string | null | undefined) => forms.find((form) => form.kind === kind)
  const form = named(params.get('kind')) ?? named(storage?.getItem(KIND_KEY)) ?? forms[0]
  const values: Record<string, string> = {}
  for (const field of form?.fields ?? []) {
    const value = params.get(field.name)
    if (value !== null && value.trim() !== '') values[field.name] = value
  }
  const exact = (params.get('exact') ?? '').split(',').filter((name) => values[name] !== undefined)
  return {
    kind: form?.kind ?? '',
    byPriceList: params.get('in') === PRICE_LIST,
    query: {
      values,
      exact,
      page: (positive(params.get('page')) ?? 1) - 1,
      size: positive(params.get('rows')) ?? emptyQuery.size,
      sort: params.get('sort') ?? '',
    },
  }
}

/** The hash that names a state (defaults left out), in the order of the form's fields. */
export function locationHash(form: KindForm, state: CounterState): string {
  const { query } = state
  const params = new URLSearchParams({ kind: form.kind })
  if (state.byPriceList) params.set('in', PRICE_LIST)
  const filled = form.fields.filter((field) => (query.values[field.name] ?? '').trim() !== '')
  for (const field of filled) params.set(field.name, query.values[field.name]!)
  const exact = filled.filter((field) => query.exact.includes(field.name)).map((field) => field.name)
  if (exact.length > 0) params.set('exact', exact.join(','))
  if (query.sort !== '') params.set('sort', query.sort)
  if (query.page > 0) params.set('page', String(query.page + 1))
  if (query.size !== emptyQuery.size) params.set('rows', String(query.size))
  return `#/?${params}`
}

/** Remembers the kind last chosen on this browser. */
export function rememberKind(kind: string): void {
  storage?.setItem(KIND_KEY, kind)
}
