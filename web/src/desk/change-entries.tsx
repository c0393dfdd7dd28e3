import { useEffect, useRef, useState } from 'preact/hooks'
import type { Language, Translate } from '../i18n/index.js'
import { Pager } from '../pager.js'
import { entryRoute, formatCount } from './desk-format.js'
import { FieldChanges } from './field-changes.js'
import type { PricesApi } from './prices-api.js'
import { useLoaded } from './use-loaded.js'

interface ChangeEntriesProps {
  readonly prices: PricesApi
  readonly batch: number
  readonly language: Language
  readonly t: Translate
  readonly onClose: () => void
}

/**
 * The entries one change touched (`GET …/changes/{batch}/entries`), by id, in a panel at the side of the window:
 * each entry linked to its row and history, its key, whether it was deleted since, and what the change wrote,
 * field by field old → new. The focus moves to its title; Escape or Close closes it.
 */
export function ChangeEntries({ prices, batch, language, t, onClose }: ChangeEntriesProps) {
  const [page, setPage] = useState(0)
  const heading = useRef<HTMLHeadingElement>(null)
  useEffect(() => heading.current?.focus(), [])
  const { value: entries, error } = useLoaded(
    (signal) => prices.changeEntries(batch, page, signal),
    [prices, batch, page],
  )

  return (
    <section
      class="history side-panel change-entries"
      role="dialog"
      aria-modal="false"
      aria-labelledby="change-entries-title"
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return
        event.preventDefault()
        event.stopPropagation()
        onClose()
      }}
    >
      <div class="history-head">
        <h3 id="change-entries-title" ref={heading} tabIndex={-1}>
          {t('deskChangeEntriesOf', { id: batch })}
        </h3>
        <button type="button" onClick={onClose}>
          {t('deskClose')}
        </button>
      </div>
      {error ? <p role="alert">{t('loadFailed', { reason: error })}</p> : null}
      {entries && entries.content.length === 0 ? <p>{t('deskNoChangeEntries')}</p> : null}
      {entries && entries.content.length > 0 ? (
        <table class="results history-table">
          <caption>{t('deskChangeEntriesTotal', { total: formatCount(entries.totalElements, language) })}</caption>
          <thead>
            <tr>
              <th scope="col">{t('deskEntry')}</th>
              <th scope="col">{t('deskFieldChanges')}</th>
            </tr>
          </thead>
          <tbody>
            {entries.content.map((entry) => (
              <tr key={entry.entryId} id={`change-entry-${entry.entryId}`}>
                <td>
                  <a href={entryRoute(entry.entryId)}>{t('deskEntryNumber', { id: entry.entryId })}</a>
                  <br />
                  {entry.manufacturer} · {entry.brand} · {entry.model}
                  {entry.exists ? null : <span class="muted"> ({t('deskEntryDeletedSince')})</span>}
                </td>
                <td>
                  <FieldChanges changes={entry.changes} language={language} t={t} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {entries && entries.totalPages > 1 ? (
        <Pager label={t('deskChangeEntriesPages')} page={page} pages={entries.totalPages} onPage={setPage} t={t} />
      ) : null}
    </section>
  )
}
