import { useMemo, useRef, useState } from 'preact/hooks'
import type { BulkChangePreview, WriteJob } from '../api/types.js'
import type { Api } from '../api.js'
import type { Translate } from '../i18n/index.js'
import { BACKGROUND_FROM, BulkApi, type BulkChangeApplied, newIdempotencyKey, Problem } from './bulk-api.js'
import { bodyFieldIds, bodyOf, type Formula, initialFormula, type Step } from './bulk-formula.js'
import { checkFilters, errorsAt, type FieldErrors, sentFilters } from './desk-fields.js'
import { isDecimalOrBlank, normaliseDecimal } from './formula.js'
import type { Filters } from './prices-api.js'

/*
 * The bulk change wizard's state and its calls: the step, what was typed, the service's answers (the count
 * selected, the dry run, the change applied or scheduled) and its errors, placed at their fields. The dry run
 * cannot be skipped; the confirmation is sent with one Idempotency-Key, so a double click or a retry applies once.
 */

/** What the service answered so far: the count the filters select, the dry run, the change applied. */
interface Answers {
  readonly selected?: number
  readonly preview?: BulkChangePreview
  readonly applied?: BulkChangeApplied
}

/** The service's refusal: field errors at their inputs (by id), anything else as one failure. */
interface Feedback {
  readonly errors: FieldErrors
  readonly failure?: string
}

export function useBulkChange(api: Api, t: Translate, heading: { readonly current: HTMLElement | null }) {
  const bulk = useMemo(() => new BulkApi(api), [api])
  const [step, setStep] = useState<Step>(1)
  const [input, setInput] = useState<{ filters: Filters; formula: Formula }>({ filters: {}, formula: initialFormula })
  const [feedback, setFeedback] = useState<Feedback>({ errors: {} })
  const [busy, setBusy] = useState(false)
  const [answers, setAnswers] = useState<Answers>({})
  const [job, setJob] = useState<WriteJob | undefined>()
  // One key per confirmation: made when the confirmation is shown, kept for every retry of it.
  const key = useRef('')
  // Set at once (state is not, until the next render): a double click sends one request.
  const inFlight = useRef(false)

  const { filters, formula } = input
  const body = bodyOf(formula)
  const sent = sentFilters(filters, normaliseDecimal)
  const setErrors = (errors: FieldErrors) => setFeedback((last) => ({ ...last, errors }))

  const go = (next: Step) => {
    setStep(next)
    setFeedback((last) => ({ errors: last.errors }))
    // The step's heading takes the focus, so a screen reader and the keyboard start at the new step.
    requestAnimationFrame(() => heading.current?.focus())
  }

  const showProblem = (error: unknown, ids: (field: string) => string | undefined) => {
    if (error instanceof Problem && error.errors.length > 0) {
      const placed = errorsAt(error, ids)
      setErrors(placed)
      if (Object.keys(placed).length === error.errors.length) return
    }
    setFeedback((last) => ({ ...last, failure: (error as Error).message }))
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
      const selected = await bulk.count(sent)
      setAnswers((last) => ({ ...last, selected }))
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
      const preview = await bulk.preview(sent, body)
      setAnswers((last) => ({ ...last, preview }))
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
    setFeedback((last) => ({ errors: last.errors }))
    try {
      const background = (answers.preview?.changedCount ?? 0) >= BACKGROUND_FROM
      const applied = await bulk.apply(sent, body, key.current, background, setJob)
      setAnswers((last) => ({ ...last, applied }))
    } catch (error) {
      showProblem(error, (field) => bodyFieldIds[field]?.id)
    } finally {
      inFlight.current = false
      setBusy(false)
      setJob(undefined)
    }
  }

  return {
    bulk,
    step,
    go,
    filters,
    formula,
    body,
    sent,
    errors: feedback.errors,
    failure: feedback.failure,
    busy,
    ...answers,
    job,
    editFilters: (next: Filters) => {
      setInput((last) => ({ ...last, filters: next }))
      setAnswers((last) => ({ ...last, selected: undefined, preview: undefined }))
    },
    editFormula: (change: Partial<Formula>) => {
      setInput((last) => ({ ...last, formula: { ...last.formula, ...change } }))
      setAnswers((last) => ({ ...last, preview: undefined }))
    },
    submitSelection,
    submitFormula,
    confirm,
    apply,
    /** After a change is applied or scheduled: start another. */
    restart: () => {
      setAnswers({})
      setErrors({})
      go(1)
    },
  }
}

export type BulkChange = ReturnType<typeof useBulkChange>
