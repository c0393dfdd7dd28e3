import { useEffect, useRef, useState } from 'preact/hooks'
import { type Api, type Facets, type FormField, isAbort, type KindForm, type Page, type SearchBody } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'
import { Pager } from '../pager.js'
import { ColumnChooser, useHiddenColumns } from './column-chooser.js'
import { Combobox } from './combobox.js'
import { checkNumber, transposedPrescription } from './prescription.js'
import { ResultsTable } from './results-table.js'
import { emptyQuery, type KindQuery, locationHash, readLocation, rememberKind } from './search-location.js'

/*
 * The counter search: a tab per kind, the kind's form drawn from its descriptor (GET …/kinds), results as one
 * types. Each search cancels the one before it (AbortController), so a slow, stale answer never overwrites a
 * newer one. Each kind keeps its own filters, page and sort while another tab is open; the open kind's state is
 * in the location (search-location.ts).
 */

/**
 * Typing waits this long for the next key (a newer search cancels an older one anyway, so it can be short);
 * anything else (a page, a sort, Enter) searches at once. The drop-downs' values can wait longer.
 */
const TYPING_DELAY_MS = 40
const FACETS_DELAY_MS = 250
const STATUS_POLL_MS = 5_000

interface SearchScreenProps {
  readonly api: Api
  readonly forms: readonly KindForm[]
  readonly language: Language
  readonly t: Translate
}

/**
 * The search body of a query: `byPriceList`, every non-blank field and `exact` (those picked from a list), or
 * undefined while a field is invalid.
 */
function searchBody(form: KindForm, query: KindQuery, byPriceList: boolean): SearchBody | undefined {
  const body: Record<string, string | boolean | string[]> = { byPriceList }
  const exact: string[] = []
  for (const field of form.fields) {
    const raw = query.values[field.name] ?? ''
    if (field.input === 'text') {
      if (raw.trim() === '') continue
      body[field.name] = raw
      if (query.exact.includes(field.name)) exact.push(field.name)
      continue
    }
    const check = checkNumber(field, raw)
    if (!check.ok) return undefined
    if (check.value !== '') body[field.name] = check.value
  }
  if (exact.length > 0) body.exact = exact
  return body
}

