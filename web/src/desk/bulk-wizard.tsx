import { useMemo, useRef, useState } from 'preact/hooks'
import type { BulkChangePreview, PreviewRow, PriceType, WriteJob } from '../api/types.js'
import type { Api } from '../api.js'
import type { MessageKey, Translate } from '../i18n/index.js'
import { useSession } from '../session.js'
import {
  BACKGROUND_FROM,
  BulkApi,
  type BulkChangeApplied,
  type BulkChangeBody,
  type Direction,
  newIdempotencyKey,
  Problem,
  type Rounding,
} from './bulk-api.js'
import {
  checkFilters,
  describeSelection,
  errorsAt,
  type FieldErrors,
  FilterFields,
  sentFilters,
  TextField,
} from './desk-fields.js'
import { formatMoney } from './desk-format.js'
import { describeFormula, effectiveInstant, formatEffective, isDecimalOrBlank, normaliseDecimal } from './formula.js'
import { JobProgressBar } from './job-progress.js'
import type { Filters } from './prices-api.js'
import { UndoChange } from './undo-change.js'
import './bulk-desk.css'

/*
 * The bulk price change as a wizard: 1 the selection (the listing's filters and the band of the base price),
 * 2 the formula, said in words as it is typed, 3 the dry run, which cannot be skipped: counts, the first changes
 * old → new, the rejections, and why it would be refused; 4 the confirmation, sent with one Idempotency-Key so a
 * double click or a retry applies once, then the count written, the change's number and its Undo. What the
 * service finds wrong with a field is shown at that field, on its step.
 */

type Step = 1 | 2 | 3 | 4

const STEPS: readonly { step: Step; label: MessageKey }[] = [
  { step: 1, label: 'stepSelection' },
  { step: 2, label: 'stepFormula' },
  { step: 3, label: 'stepDryRun' },
  { step: 4, label: 'stepConfirm' },
]

interface Formula {
  readonly bandFrom: string
  readonly bandTo: string
  readonly priceTypeBase: PriceType
  readonly priceTypeChange: PriceType
  readonly coefficient: string
  readonly percent: string
  readonly difference: string
  readonly round: Rounding
  readonly direction: Direction
  /** The picker's local date and time (`2026-12-01T09:00`); blank = at once. */
  readonly effectiveAt: string
}

const initialFormula: Formula = {
  bandFrom: '',
  bandTo: '',
  priceTypeBase: 'RETAIL',
  priceTypeChange: 'RETAIL',
  coefficient: '',
  percent: '',
  difference: '',
  round: 'WHOLE',
  direction: 'NEAREST',
  effectiveAt: '',
}

const ROUNDING_OPTIONS: readonly [Rounding, MessageKey][] = [
  ['WHOLE', 'roundWhole'],
  ['TENS', 'roundTens'],
  ['HUNDREDS', 'roundHundreds'],
  ['ENDS_90', 'roundEnds90'],
  ['ENDS_99', 'roundEnds99'],
  ['ENDS_00', 'roundEnds00'],
]
const DIRECTION_OPTIONS: readonly [Direction, MessageKey][] = [
  ['NEAREST', 'directionNearest'],
  ['UP', 'directionUp'],
]

/** The request body of a formula: blanks left out (a coefficient of 1, a difference of 0, no band). */
function bodyOf(formula: Formula): BulkChangeBody {
  const effective = effectiveInstant(formula.effectiveAt)
  const optional = (name: string, raw: string) => {
    const value = normaliseDecimal(raw)
    return value === '' ? {} : { [name]: value }
  }
  return {
    ...optional('priceFrom', formula.bandFrom),
    ...optional('priceTo', formula.bandTo),
    priceTypeBase: formula.priceTypeBase,
    priceTypeChange: formula.priceTypeChange,
    ...optional('coefficient', formula.coefficient),
    ...optional('percent', formula.percent),
    ...optional('difference', formula.difference),
    round: formula.round,
    ...(formula.direction === 'UP' ? { direction: formula.direction } : {}),
    ...(effective ? { effectiveAt: effective } : {}),
  }
}

