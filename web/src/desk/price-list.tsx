import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import type { Api } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'
import { Pager } from '../pager.js'
import { useSession } from '../session.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { entryRoute, formatMoney } from './desk-format.js'
import { DraftMessage, EntryField } from './entry-fields.js'
import { EntryHistory } from './entry-history.js'
import { PriceFilters } from './price-filters.js'
import { PriceGrid } from './price-grid.js'
import { INPUT_FIELDS, PriceProblem, PricesApi } from './prices-api.js'
import { entryLabel, type Notice, readFailure, useEntryWrites } from './use-entry-writes.js'
import { usePageKeys, usePriceList } from './use-price-list.js'
import './desk.css'

/*
 * The price manager's desk: the glass price list as a grid. Filters search as one types (a pause, and a newer
 * search aborts the older one); the four sortable columns are header buttons; a row is edited in place and saved
 * with the ETag read when the edit began (If-Match), so a change someone made meanwhile is never overwritten.
 * `#/prices?entry=42` opens one entry: the grid filtered to its key (exactly), and its history. A filter value
 * picked from its list is exact ("= Ray-Ban"), a typed one a substring.
 */

interface PriceListProps {
  readonly api: Api
  readonly language: Language
  readonly t: Translate
}

export function PriceListScreen({ api, language, t }: PriceListProps) {
  const prices = useMemo(() => new PricesApi(api), [api])
  const { canWrite } = useSession()
  const [notice, setNotice] = useState<Notice | undefined>()
  const [historyId, setHistoryId] = useState<number | undefined>()
  const [highlight, setHighlight] = useState<number | undefined>()
  const grid = useRef<HTMLTableSectionElement>(null)

  /** Puts the focus on a button of a row (once the grid has drawn it). */
  const focusRowAction = (id: number, action: string) =>
    setTimeout(() => grid.current?.querySelector<HTMLButtonElement>(`#row-${id} [data-action="${action}"]`)?.focus())

  const query = usePriceList(
    prices,
    (id) => {
      setHistoryId(id)
      setHighlight(id)
    },
    (reason, id) => setNotice({ tone: 'alert', text: readFailure(reason, id, t) }),
  )
  const { list, listError, page } = query
  const writes = useEntryWrites(
    prices,
    {
      notify: setNotice,
      highlight: setHighlight,
      reload: query.reload,
      focusRowAction,
    },
    t,
  )
  // A row taken into edit puts the cursor in its price, the field most edits are for, its value selected so
  // what is typed replaces it.
  const editedId = writes.edit?.id
  useEffect(() => {
    if (editedId === undefined) return
    const price = document.getElementById(`edit-${editedId}-price`)
    if (price instanceof HTMLInputElement) {
      price.focus()
      price.select()
    }
  }, [editedId])

  const lastPage = list ? Math.max(list.totalPages - 1, 0) : 0
  usePageKeys((step) => query.setPage(Math.min(Math.max(page + step, 0), lastPage)))
  const filterErrors = listError instanceof PriceProblem ? listError.fieldErrors() : {}
  const { draft, removal } = writes

  return (
    <div class={historyId === undefined ? 'desk' : 'desk beside-panel'}>
      <div class="desk-main">
        <h2>{t('priceList')}</h2>
        <PriceFilters
          api={api}
          filters={query.filters}
          errors={filterErrors}
          onChange={(next) => query.setFilters(next, true)}
          onSubmit={query.reload}
          onClear={() => {
            query.setFilters({})
            setHighlight(undefined)
          }}
          t={t}
        />

        {canWrite ? (
          <form
            class="create"
            aria-labelledby="create-title"
            onSubmit={(event) => {
              event.preventDefault()
              void writes.create()
            }}
          >
            <h3 id="create-title">{t('deskNewEntry')}</h3>
            <div class="entry-fields">
              {INPUT_FIELDS.map((field) => (
                <EntryField
                  key={field}
                  prefix="create"
                  state={draft}
                  field={field}
                  onChange={writes.draftValues}
                  t={t}
                />
              ))}
              <button type="submit" disabled={draft.busy}>
                {t('deskAdd')}
              </button>
            </div>
            <DraftMessage state={draft} id="create-message" t={t} />
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

        <PriceGrid
          list={list}
          sort={query.sort}
          onSort={query.setSort}
          writes={writes}
          canWrite={canWrite}
          highlight={highlight}
          historyId={historyId}
          onHistory={setHistoryId}
          body={grid}
          language={language}
          t={t}
        />
        {writes.edit && list?.content.some((row) => row.id === writes.edit?.id) ? (
          <p class="hint" id="edit-hint">
            {t('deskEditHint')}
          </p>
        ) : null}

        <Pager
          label={t('paging')}
          page={page}
          pages={list?.totalPages}
          onPage={query.setPage}
          size={{ value: query.size, onChange: query.setSize }}
          t={t}
        />

        {removal ? (
          <ConfirmDialog
            id="confirm-delete"
            title={t('deskDeleteQuestion', { id: removal.entry.id })}
            confirm={t('deskDeleteConfirm')}
            cancel={t('deskDeleteKeep')}
            busy={removal.busy}
            onConfirm={() => void writes.remove()}
            onClose={writes.keepEntry}
          >
            <p>
              {entryLabel(removal.entry)}: {t('deskPrice')} {formatMoney(removal.entry.price, language)},{' '}
              {t('deskPurchase')} {formatMoney(removal.entry.purchase, language)}
            </p>
          </ConfirmDialog>
        ) : null}
      </div>
      {historyId !== undefined ? (
        // Keyed by the entry: another entry's history never shows while this one's loads.
        <EntryHistory
          key={historyId}
          prices={prices}
          id={historyId}
          version={query.reloads}
          language={language}
          t={t}
          onClose={() => {
            setHistoryId(undefined)
            focusRowAction(historyId, 'history')
          }}
        />
      ) : null}
    </div>
  )
}
