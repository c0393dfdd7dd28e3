import { useEffect, useRef, useState } from 'preact/hooks'
import type { Api, FormField, KindForm } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'
import { Pager } from '../pager.js'
import { ColumnChooser, useHiddenColumns } from './column-chooser.js'
import { ExportBar } from './export-bar.js'
import { KindTabs } from './kind-tabs.js'
import { checkNumber } from './prescription.js'
import { ResultsTable } from './results-table.js'
import { SearchFilters } from './search-filters.js'
import { emptyQuery, type KindQuery, locationHash, readLocation, rememberKind } from './search-location.js'
import { searchBody, useSearchResults, useStaleKinds } from './use-search-results.js'
import { viewInWords } from './view-export.js'

/*
 * The counter search: a tab per kind, the kind's form drawn from its descriptor (GET …/kinds), results as one
 * types. Each search cancels the one before it (AbortController), so a slow, stale answer never overwrites a
 * newer one. Each kind keeps its own filters, page and sort while another tab is open; the open kind's state is
 * in the location (search-location.ts).
 */

interface SearchScreenProps {
  readonly api: Api
  readonly forms: readonly KindForm[]
  readonly language: Language
  readonly t: Translate
}

export function SearchScreen({ api, forms, language, t }: SearchScreenProps) {
  const [initial] = useState(() => readLocation(window.location.hash, forms))
  const [kind, setKind] = useState(initial.kind)
  const [queries, setQueries] = useState<Readonly<Record<string, KindQuery>>>({ [initial.kind]: initial.query })
  const [byPriceList, setByPriceList] = useState(initial.byPriceList)
  const written = useRef<string | undefined>(undefined)
  // The date a printed page states: when it was printed, not when the screen was opened.
  const [printedAt, setPrintedAt] = useState(() => new Date())
  useEffect(() => {
    const stamp = () => setPrintedAt(new Date())
    window.addEventListener('beforeprint', stamp)
    return () => window.removeEventListener('beforeprint', stamp)
  }, [])

  const form = forms.find((candidate) => candidate.kind === kind) ?? forms[0]!
  const [hiddenColumns, setHiddenColumns] = useHiddenColumns(form.kind)
  const query = queries[form.kind] ?? emptyQuery
  const body = searchBody(form, query, byPriceList)
  const results = useSearchResults(api, form.kind, body, query)
  const { page, error } = results
  const staleKinds = useStaleKinds(api)

  const update = (change: Partial<KindQuery>, wait: number) => {
    results.delay.current = wait
    setQueries((all) => ({ ...all, [form.kind]: { ...(all[form.kind] ?? emptyQuery), ...change } }))
  }
  /** Sets a field's value: exact when picked from a list, else (typed) a substring. */
  const setValue = (name: string, value: string, wait: number, exact = false) => {
    const others = query.exact.filter((other) => other !== name)
    update({ values: { ...query.values, [name]: value }, exact: exact ? [...others, name] : others, page: 0 }, wait)
  }

  // The state into the location (replaced, so typing leaves no trail of history entries), the kind remembered.
  const hash = locationHash(form, { kind: form.kind, byPriceList, query })
  useEffect(() => {
    written.current = hash
    // Only over the counter's own location: a render that comes after a link to another screen was followed (a
    // language switch's, a late answer's) must not take the user back.
    const current = window.location.hash
    if ((current.split('?')[0] || '#/') !== '#/') return
    if (current !== hash) window.history.replaceState(window.history.state, '', hash)
  })
  useEffect(() => rememberKind(form.kind), [form.kind])

  // A link to the counter followed while it is open (another state, or none): the screen it names.
  const clear = useRef(results.clear)
  clear.current = results.clear
  useEffect(() => {
    const follow = () => {
      const current = window.location.hash
      if ((current.split('?')[0] || '#/') !== '#/' || current === written.current) return
      const next = readLocation(current, forms)
      clear.current()
      setKind(next.kind)
      setByPriceList(next.byPriceList)
      setQueries((all) => ({ ...all, [next.kind]: next.query }))
    }
    window.addEventListener('hashchange', follow)
    return () => window.removeEventListener('hashchange', follow)
  }, [forms])

  const switchKind = (next: string) => {
    if (next === form.kind) return
    results.clear()
    setKind(next)
  }

  const lastPage = page ? Math.max(page.totalPages - 1, 0) : 0
  const goTo = (target: number) => update({ page: Math.min(Math.max(target, 0), lastPage) }, 0)
  // PageUp / PageDown turn pages wherever the focus is on the screen.
  const turnPage = useRef<(event: KeyboardEvent) => void>(() => {})
  turnPage.current = (event) => {
    if (event.key === 'PageDown' || event.key === 'PageUp') {
      event.preventDefault()
      goTo(query.page + (event.key === 'PageDown' ? 1 : -1))
    }
  }
  useEffect(() => {
    const listener = (event: KeyboardEvent) => turnPage.current(event)
    document.addEventListener('keydown', listener)
    return () => document.removeEventListener('keydown', listener)
  }, [])

  const fieldLabel = (field: FormField) => field.label[language]
  // The results on screen are not those of the filters while a field is invalid (said) or the search failed.
  const invalid = form.fields
    .filter((field) => field.input !== 'text')
    .map((field) => ({ field, check: checkNumber(field, query.values[field.name] ?? '') }))
    .find(({ check }) => !check.ok)
  const staleReason =
    invalid && !invalid.check.ok
      ? `${fieldLabel(invalid.field)}: ${t(invalid.check.message, invalid.check.values)}`
      : undefined
  const stale = page !== undefined && (staleReason !== undefined || error !== undefined)
  const title = form.title[language]
  const visibleColumns = form.columns.filter((column) => !hiddenColumns.includes(column.name))
  const shownFrom = page && page.numberOfElements > 0 ? page.number * page.size + 1 : 0

  return (
    <div class="search">
      <KindTabs forms={forms} form={form} onSwitch={switchKind} language={language} t={t} />
      <section id="kind-panel" role="tabpanel" aria-labelledby={`tab-${form.kind}`}>
        {staleKinds.has(form.kind) ? (
          <p class="banner" role="status">
            {t('refreshing', { kind: title })}
          </p>
        ) : null}
        <SearchFilters
          api={api}
          form={form}
          query={query}
          byPriceList={byPriceList}
          onByPriceList={setByPriceList}
          facets={results.facets}
          setValue={setValue}
          onSearch={() => update({}, 0)}
          onClear={() => update({ values: {}, page: 0 }, 0)}
          language={language}
          t={t}
        />
        {error ? <p role="alert">{t('searchFailed', { reason: error })}</p> : null}
        {/* What a printed page says above its table: the kind, the search in words, the rows and the date. */}
        <div class="print-only print-heading">
          <h2>{title}</h2>
          {viewInWords(form, query, byPriceList, language, t).map((line) => (
            <p key={line}>{line}</p>
          ))}
          {page ? (
            <p>
              {t('printedRows', {
                from: shownFrom,
                to: shownFrom === 0 ? 0 : shownFrom + page.numberOfElements - 1,
                total: page.totalElements,
              })}
            </p>
          ) : null}
          <p>{t('printedOn', { date: printedAt.toLocaleString(language) })}</p>
        </div>
        <div class={stale ? 'results-area stale' : 'results-area'}>
          {stale && staleReason ? (
            <p class="stale-note" role="status">
              {t('staleResults', { reason: staleReason })}
            </p>
          ) : null}
          <div class="results-tools">
            <ColumnChooser
              columns={form.columns}
              hidden={hiddenColumns}
              onChange={setHiddenColumns}
              language={language}
              t={t}
            />
            <ExportBar
              api={api}
              kind={form.kind}
              title={title}
              body={body}
              sort={query.sort}
              columns={visibleColumns}
              total={stale ? undefined : page?.totalElements}
              language={language}
              t={t}
            />
          </div>
          <ResultsTable
            columns={visibleColumns}
            page={page}
            sort={query.sort}
            onSort={(sort) => update({ sort, page: 0 }, 0)}
            language={language}
            t={t}
          />
        </div>
        <Pager
          label={t('paging')}
          page={query.page}
          pages={page?.totalPages}
          onPage={(target) => update({ page: target }, 0)}
          size={{ value: query.size, onChange: (size) => update({ size, page: 0 }, 0) }}
          t={t}
        />
      </section>
    </div>
  )
}