export function SearchScreen({ api, forms, language, t }: SearchScreenProps) {
  const [initial] = useState(() => readLocation(window.location.hash, forms))
  const [kind, setKind] = useState(initial.kind)
  const [queries, setQueries] = useState<Readonly<Record<string, KindQuery>>>({ [initial.kind]: initial.query })
  const [byPriceList, setByPriceList] = useState(initial.byPriceList)
  const [page, setPage] = useState<Page | undefined>()
  const [facets, setFacets] = useState<Facets | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [staleKinds, setStaleKinds] = useState<ReadonlySet<string>>(new Set())
  const delay = useRef(0)
  const tabs = useRef<HTMLDivElement>(null)
  const written = useRef<string | undefined>(undefined)

  const form = forms.find((candidate) => candidate.kind === kind) ?? forms[0]!
  const [hiddenColumns, setHiddenColumns] = useHiddenColumns(form.kind)
  const query = queries[form.kind] ?? emptyQuery
  const body = searchBody(form, query, byPriceList)
  const bodyKey = body ? JSON.stringify(body) : undefined

  const update = (change: Partial<KindQuery>, wait: number) => {
    delay.current = wait
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
    if (window.location.hash !== hash) window.history.replaceState(window.history.state, '', hash)
  })
  useEffect(() => rememberKind(form.kind), [form.kind])

  // A link to the counter followed while it is open (another state, or none): the screen it names.
  useEffect(() => {
    const follow = () => {
      const current = window.location.hash
      if ((current.split('?')[0] || '#/') !== '#/' || current === written.current) return
      const next = readLocation(current, forms)
      setPage(undefined)
      setFacets(undefined)
      setKind(next.kind)
      setByPriceList(next.byPriceList)
      setQueries((all) => ({ ...all, [next.kind]: next.query }))
    }
    window.addEventListener('hashchange', follow)
    return () => window.removeEventListener('hashchange', follow)
  }, [forms])

  // The page of results: debounced while typing; each run aborts the previous one.
  useEffect(() => {
    if (!body) return
    const controller = new AbortController()
    const timer = setTimeout(() => {
      api
        .search(form.kind, body, query, controller.signal)
        .then((answer) => {
          setPage(answer)
          setError(undefined)
        })
        .catch((reason: unknown) => {
          if (!isAbort(reason)) setError((reason as Error).message)
        })
    }, delay.current)
    delay.current = 0
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [form.kind, bodyKey, query.page, query.size, query.sort])

  // The drop-down values under the current filters.
  useEffect(() => {
    if (!body) return
    const controller = new AbortController()
    const timer = setTimeout(() => {
      api
        .facets(form.kind, body, controller.signal)
        .then(setFacets)
        .catch(() => {})
    }, FACETS_DELAY_MS)
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [form.kind, bodyKey])

  // Which kinds' prices are being refreshed (the matview is stale): polled while the page is open.
  useEffect(() => {
    const controller = new AbortController()
    const poll = () =>
      api
        .status(controller.signal)
        .then((status) => setStaleKinds(new Set(status.kinds.filter((k) => k.stale).map((k) => k.kind))))
        .catch(() => {})
    poll()
    const timer = setInterval(poll, STATUS_POLL_MS)
    return () => {
      clearInterval(timer)
      controller.abort()
    }
  }, [api])

  const switchKind = (next: string) => {
    if (next === form.kind) return
    setPage(undefined)
    setFacets(undefined)
    setKind(next)
  }

  const onTabKey = (event: KeyboardEvent) => {
    const index = forms.indexOf(form)
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0
    if (step === 0) return
    event.preventDefault()
    const next = forms[(index + step + forms.length) % forms.length]!
    switchKind(next.kind)
    tabs.current?.querySelector<HTMLButtonElement>(`#tab-${next.kind}`)?.focus()
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

  const transposed = transposedPrescription(form.fields, query.values)
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

  return (
    <div class="search">
      <div role="tablist" aria-label={t('kinds')} class="tabs" ref={tabs} onKeyDown={onTabKey}>
        {forms.map((candidate) => (
          <button
            key={candidate.kind}
            id={`tab-${candidate.kind}`}
            type="button"
            role="tab"
            aria-selected={candidate.kind === form.kind}
            aria-controls="kind-panel"
            tabIndex={candidate.kind === form.kind ? 0 : -1}
            onClick={() => switchKind(candidate.kind)}
          >
            {candidate.title[language]}
          </button>
        ))}
      </div>
      <section id="kind-panel" role="tabpanel" aria-labelledby={`tab-${form.kind}`}>
        {staleKinds.has(form.kind) ? (
          <p class="banner" role="status">
            {t('refreshing', { kind: title })}
          </p>
        ) : null}
        <form
          class="filters"
          aria-label={t('filters')}
          onSubmit={(event) => {
            event.preventDefault()
            update({}, 0)
          }}
        >
          <fieldset class="mode" aria-describedby="mode-hint">
            <legend>{t('searchIn')}</legend>
            <label>
              <input
                type="radio"
                name="byPriceList"
                value="false"
                checked={!byPriceList}
                onChange={() => setByPriceList(false)}
              />{' '}
              {t('byNomenclature')}
            </label>
            <label>
              <input
                type="radio"
                name="byPriceList"
                value="true"
                checked={byPriceList}
                onChange={() => setByPriceList(true)}
              />{' '}
              {t('byPriceList')}
            </label>
            <span class="hint" id="mode-hint">
              {t('searchModeHint')}
            </span>
          </fieldset>
          <div class="fields">
            {form.fields.map((field) => {
              const id = `${form.kind}-${field.name}`
              const value = query.values[field.name] ?? ''
              if (field.input === 'text') {
                return (
                  <Combobox
                    key={id}
                    id={id}
                    name={field.name}
                    label={fieldLabel(field)}
                    value={value}
                    values={facets?.text[field.name]?.values ?? []}
                    suggest={(q, signal) => api.suggest(form.kind, field.name, q, byPriceList, signal)}
                    onInput={(text) => setValue(field.name, text, TYPING_DELAY_MS)}
                    onCommit={(text) => setValue(field.name, text, 0, query.exact.includes(field.name))}
                    onPick={(text) => setValue(field.name, text, 0, true)}
                    exact={query.exact.includes(field.name)}
                    onContains={() => setValue(field.name, value, 0)}
                    t={t}
                  />
                )
              }
              const check = checkNumber(field, value)
              const errorId = `${id}-error`
              return (
                <div class={`field ${field.input}`} key={id}>
                  <label for={id}>{fieldLabel(field)}</label>
                  <input
                    id={id}
                    name={field.name}
                    type="text"
                    inputMode="decimal"
                    autocomplete="off"
                    value={value}
                    aria-invalid={!check.ok}
                    aria-describedby={check.ok ? undefined : errorId}
                    onInput={(event) => setValue(field.name, event.currentTarget.value, TYPING_DELAY_MS)}
                    onKeyDown={(event) => {
                      if (event.key === 'Enter') setValue(field.name, event.currentTarget.value, 0)
                    }}
                  />
                  {check.ok ? null : (
                    <span id={errorId} class="error">
                      {t(check.message, check.values)}
                    </span>
                  )}
                </div>
              )
            })}
          </div>
          {transposed ? (
            <p class="note" role="status">
              {t('transposed', {
                prescription: form.fields
                  .filter((field) => transposed[field.name] !== undefined)
                  .map((field) => `${fieldLabel(field)} ${transposed[field.name]}`)
                  .join(', '),
              })}
            </p>
          ) : null}
          <p class="hint">{t('keyboardHint')}</p>
          <button type="button" class="clear" onClick={() => update({ values: {}, page: 0 }, 0)}>
            {t('clearFilters')}
          </button>
        </form>
        {error ? <p role="alert">{t('searchFailed', { reason: error })}</p> : null}
        <div class={stale ? 'results-area stale' : 'results-area'}>
          {stale && staleReason ? (
            <p class="stale-note" role="status">
              {t('staleResults', { reason: staleReason })}
            </p>
          ) : null}
          <ColumnChooser
            columns={form.columns}
            hidden={hiddenColumns}
            onChange={setHiddenColumns}
            language={language}
            t={t}
          />
          <ResultsTable
            columns={form.columns.filter((column) => !hiddenColumns.includes(column.name))}
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
