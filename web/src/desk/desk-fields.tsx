import type { Translate } from '../app.js'
import type { MessageKey } from '../i18n/index.js'
import type { Problem } from './bulk-api.js'
import { isDecimalOrBlank } from './formula.js'
import { FILTER_NAMES, type FilterName, type Filters } from './prices-api.js'

/*
 * The desk's inputs: a labelled text field with its error beside it (aria-invalid, aria-describedby), and the
 * listing's filters drawn as such fields, shared by the bulk change and the download.
 */

/** Field errors by input id. */
export type FieldErrors = Readonly<Record<string, string>>

export function TextField(props: {
  readonly id: string
  readonly name: string
  readonly label: string
  readonly value: string
  readonly error?: string | undefined
  readonly hint?: string
  readonly decimal?: boolean
  /** A date and time picker instead of text. */
  readonly dateTime?: boolean
  readonly onInput: (value: string) => void
}) {
  const { id, error, hint } = props
  const described = [error ? `${id}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ')
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.dateTime ? (
        <input
          id={id}
          name={props.name}
          type="datetime-local"
          step={1}
          value={props.value}
          aria-invalid={error ? true : undefined}
          aria-describedby={described || undefined}
          onInput={(event) => props.onInput(event.currentTarget.value)}
        />
      ) : (
        <input
          id={id}
          name={props.name}
          type="text"
          autocomplete="off"
          inputMode={props.decimal ? 'decimal' : 'text'}
          value={props.value}
          aria-invalid={error ? true : undefined}
          aria-describedby={described || undefined}
          onInput={(event) => props.onInput(event.currentTarget.value)}
        />
      )}
      {hint ? (
        <span class="hint" id={`${id}-hint`}>
          {hint}
        </span>
      ) : null}
      {error ? (
        <span class="error" id={`${id}-error`}>
          {error}
        </span>
      ) : null}
    </div>
  )
}

const filterLabels: Record<FilterName, MessageKey> = {
  manufacturer: 'manufacturer',
  brand: 'brand',
  model: 'model',
  priceFrom: 'retailFrom',
  priceTo: 'retailTo',
  purchaseFrom: 'purchaseFrom',
  purchaseTo: 'purchaseTo',
}

const decimalFilters: readonly FilterName[] = ['priceFrom', 'priceTo', 'purchaseFrom', 'purchaseTo']

/** The listing's filters as labelled fields; ids are `${prefix}-${field}`. */
export function FilterFields(props: {
  readonly prefix: string
  readonly filters: Filters
  readonly errors: FieldErrors
  readonly onChange: (filters: Filters) => void
  readonly t: Translate
}) {
  const { prefix, filters, errors, t } = props
  return (
    <div class="fields">
      {FILTER_NAMES.map((field) => (
        <TextField
          key={field}
          id={`${prefix}-${field}`}
          name={field}
          label={t(filterLabels[field])}
          value={filters[field] ?? ''}
          error={errors[`${prefix}-${field}`]}
          decimal={decimalFilters.includes(field)}
          onInput={(value) => props.onChange({ ...filters, [field]: value })}
        />
      ))}
    </div>
  )
}

/** The filters' own checks before a request: a price band bound must be a number (or blank). */
export function checkFilters(prefix: string, filters: Filters, t: Translate): Record<string, string> {
  const errors: Record<string, string> = {}
  for (const field of decimalFilters) {
    if (!isDecimalOrBlank(filters[field] ?? '')) errors[`${prefix}-${field}`] = t('notANumber')
  }
  return errors
}

/** The filters as sent: decimal commas made points, blanks left out by the query builder. */
export function sentFilters(filters: Filters, normalise: (raw: string) => string): Filters {
  const sent: Partial<Record<FilterName, string>> = {}
  for (const field of FILTER_NAMES) {
    const value = filters[field] ?? ''
    sent[field] = decimalFilters.includes(field) ? normalise(value) : value
  }
  return sent
}

/** A 400's field errors placed at the inputs: `ids` maps an API field name to the input id that shows it. */
export function errorsAt(problem: Problem, ids: (field: string) => string | undefined): Record<string, string> {
  const placed: Record<string, string> = {}
  for (const error of problem.errors) {
    const id = ids(error.field)
    if (id && !placed[id]) placed[id] = error.message
  }
  return placed
}
