import type { Api, Item, KindForm, SearchBody } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'
import type { KindQuery } from './search-location.js'

/*
 * The view on screen beyond its page: every row of the search (its filters and sort) read page by page from the
 * API, up to a cap, for a file; and the filters said in words, for the printed page and the file's name.
 */

/** At most this many rows go into a file: more is no longer a list to read at the counter. */
export const EXPORT_CAP = 10_000
/** Rows asked per call while exporting (the service may answer fewer; its `size` says how many). */
const EXPORT_PAGE_SIZE = 1_000

/** The rows of a search in the order on screen, at most {@link EXPORT_CAP}, with the search's total. */
export async function readView(
  api: Pick<Api, 'search'>,
  kind: string,
  body: SearchBody,
  sort: string,
  onProgress: (read: number, of: number) => void,
  signal: AbortSignal,
): Promise<{ readonly items: readonly Item[]; readonly total: number }> {
  const items: Item[] = []
  let total = 0
  for (let page = 0; ; page++) {
    const answer = await api.search(kind, body, { page, size: EXPORT_PAGE_SIZE, sort }, signal)
    total = answer.totalElements
    items.push(...answer.content)
    const wanted = Math.min(total, EXPORT_CAP)
    onProgress(Math.min(items.length, wanted), wanted)
    if (answer.content.length === 0 || items.length >= wanted || answer.last) break
  }
  return { items: items.slice(0, EXPORT_CAP), total }
}

/** `lenses-2026-11-28.xlsx`: the kind as the API names it and today's date. */
export function fileName(kind: string, extension: string, now: Date = new Date()): string {
  const pad = (value: number) => String(value).padStart(2, '0')
  return `${kind}-${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}.${extension}`
}

/**
 * The search in words, as a printed page states it: where it searched, each filter set (a value picked from a
 * list as exact, typed text as a part), and the order.
 */
export function viewInWords(
  form: KindForm,
  query: KindQuery,
  byPriceList: boolean,
  language: Language,
  t: Translate,
): string[] {
  const words = [`${t('searchIn')}: ${t(byPriceList ? 'byPriceList' : 'byNomenclature')}`]
  const filters: string[] = []
  for (const field of form.fields) {
    const value = (query.values[field.name] ?? '').trim()
    if (value === '') continue
    const label = field.label[language]
    if (field.input !== 'text') filters.push(t('selectionBound', { field: label, value }))
    else if (query.exact.includes(field.name)) filters.push(t('selectionExact', { field: label, value }))
    else filters.push(t('selectionContains', { field: label, value }))
  }
  words.push(filters.length > 0 ? `${t('filters')}: ${filters.join('; ')}` : t('noFilters'))
  const [name, direction] = query.sort.split(',')
  const column = form.columns.find((candidate) => candidate.name === name)
  if (column) {
    words.push(
      t('sortedBy', {
        column: column.label[language],
        direction: t(direction === 'desc' ? 'descending' : 'ascending'),
      }),
    )
  }
  return words
}
