import { useEffect, useState } from 'preact/hooks'
import type { FilterName, TextFilterName } from '../api/types.js'
import type { Api, Facets } from '../api.js'
import type { Translate } from '../i18n/index.js'
import { Combobox } from '../search/combobox.js'
import type { Problem } from './bulk-api.js'
import { isDecimalOrBlank } from './formula.js'
import {
  FILTER_INPUTS,
  FILTER_NAMES,
  type Filters,
  filterInput,
  isTextFilter,
  TEXT_FILTER_NAMES,
  withTextFilter,
} from './prices-api.js'

/*
 * The desk's inputs: a labelled text field with its error beside it (aria-invalid, aria-describedby), and the
 * listing's filters drawn as such fields, shared by the bulk change and the download. The text filters offer the
 * price list's values (the frames kind's facets and suggestions in price-list mode; for an attribute of the SKUs,
 * the catalogue's): a value picked from the list is exact, typed text a substring.
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

/** The kind whose price list is the glass price list: its facets and suggestions list the desk's values. */
const GLASS_KIND = 'glasses'
const FACETS_DELAY_MS = 250

/** The values of the price list's text fields under the text filters set (the frames kind's facets). */
export function usePriceListValues(api: Api, filters: Filters): Facets['text'] {
  const [values, setValues] = useState<Facets['text']>({})
  const body: Record<string, string | boolean | readonly string[]> = { byPriceList: true }
  for (const name of TEXT_FILTER_NAMES) if (filters[name]?.trim()) body[name] = filters[name] as string
  if (filters.exact?.length) body.exact = filters.exact
  const key = JSON.stringify(body)
  useEffect(() => {
    const controller = new AbortController()
    const timer = setTimeout(() => {
      api
        .facets(GLASS_KIND, body, controller.signal)
        .then((facets) => setValues(facets.text))
        .catch(() => {})
    }, FACETS_DELAY_MS)
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [api, key])
  return values
}

/** A text filter of the listing with the price list's values: picked = exact, typed = substring. */
export function TextFilterField(props: {
  readonly api: Api
  readonly id: string
  readonly name: TextFilterName
  readonly label: string
  readonly filters: Filters
  readonly values: Facets['text']
  readonly onChange: (filters: Filters) => void
  readonly t: Translate
}) {
  const { api, name, filters, onChange } = props
  const set = (value: string, exact: boolean) => onChange(withTextFilter(filters, name, value, exact))
  const exact = filters.exact?.includes(name) ?? false
  return (
    <Combobox
      id={props.id}
      name={name}
      label={props.label}
      value={filters[name] ?? ''}
      values={props.values[name]?.values ?? []}
      suggest={(q, signal) => api.suggest(GLASS_KIND, name, q, !filterInput(name).fromSkus, signal)}
      onInput={(value) => set(value, false)}
      onCommit={(value) => set(value, exact)}
      onPick={(value) => set(value, true)}
      exact={exact}
      onContains={() => set(filters[name] ?? '', false)}
      t={props.t}
    />
  )
}

/** The listing's filters as labelled fields; ids are `${prefix}-${field}`. */
export function FilterFields(props: {
  readonly api: Api
  readonly prefix: string
  readonly filters: Filters
  readonly errors: FieldErrors
  readonly onChange: (filters: Filters) => void
  readonly t: Translate
}) {
  const { prefix, filters, errors, t } = props
  const values = usePriceListValues(props.api, filters)
  return (
    <div class="fields">
      {FILTER_INPUTS.map(({ name: field, decimal, formLabel }) =>
        !decimal && isTextFilter(field) ? (
          <TextFilterField
            key={field}
            api={props.api}
            id={`${prefix}-${field}`}
            name={field}
            label={t(formLabel)}
            filters={filters}
            values={values}
            onChange={props.onChange}
            t={t}
          />
        ) : (
          <TextField
            key={field}
            id={`${prefix}-${field}`}
            name={field}
            label={t(formLabel)}
            value={filters[field] ?? ''}
            error={errors[`${prefix}-${field}`]}
            decimal
            onInput={(value) => props.onChange({ ...filters, [field]: value })}
          />
        ),
      )}
    </div>
  )
}

/** The filters' own checks before a request: a price band bound must be a number (or blank). */
export function checkFilters(prefix: string, filters: Filters, t: Translate): Record<string, string> {
  const errors: Record<string, string> = {}
  for (const { name: field } of FILTER_INPUTS.filter((input) => input.decimal)) {
    if (!isDecimalOrBlank(filters[field] ?? '')) errors[`${prefix}-${field}`] = t('notANumber')
  }
  return errors
}

/** The filters as sent: decimal commas made points, blanks left out by the query builder, `exact` kept. */
export function sentFilters(filters: Filters, normalise: (raw: string) => string): Filters {
  const sent: Partial<Record<FilterName, string>> = {}
  for (const field of FILTER_NAMES) {
    const value = filters[field] ?? ''
    sent[field] = filterInput(field).decimal ? normalise(value) : value
  }
  return filters.exact ? { ...sent, exact: filters.exact } : sent
}

/**
 * The selection in words, as the confirmation restates it: each set filter ("Бренд точно «Ray-Ban»", "Модель
 * содержит «RB»", "Розничная цена от 1000"), then `more` (the base band), or "the whole price list".
 */
export function describeSelection(filters: Filters, t: Translate, more: readonly string[] = []): string {
  const parts: string[] = []
  for (const field of FILTER_NAMES) {
    const value = filters[field]?.trim()
    if (!value) continue
    const { formLabel, decimal } = filterInput(field)
    const label = t(formLabel)
    if (decimal) parts.push(t('selectionBound', { field: label, value }))
    else {
      const exact = filters.exact?.includes(field as TextFilterName) ?? false
      parts.push(t(exact ? 'selectionExact' : 'selectionContains', { field: label, value }))
    }
  }
  parts.push(...more)
  return parts.length > 0 ? parts.join(', ') : t('selectionAll')
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
