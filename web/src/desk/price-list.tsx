import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { FilterName, InputField, PriceEntry, PriceListPage, PriceRow, SortColumn } from '../api/types.js'
import { type Api, isAbort } from '../api.js'
import type { Language, MessageKey, Translate } from '../i18n/index.js'
import { Pager } from '../pager.js'
import { useSession } from '../session.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { TextFilterField, usePriceListValues } from './desk-fields.js'
import { entryRoute, fieldLabel, formatDay, formatMoney } from './desk-format.js'
import { EntryHistory } from './entry-history.js'
import {
  type EntryInput,
  type Filters,
  INPUT_FIELDS,
  type ListQuery,
  PriceProblem,
  PricesApi,
  TEXT_FILTER_NAMES,
} from './prices-api.js'
import './desk.css'

/*
 * The price manager's desk: the glass price list as a grid. Filters search as one types (a pause, and a newer
 * search aborts the older one); the four sortable columns are header buttons; a row is edited in place and saved
 * with the ETag read when the edit began (If-Match), so a change someone made meanwhile is never overwritten.
 * `#/prices?entry=42` opens one entry: the grid filtered to its key (exactly), and its history. A filter value
 * picked from its list is exact ("= Ray-Ban"), a typed one a substring.
 */

const TYPING_DELAY_MS = 150

const textFilters = TEXT_FILTER_NAMES
const bandFilters = [
  ['priceFrom', 'priceTo'],
  ['purchaseFrom', 'purchaseTo'],
] as const

const filterLabel: Record<FilterName, MessageKey> = {
  manufacturer: 'deskManufacturer',
  brand: 'deskBrand',
  model: 'deskModel',
  priceFrom: 'deskPriceFrom',
  priceTo: 'deskPriceTo',
  purchaseFrom: 'deskPurchaseFrom',
  purchaseTo: 'deskPurchaseTo',
}

type Sort = ListQuery['sort']

/** The next sort of a column on click: ascending, descending, then the listing's own order. */
function nextSort(column: SortColumn, sort: Sort): Sort {
  if (sort?.column !== column) return { column, direction: 'ASC' }
  return sort.direction === 'ASC' ? { column, direction: 'DESC' } : undefined
}

/** A message above the grid: `tone` alert for what went wrong, status for what went right. */
interface Notice {
  readonly tone: 'status' | 'alert'
  readonly text: string
  /** An entry the message is about, linked (the existing entry of a duplicate, a created entry). */
  readonly entry?: { readonly id: number; readonly label: string }
}

/** An entry being edited (or created: id absent): what is typed, the version it started from, the API's word. */
interface Draft {
  readonly id?: number
  readonly etag?: string
  readonly values: EntryInput
  readonly errors: Readonly<Record<string, string>>
  readonly busy: boolean
  readonly existingId?: number
  readonly message?: string
}

const emptyInput: EntryInput = { manufacturer: '', brand: '', model: '', price: '', purchase: '' }
const inputOf = (entry: PriceEntry): EntryInput => ({
  manufacturer: entry.manufacturer,
  brand: entry.brand,
  model: entry.model,
  price: String(entry.price),
  purchase: String(entry.purchase),
})

/** The entry id a `#/prices?entry=42` location names, if any. */
function entryInLocation(): number | undefined {
  const query = window.location.hash.split('?')[1]
  const id = Number(new URLSearchParams(query ?? '').get('entry'))
  return Number.isSafeInteger(id) && id > 0 ? id : undefined
}

interface PriceListProps {
  readonly api: Api
  readonly language: Language
  readonly t: Translate
}

