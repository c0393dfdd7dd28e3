import type { Api, Facets, FormField, KindForm } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'
import { Combobox } from './combobox.js'
import { checkNumber, transposedPrescription } from './prescription.js'
import type { KindQuery } from './search-location.js'

/*
 * The counter search's filters for one kind, drawn from its form: where to search (priced goods or price-list
 * entries), a text field with its values to pick from (a picked value is exact) or a number field checked as it
 * is typed, and a note when a prescription was given in the other cylinder form.
 */

/**
 * Typing waits this long for the next key (a newer search cancels an older one anyway, so it can be short);
 * anything else (a page, a sort, Enter) searches at once.
 */
const TYPING_DELAY_MS = 40

export function SearchFilters(props: {
  readonly api: Api
  readonly form: KindForm
  readonly query: KindQuery
  readonly byPriceList: boolean
  readonly onByPriceList: (byPriceList: boolean) => void
  readonly facets: Facets | undefined
  /** Sets a field's value after `wait` ms: exact when picked from a list, else (typed) a substring. */
  readonly setValue: (name: string, value: string, wait: number, exact?: boolean) => void
  readonly onSearch: () => void
  readonly onClear: () => void
  readonly language: Language
  readonly t: Translate
}) {
  const { api, form, query, byPriceList, facets, setValue, language, t } = props
  const transposed = transposedPrescription(form.fields, query.values)
  const fieldLabel = (field: FormField) => field.label[language]
  return (
    <form
      class="filters"
      aria-label={t('filters')}
      onSubmit={(event) => {
        event.preventDefault()
        props.onSearch()
      }}
    >
      <fieldset class="mode" aria-describedby="mode-hint">
        <legend>{t('searchIn')}</legend>
        <label>
          <input
            type="radio"
            name="byPriceList"
            value="false"
            checked={!byPriceList}
            onChange={() => props.onByPriceList(false)}
          />{' '}
          {t('byNomenclature')}
        </label>
        <label>
          <input
            type="radio"
            name="byPriceList"
            value="true"
            checked={byPriceList}
            onChange={() => props.onByPriceList(true)}
          />{' '}
          {t('byPriceList')}
        </label>
        <span class="hint" id="mode-hint">
          {t('searchModeHint')}
        </span>
      </fieldset>
      <div class="fields">
        {form.fields.map((field) => {
          const id = `${form.kind}-${field.name}`
          const value = query.values[field.name] ?? ''
          if (field.input === 'text') {
            return (
              <Combobox
                key={id}
                id={id}
                name={field.name}
                label={fieldLabel(field)}
                value={value}
                values={facets?.text[field.name]?.values ?? []}
                suggest={(q, signal) => api.suggest(form.kind, field.name, q, byPriceList, signal)}
                onInput={(text) => setValue(field.name, text, TYPING_DELAY_MS)}
                onCommit={(text) => setValue(field.name, text, 0, query.exact.includes(field.name))}
                onPick={(text) => setValue(field.name, text, 0, true)}
                exact={query.exact.includes(field.name)}
                onContains={() => setValue(field.name, value, 0)}
                t={t}
              />
            )
          }
          const check = checkNumber(field, value)
          const errorId = `${id}-error`
          return (
            <div class={`field ${field.input}`} key={id}>
              <label for={id}>{fieldLabel(field)}</label>
              <input
                id={id}
                name={field.name}
                type="text"
                inputMode="decimal"
                autocomplete="off"
                value={value}
                aria-invalid={!check.ok}
                aria-describedby={check.ok ? undefined : errorId}
                onInput={(event) => setValue(field.name, event.currentTarget.value, TYPING_DELAY_MS)}
                onKeyDown={(event) => {
                  if (event.key === 'Enter') setValue(field.name, event.currentTarget.value, 0)
                }}
              />
              {check.ok ? null : (
                <span id={errorId} class="error">
                  {t(check.message, check.values)}
                </span>
              )}
            </div>
          )
        })}
      </div>
      {transposed ? (
        <p class="note" role="status">
          {t('transposed', {
            prescription: form.fields
              .filter((field) => transposed[field.name] !== undefined)
              .map((field) => `${fieldLabel(field)} ${transposed[field.name]}`)
              .join(', '),
          })}
        </p>
      ) : null}
      <p class="hint">{t('keyboardHint')}</p>
      <button type="button" class="clear" onClick={() => props.onClear()}>
        {t('clearFilters')}
      </button>
    </form>
  )
}
