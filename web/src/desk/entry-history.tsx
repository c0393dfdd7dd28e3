import { useEffect, useRef, useState } from 'preact/hooks'
import type { Language, Translate } from '../i18n/index.js'
import { Pager } from '../pager.js'
import { actionLabel, formatMoment } from './desk-format.js'
import { FieldChanges } from './field-changes.js'
import type { PricesApi } from './prices-api.js'
import { useLoaded } from './use-loaded.js'

interface EntryHistoryProps {
  readonly prices: PricesApi
  readonly id: number
  /** Bumped after a write of the entry, so the history shows it. */
  readonly version: number
  readonly language: Language
  readonly t: Translate
  readonly onClose: () => void
}

/**
 * An entry's changes, newest first: who, when, what kind of change, and field by field old → new. A panel at the
 * side of the window (over the page where the window is narrow), so it is seen whatever row opened it and however
 * far the grid is scrolled; the focus moves to its title, Escape or Close closes it (the caller returns the focus
 * to the row's button).
 */
export function EntryHistory({ prices, id, version, language, t, onClose }: EntryHistoryProps) {
  const [page, setPage] = useState(0)
  const heading = useRef<HTMLHeadingElement>(null)

  useEffect(() => heading.current?.focus(), [])

  const { value: history, error } = useLoaded((signal) => prices.history(id, page, signal), [prices, id, page, version])

  return (
    <section
      class="history side-panel"
      role="dialog"
      aria-modal="false"
      aria-labelledby="history-title"
      onKeyDown={(event) => {
        if (event.key !== 'Escape') return
        event.preventDefault()
        event.stopPropagation()
        onClose()
      }}
    >
      <div class="history-head">
        <h3 id="history-title" ref={heading} tabIndex={-1}>
          {t('deskHistoryOf', { id })}
        </h3>
        <button type="button" onClick={onClose}>
          {t('deskClose')}
        </button>
      </div>
      {error ? <p role="alert">{t('loadFailed', { reason: error })}</p> : null}
      {history && history.content.length === 0 ? <p>{t('deskNoHistory')}</p> : null}
      {history && history.content.length > 0 ? (
        <table class="results history-table">
          <caption class="visually-hidden">{t('deskHistoryOf', { id })}</caption>
          <thead>
            <tr>
              <th scope="col">{t('deskWhen')}</th>
              <th scope="col">{t('deskWho')}</th>
              <th scope="col">{t('deskWhat')}</th>
              <th scope="col">{t('deskFieldChanges')}</th>
            </tr>
          </thead>
          <tbody>
            {history.content.map((item) => (
              <tr key={item.batch}>
                <td>{formatMoment(item.changedAt, language)}</td>
                <td>{item.user}</td>
                <td>
                  {t(actionLabel[item.action])} <span class="muted">{t('deskChangeNumber', { id: item.batch })}</span>
                </td>
                <td>
                  <FieldChanges changes={item.changes} language={language} t={t} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {history && history.totalPages > 1 ? (
        <Pager label={t('deskHistoryPages')} page={page} pages={history.totalPages} onPage={setPage} t={t} />
      ) : null}
    </section>
  )
}
