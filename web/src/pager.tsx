import type { Translate } from './i18n/index.js'

/** The page sizes offered wherever a list lets one choose. */
const PAGE_SIZES = [10, 20, 50, 100]

/**
 * Previous and next page around "Page n of m" (read out as it changes) and, given `size`, the choice of page size.
 * `page` counts from 0; `pages` is the last answer's `totalPages` (undefined before the first), shown as at least 1.
 * `onPage` gets a page within the list's pages.
 */
export function Pager(props: {
  readonly label: string
  readonly page: number
  readonly pages: number | undefined
  readonly onPage: (page: number) => void
  readonly size?: { readonly value: number; readonly onChange: (size: number) => void }
  readonly t: Translate
}) {
  const { label, page, size, t } = props
  const pages = Math.max(props.pages ?? 1, 1)
  const goTo = (target: number) => props.onPage(Math.min(Math.max(target, 0), pages - 1))
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" disabled={page <= 0} onClick={() => goTo(page - 1)}>
        {t('previousPage')}
      </button>
      <span aria-live="polite">{t('page', { page: page + 1, pages })}</span>
      <button type="button" disabled={page >= pages - 1} onClick={() => goTo(page + 1)}>
        {t('nextPage')}
      </button>
      {size ? (
        <label>
          {t('pageSize')}{' '}
          <select value={size.value} onChange={(event) => size.onChange(Number(event.currentTarget.value))}>
            {PAGE_SIZES.map((option) => (
              <option key={option} value={option}>
                {option}
              </option>
            ))}
          </select>
        </label>
      ) : null}
    </nav>
  )
}
