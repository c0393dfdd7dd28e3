import { useEffect, useMemo, useState } from 'preact/hooks'
import type { PriceChange, RevertConflict, RevertResult, ScheduledChange } from '../api/types.js'
import type { Api } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'
import { Pager } from '../pager.js'
import { useSession } from '../session.js'
import { BulkApi } from './bulk-api.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { actionLabel, conflictLabel, entryRoute, formatMoment } from './desk-format.js'
import { describeChange, describeFormula, describeScheduledUpload, isRounding } from './formula.js'
import { PriceProblem, PricesApi } from './prices-api.js'
import { useLoaded } from './use-loaded.js'
import './desk.css'

/*
 * The change log of the glass price list, newest first: every create, update, delete, bulk change, import and
 * revert, with who, when and what was asked. A change is reverted with its button (after a confirmation); the
 * answer says what was restored and, entry by entry, what was left alone and why. Above it, the bulk changes and
 * uploads scheduled for a later time: pending (with a button that cancels one), applied (naming the change they wrote),
 * cancelled or refused; while one is pending the page looks again every few seconds, so it is seen to apply.
 */

const SCHEDULED_RELOAD_MS = 2000

const PAGE_SIZE = 20

/** What a revert answered: its result, or the refusal explained (409: all conflicts, or reverted before). */
type Outcome =
  | { readonly kind: 'done'; readonly result: RevertResult }
  | {
      readonly kind: 'conflicts'
      readonly change: number
      readonly conflicts: readonly RevertConflict[]
      count: number
    }
  | { readonly kind: 'already'; readonly change: number; readonly revertedBy: number }
  | { readonly kind: 'failed'; readonly change: number; readonly message: string }

/** A change's parameters in one line (`filter.manufacturer=safilo, coefficient=1.15`), nested keys dotted. */
function parameterText(parameters: Readonly<Record<string, unknown>>, prefix = ''): string[] {
  return Object.entries(parameters).flatMap(([key, value]) => {
    if (value === null || value === undefined || value === '') return []
    if (typeof value === 'object' && !Array.isArray(value)) {
      return parameterText(value as Record<string, unknown>, `${prefix}${key}.`)
    }
    return [`${prefix}${key}=${Array.isArray(value) ? value.join(',') : String(value)}`]
  })
}

interface ChangeLogProps {
  readonly api: Api
  readonly language: Language
  readonly t: Translate
}

