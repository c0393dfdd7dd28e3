import { useRef } from 'preact/hooks'
import type { Api } from '../api.js'
import type { Translate } from '../i18n/index.js'
import { useSession } from '../session.js'
import { STEPS } from './bulk-formula.js'
import { ConfirmStep, DryRunStep, FormulaStep, SelectionStep } from './bulk-steps.js'
import { useBulkChange } from './use-bulk-change.js'
import './bulk-desk.css'

/*
 * The bulk price change as a wizard: 1 the selection (the listing's filters and the band of the base price),
 * 2 the formula, said in words as it is typed, 3 the dry run, which cannot be skipped: counts, the first changes
 * old → new, the rejections, and why it would be refused; 4 the confirmation, sent with one Idempotency-Key so a
 * double click or a retry applies once, then the count written, the change's number and its Undo. What the
 * service finds wrong with a field is shown at that field, on its step.
 */

export function BulkChangeScreen({ api, t }: { readonly api: Api; readonly t: Translate }) {
  const { canWrite } = useSession()
  const heading = useRef<HTMLHeadingElement>(null)
  const wizard = useBulkChange(api, t, heading)
  const { step } = wizard
  const stepProps = { wizard, heading, t }

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

      {step === 1 ? <SelectionStep {...stepProps} api={api} /> : null}
      {step === 2 ? <FormulaStep {...stepProps} /> : null}
      {step === 3 ? <DryRunStep {...stepProps} canWrite={canWrite} /> : null}
      {step === 4 ? <ConfirmStep {...stepProps} canWrite={canWrite} /> : null}

      {wizard.failure ? (
        <p class="refused" role="alert">
          {t('requestFailed', { reason: wizard.failure })}
        </p>
      ) : null}
    </section>
  )
}
