import type { InputField } from '../api/types.js'
import type { Translate } from '../i18n/index.js'
import { entryRoute, fieldLabel } from './desk-format.js'
import type { EntryInput } from './prices-api.js'
import type { Draft } from './use-entry-writes.js'

/*
 * The fields of an entry being edited in its row or created in the form above the grid: each labelled (hidden in a
 * row, where the column heads say it), its API error beside it; and the API's message about the whole entry.
 */

/** An input of an edited or new entry, labelled, its API error beside it. */
export function EntryField(props: {
  /** `create`, or `edit-42`: the inputs' ids begin with it. */
  readonly prefix: string
  readonly state: Draft
  readonly field: InputField
  readonly onChange: (values: EntryInput) => void
  readonly t: Translate
}) {
  const { prefix, state, field, t } = props
  const id = `${prefix}-${field}`
  const error = state.errors[field]
  const money = field === 'price' || field === 'purchase'
  return (
    <div class={`field ${money ? 'money' : ''}`}>
      <label for={id} class={prefix.startsWith('edit') ? 'visually-hidden' : undefined}>
        {t(fieldLabel[field])}
      </label>
      <input
        id={id}
        name={field}
        type="text"
        autocomplete="off"
        inputMode={money ? 'decimal' : undefined}
        value={state.values[field]}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onInput={(event) => props.onChange({ ...state.values, [field]: event.currentTarget.value })}
      />
      {error ? (
        <span id={`${id}-error`} class="error">
          {error}
        </span>
      ) : null}
    </div>
  )
}

/** The API's word on an edited or new entry, with a link to the existing entry of a duplicate. */
export function DraftMessage({ state, id, t }: { readonly state: Draft; readonly id: string; readonly t: Translate }) {
  if (!state.message) return null
  return (
    <p id={id} role="alert" class="problem">
      {state.message}
      {state.existingId !== undefined ? (
        <>
          {' '}
          <a href={entryRoute(state.existingId)}>{t('deskOpenEntry', { id: state.existingId })}</a>
        </>
      ) : null}
    </p>
  )
}
