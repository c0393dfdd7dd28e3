import type { RevertConflict, RevertResult } from '../api/types.js'
import type { Translate } from '../i18n/index.js'
import { conflictLabel, entryRoute, formatCount } from './desk-format.js'

/*
 * What a revert of a change answered, in words: what was restored and, entry by entry, what was left alone and
 * why; or why nothing was (every entry changed since, or the change reverted before).
 */

/** What a revert answered: its result, or the refusal explained (409: all conflicts, or reverted before). */
export type Outcome =
  | { readonly kind: 'done'; readonly result: RevertResult }
  | {
      readonly kind: 'conflicts'
      readonly change: number
      readonly conflicts: readonly RevertConflict[]
      count: number
    }
  | { readonly kind: 'already'; readonly change: number; readonly revertedBy: number }
  | { readonly kind: 'failed'; readonly change: number; readonly message: string }

export function RevertOutcome({ outcome, t }: { readonly outcome: Outcome | undefined; readonly t: Translate }) {
  const conflictList = (conflicts: readonly RevertConflict[], count: number) => (
    <>
      <ul class="conflicts">
        {conflicts.map((conflict) => (
          <li key={conflict.entryId}>
            <a href={entryRoute(conflict.entryId)}>{t('deskEntryNumber', { id: conflict.entryId })}</a>
            {': '}
            {t(conflictLabel[conflict.reason])}
          </li>
        ))}
      </ul>
      {count > conflicts.length ? (
        <p>{t('deskMoreConflicts', { count: formatCount(count - conflicts.length, t('numberLocale')) })}</p>
      ) : null}
    </>
  )

  return outcome?.kind === 'done' ? (
    <div class="notice status revert-outcome" role="status">
      <p>
        {t('deskReverted', {
          change: outcome.result.reverted,
          batch: outcome.result.batch,
          restored: outcome.result.restoredCount,
          conflicts: outcome.result.conflictCount,
        })}
      </p>
      {outcome.result.conflictCount > 0 ? (
        <>
          <p>{t('deskLeftAlone')}</p>
          {conflictList(outcome.result.conflicts, outcome.result.conflictCount)}
        </>
      ) : null}
    </div>
  ) : outcome?.kind === 'conflicts' ? (
    <div class="notice alert revert-outcome" role="alert">
      <p>{t('deskNothingReverted', { change: outcome.change })}</p>
      {conflictList(outcome.conflicts, outcome.count)}
    </div>
  ) : outcome?.kind === 'already' ? (
    <p class="notice alert revert-outcome" role="alert">
      {t('deskAlreadyReverted', { change: outcome.change, batch: outcome.revertedBy })}
    </p>
  ) : outcome?.kind === 'failed' ? (
    <p class="notice alert revert-outcome" role="alert">
      {t('deskRevertFailed', { change: outcome.change, reason: outcome.message })}
    </p>
  ) : null
}