export function ChangeLogScreen({ api, language, t }: ChangeLogProps) {
  const prices = useMemo(() => new PricesApi(api), [api])
  const { canWrite } = useSession()
  const [page, setPage] = useState(0)
  const [reloads, setReloads] = useState(0)
  const [asking, setAsking] = useState<PriceChange | undefined>()
  const [busy, setBusy] = useState(false)
  const [outcome, setOutcome] = useState<Outcome | undefined>()

  const { value: changes, error } = useLoaded(
    (signal) => prices.changes(page, PAGE_SIZE, signal),
    [prices, page, reloads],
  )
  const bulk = useMemo(() => new BulkApi(api), [api])
  const { value: scheduled } = useLoaded((signal) => bulk.scheduled(0, PAGE_SIZE, signal), [bulk, reloads])
  const [cancelFailure, setCancelFailure] = useState<string | undefined>()
  const pending = scheduled?.content.some((item) => item.state === 'pending') ?? false
  useEffect(() => {
    if (!pending) return
    const timer = setInterval(() => setReloads((count) => count + 1), SCHEDULED_RELOAD_MS)
    return () => clearInterval(timer)
  }, [pending])

  const cancelScheduled = async (item: ScheduledChange) => {
    setCancelFailure(undefined)
    try {
      await bulk.cancelScheduled(item.id)
    } catch (reason) {
      setCancelFailure((reason as Error).message)
    }
    setReloads((count) => count + 1)
  }

  const scheduledState = (item: ScheduledChange) => {
    if (item.state === 'applied') return t('scheduledApplied', { batch: item.batch ?? '' })
    if (item.state === 'cancelled') return t('scheduledCancelled', { user: item.cancelledBy ?? '' })
    if (item.state === 'failed') return t('scheduledFailed', { reason: String(item.problem?.detail ?? '') })
    return t('scheduledPending')
  }

  const revert = async (change: PriceChange) => {
    setBusy(true)
    try {
      setOutcome({ kind: 'done', result: await prices.revert(change.id) })
    } catch (reason) {
      const problem = reason instanceof PriceProblem ? reason.problem : {}
      if (problem.code === 'revert-conflicts') {
        setOutcome({
          kind: 'conflicts',
          change: change.id,
          conflicts: problem.conflicts ?? [],
          count: problem.conflictCount ?? problem.conflicts?.length ?? 0,
        })
      } else if (problem.code === 'already-reverted' && problem.revertedBy !== undefined) {
        setOutcome({ kind: 'already', change: change.id, revertedBy: problem.revertedBy })
      } else {
        setOutcome({ kind: 'failed', change: change.id, message: (reason as Error).message })
      }
    }
    setBusy(false)
    setAsking(undefined)
    setReloads((count) => count + 1)
  }

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
      {count > conflicts.length ? <p>{t('deskMoreConflicts', { count: count - conflicts.length })}</p> : null}
    </>
  )

  return (
    <div class="desk">
      <h2>{t('changeLog')}</h2>
      {outcome?.kind === 'done' ? (
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
      ) : null}
      {error ? <p role="alert">{t('loadFailed', { reason: error })}</p> : null}

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

      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard */}
      <section class="table-scroll" aria-label={t('changeLog')} tabIndex={0}>
        <table class="results change-log">
          <caption>
            {t('changeLog')}
            {changes ? `: ${t('deskChangesTotal', { total: changes.totalElements })}` : ''}
          </caption>
          <thead>
            <tr>
              <th scope="col">{t('deskChange')}</th>
              <th scope="col">{t('deskWhen')}</th>
              <th scope="col">{t('deskWho')}</th>
              <th scope="col">{t('deskWhat')}</th>
              <th scope="col">{t('deskEntries')}</th>
              <th scope="col">{t('deskParameters')}</th>
              <th scope="col">{t('deskRevertState')}</th>
            </tr>
          </thead>
          <tbody>
            {changes?.content.map((change) => {
              const entryId = change.parameters.id
              return (
                <tr key={change.id} id={`change-${change.id}`}>
                  <td class="number">{change.id}</td>
                  <td>{formatMoment(change.createdAt, language)}</td>
                  <td>{change.user}</td>
                  <td>
                    {t(actionLabel[change.action])}
                    {change.reverts !== null ? ` ${t('deskRevertsChange', { id: change.reverts })}` : ''}
                  </td>
                  <td class="number">{change.changedCount}</td>
                  <td>
                    {typeof entryId === 'number' ? (
                      <a href={entryRoute(entryId)}>{t('deskEntryNumber', { id: entryId })}</a>
                    ) : (
                      (describeChange(change, t) ?? <code>{parameterText(change.parameters).join(', ')}</code>)
                    )}
                  </td>
                  <td>
                    {change.revertedBy !== null ? (
                      t('deskRevertedBy', { id: change.revertedBy })
                    ) : canWrite ? (
                      <button
                        type="button"
                        data-action="revert"
                        aria-label={t('deskRevertChange', { id: change.id })}
                        onClick={() => {
                          setOutcome(undefined)
                          setAsking(change)
                        }}
                      >
                        {t('deskRevert')}
                      </button>
                    ) : (
                      t('emptyValue')
                    )}
                  </td>
                </tr>
              )
            })}
            {changes && changes.content.length === 0 ? (
              <tr>
                <td colSpan={7}>{t('deskNoChanges')}</td>
              </tr>
            ) : null}
          </tbody>
        </table>
      </section>

      <Pager label={t('paging')} page={page} pages={changes?.totalPages} onPage={setPage} t={t} />

      {asking ? (
        <ConfirmDialog
          id="confirm-revert"
          title={t('deskRevertQuestion', { id: asking.id })}
          confirm={t('deskRevertConfirm')}
          cancel={t('deskRevertKeep')}
          busy={busy}
          onConfirm={() => void revert(asking)}
          onClose={() => setAsking(undefined)}
        >
          <p>{t('deskRevertExplained')}</p>
        </ConfirmDialog>
      ) : null}
    </div>
  )
}

/**
 * A scheduled change's terms in words (the wizard's formula, or an upload's file and mode), or its parameters when
 * they have no words.
 */
function formulaOf(item: ScheduledChange, t: Translate): string {
  const terms = item.parameters
  if (item.operation === 'upload') return describeScheduledUpload(terms, t) ?? parameterText(terms).join(', ')
  const text = (name: string) => (typeof terms[name] === 'string' ? (terms[name] as string) : undefined)
  const base = text('priceTypeBase')
  const change = text('priceTypeChange')
  const round = text('round')
  if ((base !== 'RETAIL' && base !== 'PURCHASE') || (change !== 'RETAIL' && change !== 'PURCHASE') || !round) {
    return parameterText(terms).join(', ')
  }
  if (!isRounding(round)) {
    return parameterText(terms).join(', ')
  }
  const optional = (name: string) => (text(name) === undefined ? {} : { [name]: text(name) })
  const filter = typeof terms.filter === 'object' && terms.filter !== null ? terms.filter : {}
  const selection = parameterText(filter as Record<string, unknown>).join(', ')
  const words = describeFormula(
    {
      priceTypeBase: base,
      priceTypeChange: change,
      round,
      ...optional('coefficient'),
      ...optional('percent'),
      ...optional('difference'),
      ...(text('direction') === 'UP' ? { direction: 'UP' as const } : {}),
    },
    t,
  )
  return selection ? `${words} (${selection})` : words
}
