import { useRef } from 'preact/hooks'
import type { Column, Item, Page } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'

interface ResultsTableProps {
  readonly columns: readonly Column[]
  readonly page: Page | undefined
  /** Spring's sort parameter: `field,asc` / `field,desc`, or empty. */
  readonly sort: string
  readonly onSort: (sort: string) => void
  readonly language: Language
  readonly t: Translate
}

export const PRICE = 'retailPrice'

/** The next sort of a column on click: ascending, descending, then the kind's natural order. */
function nextSort(column: string, sort: string): string {
  if (sort === `${column},asc`) return `${column},desc`
  if (sort === `${column},desc`) return ''
  return `${column},asc`
}

function formatValue(column: Column, value: Item[string] | undefined, language: Language, t: Translate): string {
  if (value === null || value === undefined || value === '') return t('emptyValue')
  if (column.type === 'text') return String(value)
  // A decimal string is formatted as written (Intl reads it exactly), never through float arithmetic.
  const format = new Intl.NumberFormat(language, {
    minimumFractionDigits: column.name === PRICE ? 2 : 0,
    maximumFractionDigits: 3,
  })
  return format.format(String(value) as Intl.StringNumericLiteral)
}

/**
 * A page of items: every item field a column, the price first and prominent; a column's header sorts by it.
 * ↑ ↓ move from row to row.
 */
export function ResultsTable(props: ResultsTableProps) {
  const { columns, page, sort, language, t } = props
  const body = useRef<HTMLTableSectionElement>(null)

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'ArrowDown' && event.key !== 'ArrowUp') return
    const rows = [...(body.current?.rows ?? [])]
    const current = rows.indexOf(document.activeElement as HTMLTableRowElement)
    const next = rows[event.key === 'ArrowDown' ? Math.min(current + 1, rows.length - 1) : Math.max(current - 1, 0)]
    if (next) {
      event.preventDefault()
      next.focus()
    }
  }

  return (
    // The table scrolls sideways on a narrow screen; the region takes the focus so the keyboard can scroll it.
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <section class="table-scroll" aria-label={t('results')} tabIndex={0}>
      <table class="results">
        <caption>
          {t('results')}
          {page ? `: ${t('total', { total: page.totalElements })}` : ''}
        </caption>
        <thead>
          <tr>
            {columns.map((column) => {
              const direction =
                sort === `${column.name},asc` ? 'ascending' : sort === `${column.name},desc` ? 'descending' : undefined
              const label = column.label[language]
              return (
                <th
                  key={column.name}
                  scope="col"
                  aria-sort={direction ?? 'none'}
                  class={column.name === PRICE ? 'price' : undefined}
                >
                  <button
                    type="button"
                    data-sort={column.name}
                    onClick={() => props.onSort(nextSort(column.name, sort))}
                  >
                    {label}
                    <span aria-hidden="true">
                      {direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}
                    </span>
                    <span class="visually-hidden">{direction ? ` (${t(direction)})` : ''}</span>
                  </button>
                </th>
              )
            })}
          </tr>
        </thead>
        <tbody ref={body} onKeyDown={onKeyDown}>
          {page?.content.map((item, index) => (
            // The first row is in the tab order; arrows move on from it.
            <tr key={index} tabIndex={index === 0 ? 0 : -1}>
              {columns.map((column) => (
                <td
                  key={column.name}
                  class={column.name === PRICE ? 'price' : column.type === 'text' ? undefined : 'number'}
                >
                  {formatValue(column, item[column.name], language, t)}
                </td>
              ))}
            </tr>
          ))}
          {page && page.content.length === 0 ? (
            <tr>
              <td colSpan={columns.length}>{t('nothingFound')}</td>
            </tr>
          ) : null}
        </tbody>
      </table>
    </section>
  )
}
