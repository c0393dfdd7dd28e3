import type { Ref } from 'preact'
import type { PriceListPage, PriceRow, SortColumn } from '../api/types.js'
import type { Language, Translate } from '../i18n/index.js'
import { formatCount, formatDay, formatMarkup, formatMoney } from './desk-format.js'
import { DraftMessage, EntryField } from './entry-fields.js'
import { INPUT_FIELDS } from './prices-api.js'
import type { EntryWrites } from './use-entry-writes.js'
import type { Sort } from './use-price-list.js'

/*
 * The price list as a grid: every column's header is a button that sorts by it (ascending, descending, then the
 * listing's own order; the manufacturer's sorts by manufacturer, brand and model); the markup is computed exactly
 * from the row's prices; a row is edited in place (Enter saves, Escape cancels), and its buttons open its history
 * or delete it.
 */

/** The next sort of a column on click: ascending, descending, then the listing's own order. */
function nextSort(column: SortColumn, sort: Sort): Sort {
  if (sort?.column !== column) return { column, direction: 'ASC' }
  return sort.direction === 'ASC' ? { column, direction: 'DESC' } : undefined
}

function SortHeader(props: {
  readonly column: SortColumn
  readonly label: string
  readonly class?: string
  readonly sort: Sort
  readonly onSort: (sort: Sort) => void
  readonly t: Translate
}) {
  const { column, sort, t } = props
  const direction = sort?.column === column ? (sort.direction === 'ASC' ? 'ascending' : 'descending') : undefined
  return (
    <th scope="col" aria-sort={direction ?? 'none'} class={props.class} data-column={column}>
      <button type="button" onClick={() => props.onSort(nextSort(column, sort))}>
        {props.label}
        <span aria-hidden="true">{direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}</span>
        <span class="visually-hidden">{direction ? ` (${t(direction)})` : ''}</span>
      </button>
    </th>
  )
}

export interface PriceGridProps {
  readonly list: PriceListPage | undefined
  readonly sort: Sort
  readonly onSort: (sort: Sort) => void
  readonly writes: EntryWrites
  readonly canWrite: boolean
  readonly highlight: number | undefined
  readonly historyId: number | undefined
  readonly onHistory: (id: number | undefined) => void
  readonly body: Ref<HTMLTableSectionElement>
  readonly language: Language
  readonly t: Translate
}

export function PriceGrid(props: PriceGridProps) {
  const { list, sort, onSort, writes, language, t } = props
  const header = (column: SortColumn, label: string, extra?: string) => (
    <SortHeader column={column} label={label} class={extra} sort={sort} onSort={onSort} t={t} />
  )
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section class="table-scroll" aria-label={t('priceList')} tabIndex={0}>
      <table class="results desk-grid">
        <caption>
          {t('priceList')}
          {list ? `: ${t('deskTotal', { total: formatCount(list.totalElements, language) })}` : ''}
        </caption>
        <thead>
          <tr>
            {header('ID', t('deskId'), 'number')}
            {header('PARAMETERS', t('deskManufacturer'))}
            {header('BRAND', t('deskBrand'))}
            {header('MODEL', t('deskModel'))}
            {header('PRICE', t('deskPrice'), 'price')}
            {header('PURCHASE', t('deskPurchase'), 'number')}
            {header('MARKUP', t('deskMarkup'), 'number')}
            {header('UPDATED_ON', t('deskUpdatedOn'))}
            {header('USER', t('deskWho'))}
            <th scope="col">{t('deskActions')}</th>
          </tr>
        </thead>
        <tbody ref={props.body}>
          {list?.content.map((row) =>
            writes.edit?.id === row.id ? (
              <EditedRow key={row.id} row={row} writes={writes} t={t} />
            ) : (
              <EntryRow key={row.id} row={row} {...props} />
            ),
          )}
          {list && list.content.length === 0 ? (
            <tr>
              <td colSpan={10}>{t('nothingFound')}</td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </section>
  )
}

/** A row taken into edit: its fields, the API's word, Save and Cancel. */
function EditedRow({
  row,
  writes,
  t,
}: {
  readonly row: PriceRow
  readonly writes: EntryWrites
  readonly t: Translate
}) {
  const { edit } = writes
  if (!edit) return null
  return (
    <tr
      id={`row-${row.id}`}
      class="editing"
      onKeyDown={(event) => {
        if (event.key === 'Enter' && (event.target as HTMLElement).tagName === 'INPUT') {
          event.preventDefault()
          void writes.save()
        } else if (event.key === 'Escape') {
          writes.cancelEdit(row.id)
        }
      }}
    >
      <td class="number">{row.id}</td>
      {INPUT_FIELDS.map((field) => (
        <td key={field}>
          <EntryField prefix={`edit-${row.id}`} state={edit} field={field} onChange={writes.editValues} t={t} />
        </td>
      ))}
      <td colSpan={3}>
        <DraftMessage state={edit} id={`edit-${row.id}-message`} t={t} />
      </td>
      <td class="row-actions">
        <button type="button" data-action="save" disabled={edit.busy} onClick={() => void writes.save()}>
          {t('deskSave')}
        </button>
        <button type="button" data-action="cancel" onClick={() => writes.cancelEdit(row.id)}>
          {t('deskCancel')}
        </button>
      </td>
    </tr>
  )
}

/** A row as shown: its values and its actions (Edit and Delete for a writer, History for all). */
function EntryRow(props: PriceGridProps & { readonly row: PriceRow }) {
  const { row, writes, canWrite, historyId, language, t } = props
  return (
    <tr id={`row-${row.id}`} class={props.highlight === row.id ? 'highlight' : undefined}>
      <td class="number">{row.id}</td>
      <td>{row.manufacturer}</td>
      <td>{row.brand}</td>
      <td>{row.model}</td>
      <td class="price">{formatMoney(row.price, language)}</td>
      <td class="number">{formatMoney(row.purchase, language)}</td>
      <td class="number markup">{formatMarkup(row.price, row.purchase, language)}</td>
      <td>{formatDay(row.lastUpdatedOn, language)}</td>
      <td>{row.user}</td>
      <td class="row-actions">
        {canWrite ? (
          <button
            type="button"
            data-action="edit"
            aria-label={t('deskEditEntry', { id: row.id })}
            onClick={() => void writes.startEdit(row)}
          >
            {t('deskEdit')}
          </button>
        ) : null}
        <button
          type="button"
          data-action="history"
          aria-label={t('deskHistoryOf', { id: row.id })}
          aria-pressed={historyId === row.id}
          onClick={() => props.onHistory(historyId === row.id ? undefined : row.id)}
        >
          {t('deskHistory')}
        </button>
        {canWrite ? (
          <button
            type="button"
            data-action="delete"
            class="danger"
            aria-label={t('deskDeleteEntry', { id: row.id })}
            onClick={() => void writes.askRemoval(row)}
          >
            {t('deskDelete')}
          </button>
        ) : null}
      </td>
    </tr>
  )
}