/** Where the service's field errors of the bulk change's body are shown (input ids), and on which step. */
const bodyFieldIds: Readonly<Record<string, { id: string; step: Step }>> = {
  priceFrom: { id: 'band-priceFrom', step: 1 },
  priceTo: { id: 'band-priceTo', step: 1 },
  priceTypeBase: { id: 'base-RETAIL', step: 2 },
  priceTypeChange: { id: 'change-RETAIL', step: 2 },
  coefficient: { id: 'coefficient', step: 2 },
  percent: { id: 'percent', step: 2 },
  difference: { id: 'difference', step: 2 },
  round: { id: 'round', step: 2 },
  direction: { id: 'direction', step: 2 },
  effectiveAt: { id: 'effectiveAt', step: 2 },
}

const reasonKey: Record<string, MessageKey> = {
  'bulk-change-rejected': 'reasonRejected',
  'nothing-selected': 'reasonNothingSelected',
  'nothing-changes': 'reasonNothingChanges',
}

export function BulkChangeScreen({ api, t }: { readonly api: Api; readonly t: Translate }) {
  const bulk = useMemo(() => new BulkApi(api), [api])
  const { canWrite } = useSession()
  const [step, setStep] = useState<Step>(1)
  const [filters, setFilters] = useState<Filters>({})
  const [formula, setFormula] = useState<Formula>(initialFormula)
  const [errors, setErrors] = useState<FieldErrors>({})
  const [failure, setFailure] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const [selected, setSelected] = useState<number | undefined>()
  const [preview, setPreview] = useState<BulkChangePreview | undefined>()
  const [applied, setApplied] = useState<BulkChangeApplied | undefined>()
  const [job, setJob] = useState<WriteJob | undefined>()
  // One key per confirmation: made when the confirmation is shown, kept for every retry of it.
  const key = useRef('')
  // Set at once (state is not, until the next render): a double click sends one request.
  const inFlight = useRef(false)
  const heading = useRef<HTMLHeadingElement>(null)

  const body = bodyOf(formula)
  const sent = sentFilters(filters, normaliseDecimal)
  const money = new Intl.NumberFormat(t('numberLocale'), { maximumFractionDigits: 2 })

  const go = (next: Step) => {
    setStep(next)
    setFailure(undefined)
    // The step's heading takes the focus, so a screen reader and the keyboard start at the new step.
    requestAnimationFrame(() => heading.current?.focus())
  }

  const editFilters = (next: Filters) => {
    setFilters(next)
    setSelected(undefined)
    setPreview(undefined)
  }
  const editFormula = (change: Partial<Formula>) => {
    setFormula((current) => ({ ...current, ...change }))
    setPreview(undefined)
  }

  /** Step 1 → 2: the filters checked by the service itself (the listing), which also counts what they select. */
  const submitSelection = async () => {
    if (busy) return
    const own = {
      ...checkFilters('filter', filters, t),
      ...(isDecimalOrBlank(formula.bandFrom) ? {} : { 'band-priceFrom': t('notANumber') }),
      ...(isDecimalOrBlank(formula.bandTo) ? {} : { 'band-priceTo': t('notANumber') }),
    }
    setErrors(own)
    if (Object.keys(own).length > 0) return
    setBusy(true)
    try {
      setSelected(await bulk.count(sent))
      go(2)
    } catch (error) {
      showProblem(error, (field) => `filter-${field}`)
    } finally {
      setBusy(false)
    }
  }

  /** Step 2 → 3: the dry run, whose field errors send the manager back to the step of the first of them. */
  const submitFormula = async () => {
    if (busy) return
    const own = {
      ...(isDecimalOrBlank(formula.coefficient) ? {} : { coefficient: t('notANumber') }),
      ...(isDecimalOrBlank(formula.percent) ? {} : { percent: t('notANumber') }),
      ...(isDecimalOrBlank(formula.difference) ? {} : { difference: t('notANumber') }),
    }
    setErrors(own)
    if (Object.keys(own).length > 0) return
    setBusy(true)
    try {
      setPreview(await bulk.preview(sent, body))
      go(3)
    } catch (error) {
      // The manager is taken to the earliest step with a field in error.
      const steps = error instanceof Problem ? error.errors.map((e) => bodyFieldIds[e.field]?.step ?? 2) : []
      const first = Math.min(...steps, 2) as Step
      showProblem(error, (field) => bodyFieldIds[field]?.id)
      if (first !== step) go(first)
    } finally {
      setBusy(false)
    }
  }

  const confirm = () => {
    key.current = newIdempotencyKey()
    go(4)
  }

  const apply = async () => {
    if (inFlight.current) return
    inFlight.current = true
    setBusy(true)
    setFailure(undefined)
    try {
      const background = (preview?.changedCount ?? 0) >= BACKGROUND_FROM
      setApplied(await bulk.apply(sent, body, key.current, background, setJob))
    } catch (error) {
      showProblem(error, (field) => bodyFieldIds[field]?.id)
    } finally {
      inFlight.current = false
      setBusy(false)
      setJob(undefined)
    }
  }

  const restart = () => {
    setApplied(undefined)
    setPreview(undefined)
    setSelected(undefined)
    setErrors({})
    go(1)
  }
  /** After a change is applied or scheduled: start another. */
  const newChange = (
    <div class="actions">
      <button type="button" class="secondary" onClick={restart}>
        {t('newBulkChange')}
      </button>
    </div>
  )

  function showProblem(error: unknown, ids: (field: string) => string | undefined) {
    if (error instanceof Problem && error.errors.length > 0) {
      const placed = errorsAt(error, ids)
      setErrors(placed)
      if (Object.keys(placed).length === error.errors.length) return
    }
    setFailure((error as Error).message)
  }

  /** The selection in words: the filters (exact or contains), then the band of the base price. */
  const selectionWords = () => {
    const band = [
      ['baseFrom', body.priceFrom],
      ['baseTo', body.priceTo],
    ] as const
    return describeSelection(
      sent,
      t,
      band.flatMap(([label, value]) =>
        value === undefined ? [] : [t('selectionBound', { field: t(label), value: String(value) })],
      ),
    )
  }
  const stepHeading = (label: MessageKey) => (
    <h3 tabIndex={-1} ref={heading}>
      {t('stepOf', { step, steps: STEPS.length, title: t(label) })}
    </h3>
  )

  const radios = (name: 'priceTypeBase' | 'priceTypeChange', prefix: string, legend: MessageKey) => (
    <fieldset class="choice">
      <legend>{t(legend)}</legend>
      {(['RETAIL', 'PURCHASE'] as const).map((type) => (
        <label key={type}>
          <input
            type="radio"
            id={`${prefix}-${type}`}
            name={name}
            value={type}
            checked={formula[name] === type}
            aria-invalid={errors[`${prefix}-RETAIL`] ? true : undefined}
            onChange={() => editFormula({ [name]: type })}
          />{' '}
          {t(type === 'RETAIL' ? 'retailPriceTitle' : 'purchasePriceTitle')}
        </label>
      ))}
      {errors[`${prefix}-RETAIL`] ? <span class="error">{errors[`${prefix}-RETAIL`]}</span> : null}
    </fieldset>
  )

  /** A typed field of the formula: a decimal, or the date and time it takes effect. */
  const formulaField = (
    name: 'percent' | 'coefficient' | 'difference' | 'effectiveAt',
    label: MessageKey,
    hint: MessageKey,
  ) => (
    <TextField
      id={name}
      name={name}
      label={t(label)}
      hint={t(hint)}
      value={formula[name]}
      error={errors[name]}
      decimal={name !== 'effectiveAt'}
      dateTime={name === 'effectiveAt'}
      onInput={(value) => editFormula({ [name]: value })}
    />
  )

  const choice = <K extends 'round' | 'direction'>(
    name: K,
    label: MessageKey,
    options: readonly (readonly [Formula[K], MessageKey])[],
  ) => (
    <div class="field">
      <label for={name}>{t(label)}</label>
      <select
        id={name}
        name={name}
        value={formula[name]}
        aria-invalid={errors[name] ? true : undefined}
        aria-describedby={errors[name] ? `${name}-error` : undefined}
        onChange={(event) => editFormula({ [name]: event.currentTarget.value as Formula[K] })}
      >
        {options.map(([value, key]) => (
          <option key={value} value={value}>
            {t(key)}
          </option>
        ))}
      </select>
      {errors[name] ? (
        <span class="error" id={`${name}-error`}>
          {errors[name]}
        </span>
      ) : null}
    </div>
  )

  const beforeAfter = (
    id: string,
    label: MessageKey,
    values: { old: string | null; new: string | null },
    unit = '',
  ) => (
    <div>
      <dt>{t(label)}</dt>
      <dd id={id}>
        {t('beforeAfter', {
          old: `${formatMoney(values.old, t('numberLocale'))}${unit}`,
          new: `${formatMoney(values.new, t('numberLocale'))}${unit}`,
        })}
      </dd>
    </div>
  )

  const rows = (caption: string, list: readonly PreviewRow[], rejected: boolean) => (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolled region takes the focus, so the keyboard scrolls it
    <section class="table-scroll" aria-label={caption} tabIndex={0}>
      <table class={`results sample${rejected ? ' rejected' : ''}`}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{t('entryId')}</th>
            <th scope="col">{t('manufacturer')}</th>
            <th scope="col">{t('brand')}</th>
            <th scope="col">{t('model')}</th>
            <th scope="col" class="number">
              {t('basePrice')}
            </th>
            <th scope="col" class="number">
              {t('oldValue')}
            </th>
            <th scope="col" class="number">
              {t('newValue')}
            </th>
          </tr>
        </thead>
        <tbody>
          {list.map((row) => (
            <tr key={row.id}>
              <td>{row.id}</td>
              <td>{row.manufacturer}</td>
              <td>{row.brand}</td>
              <td>{row.model}</td>
              <td class="number">{money.format(row.base)}</td>
              <td class="number">{money.format(row.oldValue)}</td>
              <td class="number new">{money.format(row.newValue)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )

  return (
    <section class="bulk-desk bulk" aria-labelledby="bulk-title">
      <h2 id="bulk-title">{t('bulkChange')}</h2>
      {canWrite ? null : (
        <p class="note" role="note">
          {t('bulkReadOnly')}
        </p>
      )}
      <ol class="steps" aria-label={t('wizardSteps')}>
        {STEPS.map((item) => (
          <li key={item.step} aria-current={item.step === step ? 'step' : undefined}>
            {t(item.label)}
          </li>
        ))}
      </ol>

      {step === 1 ? (
        <form
          class="step"
          onSubmit={(event) => {
            event.preventDefault()
            void submitSelection()
          }}
        >
          {stepHeading('stepSelection')}
          <fieldset>
            <legend>{t('listingFilters')}</legend>
            <FilterFields api={api} prefix="filter" filters={filters} errors={errors} onChange={editFilters} t={t} />
          </fieldset>
          <fieldset>
            <legend>{t('baseBand')}</legend>
            <p class="hint">{t('baseBandHint')}</p>
            <div class="fields">
              <TextField
                id="band-priceFrom"
                name="priceFrom"
                label={t('baseFrom')}
                value={formula.bandFrom}
                error={errors['band-priceFrom']}
                decimal
                onInput={(value) => editFormula({ bandFrom: value })}
              />
              <TextField
                id="band-priceTo"
                name="priceTo"
                label={t('baseTo')}
                value={formula.bandTo}
                error={errors['band-priceTo']}
                decimal
                onInput={(value) => editFormula({ bandTo: value })}
              />
            </div>
          </fieldset>
          <div class="actions">
            <button type="submit" aria-disabled={busy}>
              {t('next')}
            </button>
          </div>
        </form>
      ) : null}

      {step === 2 ? (
        <form
          class="step"
          onSubmit={(event) => {
            event.preventDefault()
            void submitFormula()
          }}
        >
          {stepHeading('stepFormula')}
          {selected === undefined ? null : <p>{t('filtersSelect', { count: selected })}</p>}
          {radios('priceTypeBase', 'base', 'priceTypeBase')}
          {radios('priceTypeChange', 'change', 'priceTypeChange')}
          <div class="fields">
            {formulaField('percent', 'percent', 'percentHint')}
            {formulaField('coefficient', 'coefficient', 'coefficientHint')}
            {formulaField('difference', 'difference', 'differenceHint')}
            {choice('round', 'rounding', ROUNDING_OPTIONS)}
            {choice('direction', 'direction', DIRECTION_OPTIONS)}
            {formulaField('effectiveAt', 'effectiveAt', 'effectiveAtHint')}
          </div>
          <p class="formula" aria-live="polite">
            {describeFormula(body, t)}
          </p>
          <div class="actions">
            <button type="button" class="secondary" onClick={() => go(1)}>
              {t('back')}
            </button>
            <button type="submit" aria-disabled={busy}>
              {busy ? t('dryRunning') : t('runDryRun')}
            </button>
          </div>
        </form>
      ) : null}

      {step === 3 && preview ? (
        <div class="step">
          {stepHeading('stepDryRun')}
          <p class="formula">{describeFormula(body, t)}</p>
          <dl class="counts">
            <div>
              <dt>{t('countSelected')}</dt>
              <dd id="count-selected">{preview.selectedCount}</dd>
            </div>
            <div>
              <dt>{t('countChanged')}</dt>
              <dd id="count-changed">{preview.changedCount}</dd>
            </div>
            <div>
              <dt>{t('countUnchanged')}</dt>
              <dd id="count-unchanged">{preview.unchangedCount}</dd>
            </div>
            <div>
              <dt>{t('countRejected')}</dt>
              <dd id="count-rejected">{preview.rejectedCount}</dd>
            </div>
          </dl>
          <dl class="counts totals" aria-label={t('totals')}>
            {beforeAfter('total-retail', 'totalRetail', preview.totals.retail)}
            {beforeAfter('total-purchase', 'totalPurchase', preview.totals.purchase)}
            {beforeAfter('average-markup', 'averageMarkup', preview.totals.averageMarkup, ' %')}
          </dl>
          {preview.wouldApply ? null : (
            <div class="refused" role="alert">
              <p>{t('wouldNotApply')}</p>
              <ul>
                {preview.reasons.map((reason) => (
                  <li key={reason.code}>
                    {reasonKey[reason.code]
                      ? t(reasonKey[reason.code]!, { count: preview.rejectedCount })
                      : reason.message}
                  </li>
                ))}
              </ul>
            </div>
          )}
          {preview.rejected.length > 0
            ? rows(
                t('rejectedSample', { shown: preview.rejected.length, count: preview.rejectedCount }),
                preview.rejected,
                true,
              )
            : null}
          {/* With rejections the change is refused whole: its rejected rows are what to look at. */}
          {preview.changes.length > 0 && preview.rejectedCount === 0
            ? rows(
                t('changesSample', { shown: preview.changes.length, count: preview.changedCount }),
                preview.changes,
                false,
              )
            : null}
          <div class="actions">
            <button type="button" class="secondary" onClick={() => go(2)}>
              {t('back')}
            </button>
            {canWrite ? (
              <button type="button" disabled={!preview.wouldApply} onClick={confirm}>
                {t('toConfirmation')}
              </button>
            ) : null}
          </div>
        </div>
      ) : null}

      {step === 4 && preview ? (
        <div class="step">
          {stepHeading('stepConfirm')}
          {applied?.scheduled ? (
            <>
              <p class="outcome" role="status" id="scheduled">
                {t('scheduledOutcome', {
                  id: applied.scheduled.id,
                  at: formatEffective(applied.scheduled.effectiveAt, t),
                })}{' '}
                <a href="#/prices/changes">{t('changeLog')}</a>
              </p>
              {newChange}
            </>
          ) : applied ? (
            <>
              <p class="outcome" role="status" id="applied">
                {t('applied', { count: applied.changedCount, batch: applied.batch })}
              </p>
              <UndoChange bulk={bulk} batch={applied.batch} size={applied.changedCount} canWrite={canWrite} t={t} />
              {newChange}
            </>
          ) : (
            <>
              <p class="selection-summary" id="selection-summary">
                {t('selectionSummary', { selection: selectionWords(), count: preview.selectedCount })}
              </p>
              <p class="confirm-text">{t('confirmText', { count: preview.changedCount })}</p>
              <p class="formula">{describeFormula(body, t)}</p>
              <div class="actions">
                <button type="button" class="secondary" onClick={() => go(3)}>
                  {t('back')}
                </button>
                <button type="button" class="danger" aria-disabled={busy} onClick={() => void apply()}>
                  {busy
                    ? t('applying')
                    : body.effectiveAt
                      ? t('scheduleChange', { at: formatEffective(body.effectiveAt, t) })
                      : t('applyChange', { count: preview.changedCount })}
                </button>
              </div>
              {job === undefined ? null : <JobProgressBar job={job} t={t} />}
            </>
          )}
        </div>
      ) : null}

      {failure ? (
        <p class="refused" role="alert">
          {t('requestFailed', { reason: failure })}
        </p>
      ) : null}
    </section>
  )
}
