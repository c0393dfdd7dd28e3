import type { Api } from '../api.js'
import type { Translate } from '../i18n/index.js'
import { TextFilterField, usePriceListValues } from './desk-fields.js'
import { FILTER_INPUTS, type Filters, isTextFilter } from './prices-api.js'

/*
 * The price list's filters, as described (src/domain/glass-price-fields.ts): the text filters with their values to
 * pick from (a picked value is exact, "= Ray-Ban", a typed one a substring) and the price bands, each with the API's
 * error beside it.
 */

export function PriceFilters(props: {
  readonly api: Api
  readonly filters: Filters
  /** The API's errors of the filters, by name. */
  readonly errors: Readonly<Record<string, string>>
  /** Typed (or picked) filters: the grid asks after a moment. */
  readonly onChange: (filters: Filters) => void
  readonly onSubmit: () => void
  readonly onClear: () => void
  readonly t: Translate
}) {
  const { api, filters, errors, onChange, t } = props
  const values = usePriceListValues(api, filters)
  return (
    <form
      class="filters desk-filters"
      aria-label={t('filters')}
      onSubmit={(event) => {
        event.preventDefault()
        props.onSubmit()
      }}
    >
      <div class="fields">
        {FILTER_INPUTS.map(({ name, decimal, label }) => {
          if (!decimal && isTextFilter(name)) {
            return (
              <TextFilterField
                key={name}
                api={api}
                id={`filter-${name}`}
                name={name}
                label={t(label)}
                filters={filters}
                values={values}
                onChange={onChange}
                t={t}
              />
            )
          }
          const error = errors[name]
          return (
            <div class="field" key={name}>
              <label for={`filter-${name}`}>{t(label)}</label>
              <input
                id={`filter-${name}`}
                name={name}
                type="text"
                inputMode="decimal"
                autocomplete="off"
                value={filters[name] ?? ''}
                aria-invalid={error ? true : undefined}
                aria-describedby={error ? `filter-${name}-error` : undefined}
                onInput={(event) => onChange({ ...filters, [name]: event.currentTarget.value })}
              />
              {error ? (
                <span id={`filter-${name}-error`} class="error">
                  {error}
                </span>
              ) : null}
            </div>
          )
        })}
      </div>
      <button type="button" class="clear" onClick={props.onClear}>
        {t('clearFilters')}
      </button>
    </form>
  )
}
