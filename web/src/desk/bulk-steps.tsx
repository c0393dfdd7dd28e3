import type { Ref } from 'preact'
import type { Api } from '../api.js'
import type { MessageKey, Translate } from '../i18n/index.js'
import { DIRECTION_OPTIONS, type Formula, ROUNDING_OPTIONS, STEPS } from './bulk-formula.js'
import { DryRunResult } from './bulk-preview.js'
import { describeSelection, FilterFields, TextField } from './desk-fields.js'
import { formatCount } from './desk-format.js'
import { describeFormula, formatEffective } from './formula.js'
import { JobProgressBar } from './job-progress.js'
import { UndoChange } from './undo-change.js'
import type { BulkChange } from './use-bulk-change.js'

/*
 * The bulk change wizard's four steps: 1 the selection (the listing's filters and the band of the base price),
 * 2 the formula, said in words as it is typed, 3 the dry run, 4 the confirmation and what it did.
 */

export interface StepProps {
  readonly wizard: BulkChange
  /** The step's heading, which takes the focus when the step opens. */
  readonly heading: Ref<HTMLHeadingElement>
  readonly t: Translate
}

function StepHeading({ wizard, heading, t, label }: StepProps & { readonly label: MessageKey }) {
  return (
    <h3 tabIndex={-1} ref={heading}>
      {t('stepOf', { step: wizard.step, steps: STEPS.length, title: t(label) })}
    </h3>
  )
}

export function SelectionStep(props: StepProps & { readonly api: Api }) {
  const { wizard, t } = props
  const { formula, errors, editFormula } = wizard
  return (
    <form
      class="step"
      onSubmit={(event) => {
        event.preventDefault()
        void wizard.submitSelection()
      }}
    >
      <StepHeading {...props} label="stepSelection" />
      <fieldset>
        <legend>{t('listingFilters')}</legend>
        <FilterFields
          api={props.api}
          prefix="filter"
          filters={wizard.filters}
          errors={errors}
          onChange={wizard.editFilters}
          t={t}
        />
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
        <button type="submit" aria-disabled={wizard.busy}>
          {t('next')}
        </button>
      </div>
    </form>
  )
}

export function FormulaStep(props: StepProps) {
  const { wizard, t } = props
  const { formula, errors, editFormula, busy } = wizard

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

  return (
    <form
      class="step"
      onSubmit={(event) => {
        event.preventDefault()
        void wizard.submitFormula()
      }}
    >
      <StepHeading {...props} label="stepFormula" />
      {wizard.selected === undefined ? null : (
        <p>{t('filtersSelect', { count: formatCount(wizard.selected, t('numberLocale')) })}</p>
      )}
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
        {describeFormula(wizard.body, t)}
      </p>
      <div class="actions">
        <button type="button" class="secondary" onClick={() => wizard.go(1)}>
          {t('back')}
        </button>
        <button type="submit" aria-disabled={busy}>
          {busy ? t('dryRunning') : t('runDryRun')}
        </button>
      </div>
    </form>
  )
}

export function DryRunStep(props: StepProps & { readonly canWrite: boolean }) {
  const { wizard, t } = props
  const { preview, body } = wizard
  if (!preview) return null
  return (
    <div class="step">
      <StepHeading {...props} label="stepDryRun" />
      <p class="formula">{describeFormula(body, t)}</p>
      <DryRunResult preview={preview} t={t} />
      <div class="actions">
        <button type="button" class="secondary" onClick={() => wizard.go(2)}>
          {t('back')}
        </button>
        {props.canWrite ? (
          <button type="button" disabled={!preview.wouldApply} onClick={wizard.confirm}>
            {t('toConfirmation')}
          </button>
        ) : null}
      </div>
    </div>
  )
}

export function ConfirmStep(props: StepProps & { readonly canWrite: boolean }) {
  const { wizard, t } = props
  const { preview, applied, body, busy } = wizard
  if (!preview) return null
  /** After a change is applied or scheduled: start another. */
  const newChange = (
    <div class="actions">
      <button type="button" class="secondary" onClick={wizard.restart}>
        {t('newBulkChange')}
      </button>
    </div>
  )
  /** The selection in words: the filters (exact or contains), then the band of the base price. */
  const selectionWords = () => {
    const band = [
      ['baseFrom', body.priceFrom],
      ['baseTo', body.priceTo],
    ] as const
    return describeSelection(
      wizard.sent,
      t,
      band.flatMap(([label, value]) =>
        value === undefined ? [] : [t('selectionBound', { field: t(label), value: String(value) })],
      ),
    )
  }
  return (
    <div class="step">
      <StepHeading {...props} label="stepConfirm" />
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
            {t('applied', { count: formatCount(applied.changedCount, t('numberLocale')), batch: applied.batch })}
          </p>
          <UndoChange
            bulk={wizard.bulk}
            batch={applied.batch}
            size={applied.changedCount}
            canWrite={props.canWrite}
            t={t}
          />
          {newChange}
        </>
      ) : (
        <>
          <p class="selection-summary" id="selection-summary">
            {t('selectionSummary', {
              selection: selectionWords(),
              count: formatCount(preview.selectedCount, t('numberLocale')),
            })}
          </p>
          <p class="confirm-text">
            {t('confirmText', { count: formatCount(preview.changedCount, t('numberLocale')) })}
          </p>
          <p class="formula">{describeFormula(body, t)}</p>
          <div class="actions">
            <button type="button" class="secondary" onClick={() => wizard.go(3)}>
              {t('back')}
            </button>
            <button type="button" class="danger" aria-disabled={busy} onClick={() => void wizard.apply()}>
              {busy
                ? t('applying')
                : body.effectiveAt
                  ? t('scheduleChange', { at: formatEffective(body.effectiveAt, t) })
                  : t('applyChange', { count: formatCount(preview.changedCount, t('numberLocale')) })}
            </button>
          </div>
          {wizard.job === undefined ? null : <JobProgressBar job={wizard.job} t={t} />}
        </>
      )}
    </div>
  )
}
