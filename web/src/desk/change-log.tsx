import { useEffect, useMemo, useState } from 'preact/hooks'
import type { PriceChange } from '../api/types.js'
import type { Api } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'
import { Pager } from '../pager.js'
import { useSession } from '../session.js'
import { BulkApi } from './bulk-api.js'
import { ChangeEntries } from './change-entries.js'
import { ChangeLogFilters } from './change-log-filters.js'
import { parameterText } from './change-words.js'
import { ConfirmDialog } from './confirm-dialog.js'
import { actionLabel, entryRoute, formatMoment } from './desk-format.js'
import { describeChange } from './formula.js'
import { type ChangeLogFilter, PriceProblem, PricesApi } from './prices-api.js'
import { type Outcome, RevertOutcome } from './revert-outcome.js'
import { ScheduledChanges } from './scheduled-changes.js'
import { useLoaded } from './use-loaded.js'
import './desk.css'

/*
 * The change log of the glass price list, newest first: every create, update, delete, bulk change, import and
 * revert, with who, when and what was asked, narrowed by who, the days and the kinds of change; its count of
 * entries opens, beside the log, the entries it touched, old → new. A change is reverted with its button (after a
 * confirmation); the answer says what was restored and, entry by entry, what was left alone and why. Above it, the bulk changes and
 * uploads scheduled for a later time: pending (with a button that cancels one), applied (naming the change they wrote),
 * cancelled or refused; while one is pending the page looks again every few seconds, so it is seen to apply.
 */

const SCHEDULED_RELOAD_MS = 2000

const PAGE_SIZE = 20

interface ChangeLogProps {
  readonly api: Api
  readonly language: Language
  readonly t: Translate
}

export function ChangeLogScreen({ api, language, t }: ChangeLogProps) {
  const prices = useMemo(() => new PricesApi(api), [api])
  const { canWrite } = useSession()
  const [page, setPage] = useState(0)
  const [filter, setFilter] = useState<ChangeLogFilter>({})
  const [opened, setOpened] = useState<number | undefined>()
  const [reloads, setReloads] = useState(0)
  const [asking, setAsking] = useState<PriceChange | undefined>()
  const [busy, setBusy] = useState(false)
  const [outcome, setOutcome] = useState<Outcome | undefined>()

  const { value: changes, error } = useLoaded(
    (signal) => prices.changes(page, PAGE_SIZE, signal, filter),
    [prices, page, reloads, filter],
  )
  const bulk = useMemo(() => new BulkApi(api), [api])
  const { value: scheduled } = useLoaded((signal) => bulk.scheduled(0, PAGE_SIZE, signal), [bulk, reloads])
  const pending = scheduled?.content.some((item) => item.state === 'pending') ?? false
  useEffect(() => {
    if (!pending) return
    const timer = setInterval(() => setReloads((count) => count + 1), SCHEDULED_RELOAD_MS)
    return () => clearInterval(timer)
  }, [pending])

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

  return (
    <div class={opened === undefined ? 'desk' : 'desk beside-panel'}>
      <div class="desk-main">
        <h2>{t('changeLog')}</h2>
        <RevertOutcome outcome={outcome} t={t} />
        {error ? <p role="alert">{t('loadFailed', { reason: error })}</p> : null}

        <ScheduledChanges
          scheduled={scheduled}
          bulk={bulk}
          canWrite={canWrite}
          onChanged={() => setReloads((count) => count + 1)}
          language={language}
          t={t}
        />

        <ChangeLogFilters
          filter={filter}
          onChange={(next) => {
            setFilter(next)
            setPage(0)
          }}
          t={t}
        />

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
                    <td class="number">
                      {change.changedCount > 0 ? (
                        <button
                          type="button"
                          data-action="entries"
                          aria-pressed={opened === change.id}
                          onClick={() => setOpened(opened === change.id ? undefined : change.id)}
                        >
                          {change.changedCount}
                          <span class="visually-hidden"> — {t('deskChangeEntriesOf', { id: change.id })}</span>
                        </button>
                      ) : (
                        change.changedCount
                      )}
                    </td>
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
      {opened !== undefined ? (
        <ChangeEntries
          key={opened}
          prices={prices}
          batch={opened}
          language={language}
          t={t}
          onClose={() => {
            const batch = opened
            setOpened(undefined)
            setTimeout(() =>
              document.querySelector<HTMLButtonElement>(`#change-${batch} [data-action="entries"]`)?.focus(),
            )
          }}
        />
      ) : null}
    </div>
  )
}
