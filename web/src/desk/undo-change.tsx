import { useRef, useState } from 'preact/hooks'
import type { RevertResult, WriteJob } from '../api/types.js'
import type { MessageKey, Translate } from '../i18n/index.js'
import { BACKGROUND_FROM, type BulkApi, newIdempotencyKey, Problem } from './bulk-api.js'
import { formatCount } from './desk-format.js'
import { JobProgressBar } from './job-progress.js'

/*
 * Undo of a change just made (a bulk change, an upload): reverts its batch once, however often it is clicked or
 * retried (one Idempotency-Key per change), and says what came back and what was left alone, and why.
 */

const conflictKey: Record<string, MessageKey> = {
  CHANGED: 'conflictChanged',
  DELETED: 'conflictDeleted',
  EXISTS: 'conflictExists',
  DUPLICATE: 'conflictDuplicate',
}

export function UndoChange(props: {
  readonly bulk: BulkApi
  readonly batch: number
  /** The entries the change wrote: a large change is reverted in the background. */
  readonly size: number
  readonly canWrite: boolean
  readonly t: Translate
}) {
  const { bulk, batch, t } = props
  const [key] = useState(newIdempotencyKey)
  const [sending, setSending] = useState(false)
  const [result, setResult] = useState<RevertResult | undefined>()
  const [failure, setFailure] = useState<{ message: string; conflicts: RevertResult['conflicts'] } | undefined>()
  const [job, setJob] = useState<WriteJob | undefined>()

  // Set at once (state is not, until the next render): a double click sends one request.
  const inFlight = useRef(false)

  const undo = () => {
    if (inFlight.current) return
    inFlight.current = true
    setSending(true)
    setFailure(undefined)
    bulk
      .revert(batch, key, props.size >= BACKGROUND_FROM, setJob)
      .then(setResult)
      .catch((error: unknown) => {
        const conflicts = error instanceof Problem ? ((error.body.conflicts as RevertResult['conflicts']) ?? []) : []
        setFailure({ message: (error as Error).message, conflicts })
      })
      .finally(() => {
        inFlight.current = false
        setSending(false)
        setJob(undefined)
      })
  }

  const conflictList = (conflicts: RevertResult['conflicts']) =>
    conflicts.length > 0 ? (
      <ul class="conflicts">
        {conflicts.map((conflict) => (
          <li key={conflict.entryId}>
            {t('conflictEntry', {
              id: conflict.entryId,
              reason: conflictKey[conflict.reason] ? t(conflictKey[conflict.reason]!) : conflict.reason,
            })}
          </li>
        ))}
      </ul>
    ) : null

  if (result) {
    return (
      <div class="outcome undone" role="status">
        <p>
          {t('undone', {
            restored: formatCount(result.restoredCount, t('numberLocale')),
            batch: result.batch,
            reverted: result.reverted,
          })}
        </p>
        {result.conflictCount > 0 ? (
          <p>{t('undoConflicts', { count: formatCount(result.conflictCount, t('numberLocale')) })}</p>
        ) : null}
        {conflictList(result.conflicts)}
      </div>
    )
  }
  return (
    <div class="undo">
      {props.canWrite ? (
        <button type="button" class="secondary" onClick={undo} aria-disabled={sending}>
          {sending ? t('undoing') : t('undo', { batch })}
        </button>
      ) : null}
      {job ? <JobProgressBar job={job} t={t} /> : null}
      {failure ? (
        <div role="alert" class="refused">
          <p>{t('undoFailed', { reason: failure.message })}</p>
          {conflictList(failure.conflicts)}
        </div>
      ) : null}
    </div>
  )
}