export function PriceListScreen({ api, language, t }: PriceListProps) {
  const prices = useMemo(() => new PricesApi(api), [api])
  const { canWrite } = useSession()
  const [filters, setFilters] = useState<Filters>({})
  const [page, setPage] = useState(0)
  const [size, setSize] = useState(20)
  const [sort, setSort] = useState<Sort>()
  const [reloads, setReloads] = useState(0)
  const [list, setList] = useState<PriceListPage | undefined>()
  const [listError, setListError] = useState<PriceProblem | Error | undefined>()
  const [notice, setNotice] = useState<Notice | undefined>()
  const [edit, setEdit] = useState<Draft | undefined>()
  const [draft, setDraft] = useState<Draft>({ values: emptyInput, errors: {}, busy: false })
  const [removal, setRemoval] = useState<{ entry: PriceEntry; etag: string; busy: boolean } | undefined>()
  const [historyId, setHistoryId] = useState<number | undefined>()
  const [highlight, setHighlight] = useState<number | undefined>()
  const delay = useRef(0)
  const grid = useRef<HTMLTableSectionElement>(null)

  // The first field of a row taken into edit gets the focus.
  useEffect(() => {
    if (edit?.id !== undefined) document.getElementById(`edit-${edit.id}-manufacturer`)?.focus()
  }, [edit?.id])

  const reload = () => setReloads((count) => count + 1)
  const filtersKey = JSON.stringify(filters)

  // The page of the grid: debounced while typing; each run aborts the previous one.
  useEffect(() => {
    const controller = new AbortController()
    const timer = setTimeout(() => {
      prices
        .list({ filters, page, size, ...(sort ? { sort } : {}) }, controller.signal)
        .then((answer) => {
          setList(answer)
          setListError(undefined)
        })
        .catch((reason: unknown) => {
          if (!isAbort(reason)) setListError(reason as Error)
        })
    }, delay.current)
    delay.current = 0
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [prices, filtersKey, page, size, sort?.column, sort?.direction, reloads])

  // `#/prices?entry=42`: the grid narrowed to that entry's key, the entry marked, its history open.
  useEffect(() => {
    const controller = new AbortController()
    const open = () => {
      const id = entryInLocation()
      if (id === undefined) return
      setHistoryId(id)
      setHighlight(id)
      prices
        .read(id, controller.signal)
        .then(({ entry }) => {
          setFilters({
            manufacturer: entry.manufacturer,
            brand: entry.brand,
            model: entry.model,
            exact: textFilters,
          })
          setPage(0)
        })
        .catch((reason: unknown) => {
          if (!isAbort(reason)) setNotice({ tone: 'alert', text: readFailure(reason, id) })
        })
    }
    open()
    window.addEventListener('hashchange', open)
    return () => {
      window.removeEventListener('hashchange', open)
      controller.abort()
    }
  }, [prices])

  const setFilter = (name: FilterName, value: string) => {
    delay.current = TYPING_DELAY_MS
    setFilters((all) => ({ ...all, [name]: value }))
    setPage(0)
  }

  const lastPage = list ? Math.max(list.totalPages - 1, 0) : 0
  const values = usePriceListValues(api, filters)
  const goTo = (target: number) => setPage(Math.min(Math.max(target, 0), lastPage))
  // PageUp / PageDown turn pages, as in the counter search, unless the focus is in a field (or a dialog is open).
  const turnPage = useRef<(event: KeyboardEvent) => void>(() => {})
  turnPage.current = (event) => {
    if (event.key !== 'PageDown' && event.key !== 'PageUp') return
    const target = event.target as HTMLElement
    if (target.closest('input, select, textarea, dialog')) return
    event.preventDefault()
    goTo(page + (event.key === 'PageDown' ? 1 : -1))
  }
  useEffect(() => {
    const listener = (event: KeyboardEvent) => turnPage.current(event)
    document.addEventListener('keydown', listener)
    return () => document.removeEventListener('keydown', listener)
  }, [])
  const filterErrors = listError instanceof PriceProblem ? listError.fieldErrors() : {}
  const entryLabel = (entry: { manufacturer: string; brand: string; model: string }) =>
    `${entry.manufacturer} / ${entry.brand} / ${entry.model}`

  /** Why an entry could not be read: gone (404), or what the API said. */
  const readFailure = (reason: unknown, id: number) =>
    reason instanceof PriceProblem && reason.status === 404
      ? t('deskEntryGone', { id })
      : t('loadFailed', { reason: (reason as Error).message })

  /** The words for a refused write: the field errors stay at their fields; 409 and 412 are explained. */
  const refusal = (reason: unknown, current: Draft): Draft => {
    if (!(reason instanceof PriceProblem)) return { ...current, busy: false, message: (reason as Error).message }
    const { existingId } = reason.problem
    if (reason.status === 409 && existingId !== undefined) {
      return { ...current, busy: false, errors: {}, existingId, message: t('deskDuplicate', { id: existingId }) }
    }
    const errors = reason.fieldErrors()
    return {
      ...current,
      busy: false,
      errors,
      message: Object.keys(errors).length > 0 ? t('deskFixFields') : reason.message,
    }
  }

  const startEdit = async (row: PriceRow) => {
    setNotice(undefined)
    try {
      const { entry, etag } = await prices.read(row.id)
      setEdit({ id: row.id, etag, values: inputOf(entry), errors: {}, busy: false })
    } catch (reason) {
      setNotice({ tone: 'alert', text: readFailure(reason, row.id) })
      reload()
    }
  }

  const save = async () => {
    if (!edit?.id || edit.busy) return
    const { id } = edit
    setEdit({ ...edit, busy: true })
    try {
      const { entry } = await prices.update(id, edit.values, edit.etag ?? '*')
      setEdit(undefined)
      setHighlight(id)
      setNotice({ tone: 'status', text: t('deskSaved', { id, entry: entryLabel(entry) }) })
      reload()
      focusRowAction(id, 'edit')
    } catch (reason) {
      if (reason instanceof PriceProblem && reason.status === 412) {
        // Someone else saved the entry since the edit began: show what it holds now, and say so.
        setEdit(undefined)
        setHighlight(id)
        setNotice({ tone: 'alert', text: t('deskChangedElsewhere', { id }) })
        reload()
        focusRowAction(id, 'edit')
      } else if (reason instanceof PriceProblem && reason.status === 404) {
        setEdit(undefined)
        setNotice({ tone: 'alert', text: t('deskEntryGone', { id }) })
        reload()
      } else {
        setEdit((current) => current && refusal(reason, current))
      }
    }
  }

  const create = async () => {
    if (draft.busy) return
    setDraft({ ...draft, busy: true })
    try {
      const { entry } = await prices.create(draft.values)
      setDraft({ values: emptyInput, errors: {}, busy: false })
      setHighlight(entry.id)
      setNotice({
        tone: 'status',
        text: t('deskCreated', { id: entry.id }),
        entry: { id: entry.id, label: entryLabel(entry) },
      })
      reload()
    } catch (reason) {
      setDraft((current) => refusal(reason, current))
    }
  }

  const askRemoval = async (row: PriceRow) => {
    setNotice(undefined)
    try {
      const { entry, etag } = await prices.read(row.id)
      setRemoval({ entry, etag, busy: false })
    } catch (reason) {
      setNotice({ tone: 'alert', text: readFailure(reason, row.id) })
      reload()
    }
  }

  const remove = async () => {
    if (!removal || removal.busy) return
    const { entry, etag } = removal
    setRemoval({ ...removal, busy: true })
    try {
      await prices.remove(entry.id, etag)
      setNotice({ tone: 'status', text: t('deskDeleted', { id: entry.id, entry: entryLabel(entry) }) })
    } catch (reason) {
      const status = reason instanceof PriceProblem ? reason.status : 0
      setNotice({
        tone: 'alert',
        text:
          status === 412
            ? t('deskChangedBeforeDelete', { id: entry.id })
            : status === 404
              ? t('deskEntryGone', { id: entry.id })
              : (reason as Error).message,
      })
      setHighlight(entry.id)
    }
    setRemoval(undefined)
    reload()
  }

  /** Puts the focus back on a row's button once the grid has drawn it again. */
  const focusRowAction = (id: number, action: string) =>
    setTimeout(() => grid.current?.querySelector<HTMLButtonElement>(`#row-${id} [data-action="${action}"]`)?.focus())

  const sortHeader = (column: SortColumn, label: string, extra?: string) => {
    const direction = sort?.column === column ? (sort.direction === 'ASC' ? 'ascending' : 'descending') : undefined
    return (
      <th scope="col" aria-sort={direction ?? 'none'} class={extra} data-column={column}>
        <button
          type="button"
          onClick={() => {
            setSort(nextSort(column, sort))
            setPage(0)
          }}
        >
          {label}
          <span aria-hidden="true">{direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}</span>
          <span class="visually-hidden">{direction ? ` (${t(direction)})` : ''}</span>
        </button>
      </th>
    )
  }

  /** An input of an edited or new entry, labelled, its API error beside it. */
  const entryInput = (prefix: string, state: Draft, field: InputField, change: (values: EntryInput) => void) => {
    const id = `${prefix}-${field}`
    const error = state.errors[field]
    const money = field === 'price' || field === 'purchase'
    return (
      <div class={`field ${money ? 'money' : ''}`} key={field}>
        <label for={id} class={prefix.startsWith('edit') ? 'visually-hidden' : undefined}>
          {t(fieldLabel[field])}
        </label>
        <input
          id={id}
          name={field}
          type="text"
          autocomplete="off"
          inputMode={money ? 'decimal' : undefined}
          value={state.values[field]}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-error` : undefined}
          onInput={(event) => change({ ...state.values, [field]: event.currentTarget.value })}
        />
        {error ? (
          <span id={`${id}-error`} class="error">
            {error}
          </span>
        ) : null}
      </div>
    )
  }

  const draftMessage = (state: Draft, id: string) =>
    state.message ? (
      <p id={id} role="alert" class="problem">
        {state.message}
        {state.existingId !== undefined ? (
          <>
            {' '}
            <a href={entryRoute(state.existingId)}>{t('deskOpenEntry', { id: state.existingId })}</a>
          </>
        ) : null}
      </p>
    ) : null

  return (
    <div class="desk">
      <h2>{t('priceList')}</h2>
      <form
        class="filters desk-filters"
        aria-label={t('filters')}
        onSubmit={(event) => {
          event.preventDefault()
          reload()
        }}
      >
        <div class="fields">
          {textFilters.map((name) => (
            <TextFilterField
              key={name}
              api={api}
              id={`filter-${name}`}
              name={name}
              label={t(filterLabel[name])}
              filters={filters}
              values={values}
              onChange={(next) => {
                delay.current = TYPING_DELAY_MS
                setFilters(next)
                setPage(0)
              }}
              t={t}
            />
          ))}
          {bandFilters.flat().map((name) => {
            const error = filterErrors[name]
            return (
              <div class="field" key={name}>
                <label for={`filter-${name}`}>{t(filterLabel[name])}</label>
                <input
                  id={`filter-${name}`}
                  name={name}
                  type="text"
                  inputMode="decimal"
                  autocomplete="off"
                  value={filters[name] ?? ''}
                  aria-invalid={error ? true : undefined}
                  aria-describedby={error ? `filter-${name}-error` : undefined}
                  onInput={(event) => setFilter(name, event.currentTarget.value)}
                />
                {error ? (
                  <span id={`filter-${name}-error`} class="error">
                    {error}
                  </span>
                ) : null}
              </div>
            )
          })}
        </div>
        <button
          type="button"
          class="clear"
          onClick={() => {
            setFilters({})
            setPage(0)
            setHighlight(undefined)
          }}
        >
          {t('clearFilters')}
        </button>
      </form>

      {canWrite ? (
        <form
          class="create"
          aria-labelledby="create-title"
          onSubmit={(event) => {
            event.preventDefault()
            void create()
          }}
        >
          <h3 id="create-title">{t('deskNewEntry')}</h3>
          <div class="entry-fields">
            {INPUT_FIELDS.map((field) =>
              entryInput('create', draft, field, (values) => setDraft({ ...draft, values, message: undefined })),
            )}
            <button type="submit" disabled={draft.busy}>
              {t('deskAdd')}
            </button>
          </div>
          {draftMessage(draft, 'create-message')}
        </form>
      ) : null}

      {notice ? (
        <p class={`notice ${notice.tone}`} role={notice.tone}>
          {notice.text}
          {notice.entry ? (
            <>
              {' '}
              <a href={entryRoute(notice.entry.id)}>{notice.entry.label}</a>
            </>
          ) : null}
        </p>
      ) : null}
      {listError && Object.keys(filterErrors).length === 0 ? (
        <p role="alert">{t('searchFailed', { reason: listError.message })}</p>
      ) : null}

      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard */}
      <section class="table-scroll" aria-label={t('priceList')} tabIndex={0}>
        <table class="results desk-grid">
          <caption>
            {t('priceList')}
            {list ? `: ${t('deskTotal', { total: list.totalElements })}` : ''}
          </caption>
          <thead>
            <tr>
              {sortHeader('ID', t('deskId'), 'number')}
              {sortHeader('PARAMETERS', t('deskManufacturer'))}
              <th scope="col">{t('deskBrand')}</th>
              <th scope="col">{t('deskModel')}</th>
              {sortHeader('PRICE', t('deskPrice'), 'price')}
              {sortHeader('PURCHASE', t('deskPurchase'), 'number')}
              <th scope="col">{t('deskUpdatedOn')}</th>
              <th scope="col">{t('deskWho')}</th>
              <th scope="col">{t('deskActions')}</th>
            </tr>
          </thead>
          <tbody ref={grid}>
            {list?.content.map((row) =>
              edit?.id === row.id ? (
                <tr
                  key={row.id}
                  id={`row-${row.id}`}
                  class="editing"
                  onKeyDown={(event) => {
                    if (event.key === 'Enter' && (event.target as HTMLElement).tagName === 'INPUT') {
                      event.preventDefault()
                      void save()
                    } else if (event.key === 'Escape') {
                      setEdit(undefined)
                      focusRowAction(row.id, 'edit')
                    }
                  }}
                >
                  <td class="number">{row.id}</td>
                  {INPUT_FIELDS.map((field) => (
                    <td key={field}>
                      {entryInput(`edit-${row.id}`, edit, field, (values) =>
                        setEdit({ ...edit, values, message: undefined }),
                      )}
                    </td>
                  ))}
                  <td colSpan={2}>{draftMessage(edit, `edit-${row.id}-message`)}</td>
                  <td class="row-actions">
                    <button type="button" data-action="save" disabled={edit.busy} onClick={() => void save()}>
                      {t('deskSave')}
                    </button>
                    <button
                      type="button"
                      data-action="cancel"
                      onClick={() => {
                        setEdit(undefined)
                        focusRowAction(row.id, 'edit')
                      }}
                    >
                      {t('deskCancel')}
                    </button>
                  </td>
                </tr>
              ) : (
                <tr key={row.id} id={`row-${row.id}`} class={highlight === row.id ? 'highlight' : undefined}>
                  <td class="number">{row.id}</td>
                  <td>{row.manufacturer}</td>
                  <td>{row.brand}</td>
                  <td>{row.model}</td>
                  <td class="price">{formatMoney(row.price, language)}</td>
                  <td class="number">{formatMoney(row.purchase, language)}</td>
                  <td>{formatDay(row.lastUpdatedOn, language)}</td>
                  <td>{row.user}</td>
                  <td class="row-actions">
                    {canWrite ? (
                      <button
                        type="button"
                        data-action="edit"
                        aria-label={t('deskEditEntry', { id: row.id })}
                        onClick={() => void startEdit(row)}
                      >
                        {t('deskEdit')}
                      </button>
                    ) : null}
                    <button
                      type="button"
                      data-action="history"
                      aria-label={t('deskHistoryOf', { id: row.id })}
                      aria-pressed={historyId === row.id}
                      onClick={() => setHistoryId(historyId === row.id ? undefined : row.id)}
                    >
                      {t('deskHistory')}
                    </button>
                    {canWrite ? (
                      <button
                        type="button"
                        data-action="delete"
                        class="danger"
                        aria-label={t('deskDeleteEntry', { id: row.id })}
                        onClick={() => void askRemoval(row)}
                      >
                        {t('deskDelete')}
                      </button>
                    ) : null}
                  </td>
                </tr>
              ),
            )}
            {list && list.content.length === 0 ? (
              <tr>
                <td colSpan={9}>{t('nothingFound')}</td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </section>
      {edit && list?.content.some((row) => row.id === edit.id) ? (
        <p class="hint" id="edit-hint">
          {t('deskEditHint')}
        </p>
      ) : null}

      <Pager
        label={t('paging')}
        page={page}
        pages={list?.totalPages}
        onPage={setPage}
        size={{
          value: size,
          onChange: (chosen) => {
            setSize(chosen)
            setPage(0)
          },
        }}
        t={t}
      />

      {historyId !== undefined ? (
        // Keyed by the entry: another entry's history never shows while this one's loads.
        <EntryHistory
          key={historyId}
          prices={prices}
          id={historyId}
          version={reloads}
          language={language}
          t={t}
          onClose={() => setHistoryId(undefined)}
        />
      ) : null}

      {removal ? (
        <ConfirmDialog
          id="confirm-delete"
          title={t('deskDeleteQuestion', { id: removal.entry.id })}
          confirm={t('deskDeleteConfirm')}
          cancel={t('deskDeleteKeep')}
          busy={removal.busy}
          onConfirm={() => void remove()}
          onClose={() => setRemoval(undefined)}
        >
          <p>
            {entryLabel(removal.entry)}: {t('deskPrice')} {formatMoney(removal.entry.price, language)},{' '}
            {t('deskPurchase')} {formatMoney(removal.entry.purchase, language)}
          </p>
        </ConfirmDialog>
      ) : null}
    </div>
  )
}
