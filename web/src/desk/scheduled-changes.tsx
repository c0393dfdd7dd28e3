import { useState } from 'preact/hooks'
import type { ScheduledChange, ScheduledPage } from '../api/types.js'
import type { Language, Translate } from '../i18n/index.js'
import type { BulkApi } from './bulk-api.js'
import { formulaOf } from './change-words.js'
import { formatMoment } from './desk-format.js'

/*
 * The bulk changes and uploads scheduled for a later time, above the change log: pending (with a button that
 * cancels one), applied (naming the change they wrote), cancelled or refused.
 */

export function ScheduledChanges(props: {
  readonly scheduled: ScheduledPage | undefined
  readonly bulk: BulkApi
  readonly canWrite: boolean
  /** Called once a cancel has been answered, so the lists are loaded again. */
  readonly onChanged: () => void
  readonly language: Language
  readonly t: Translate
}) {
  const { scheduled, bulk, canWrite, onChanged, language, t } = props
  const [cancelFailure, setCancelFailure] = useState<string | undefined>()

  const cancelScheduled = async (item: ScheduledChange) => {
    setCancelFailure(undefined)
    try {
      await bulk.cancelScheduled(item.id)
    } catch (reason) {
      setCancelFailure((reason as Error).message)
    }
    onChanged()
  }

  const scheduledState = (item: ScheduledChange) => {
    if (item.state === 'applied') return t('scheduledApplied', { batch: item.batch ?? '' })
    if (item.state === 'cancelled') return t('scheduledCancelled', { user: item.cancelledBy ?? '' })
    if (item.state === 'failed') return t('scheduledFailed', { reason: String(item.problem?.detail ?? '') })
    return t('scheduledPending')
  }

  return (
    <>
      {scheduled && scheduled.content.length > 0 ? (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
        <section class="table-scroll" aria-label={t('scheduledChanges')} tabIndex={0}>
          <table class="results scheduled-changes">
            <caption>{t('scheduledChanges')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('deskChange')}</th>
                <th scope="col">{t('scheduledEffective')}</th>
                <th scope="col">{t('deskWho')}</th>
                <th scope="col">{t('deskParameters')}</th>
                <th scope="col">{t('scheduledState')}</th>
              </tr>
            </thead>
            <tbody>
              {scheduled.content.map((item) => (
                <tr key={item.id} id={`scheduled-${item.id}`} data-state={item.state}>
                  <td class="number">{item.id}</td>
                  <td>{formatMoment(item.effectiveAt, language)}</td>
                  <td>{item.createdBy}</td>
                  <td>{formulaOf(item, t)}</td>
                  <td>
                    {scheduledState(item)}
                    {item.state === 'pending' && canWrite ? (
                      <>
                        {' '}
                        <button
                          type="button"
                          data-action="cancel-scheduled"
                          aria-label={t('cancelScheduled', { id: item.id })}
                          onClick={() => void cancelScheduled(item)}
                        >
                          {t('cancelScheduledShort')}
                        </button>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
      {cancelFailure ? (
        <p class="notice alert" role="alert">
          {t('requestFailed', { reason: cancelFailure })}
        </p>
      ) : null}
    </>
  )
}
