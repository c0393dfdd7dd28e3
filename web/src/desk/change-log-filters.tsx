import type { ChangeAction } from '../api/types.js'
import type { Translate } from '../i18n/index.js'
import { actionLabel } from './desk-format.js'
import type { ChangeLogFilter } from './prices-api.js'

/** The kinds of change, in the order the filter offers them. */
const ACTIONS = Object.keys(actionLabel) as readonly ChangeAction[]

interface ChangeLogFiltersProps {
  readonly filter: ChangeLogFilter
  readonly onChange: (filter: ChangeLogFilter) => void
  readonly t: Translate
}

/**
 * The change log's filters, each a labelled control the API reads as a query parameter: who made the change (a
 * part of the name), the days from and to (inclusive, the business time zone's), and the kinds of change (none
 * ticked: every kind).
 */
export function ChangeLogFilters({ filter, onChange, t }: ChangeLogFiltersProps) {
  const actions = filter.actions ?? []
  const toggle = (action: ChangeAction, on: boolean) =>
    onChange({ ...filter, actions: on ? [...actions, action] : actions.filter((other) => other !== action) })
  return (
    <form class="change-filters" aria-labelledby="change-filters-title" onSubmit={(event) => event.preventDefault()}>
      <h3 id="change-filters-title">{t('deskChangeFilters')}</h3>
      <div class="fields">
        <div class="field">
          <label for="changes-user">{t('deskWho')}</label>
          <input
            id="changes-user"
            name="user"
            type="text"
            autocomplete="off"
            value={filter.user ?? ''}
            onInput={(event) => onChange({ ...filter, user: event.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="changes-from">{t('deskChangesFrom')}</label>
          <input
            id="changes-from"
            name="from"
            type="date"
            value={filter.from ?? ''}
            onInput={(event) => onChange({ ...filter, from: event.currentTarget.value })}
          />
        </div>
        <div class="field">
          <label for="changes-to">{t('deskChangesTo')}</label>
          <input
            id="changes-to"
            name="to"
            type="date"
            value={filter.to ?? ''}
            onInput={(event) => onChange({ ...filter, to: event.currentTarget.value })}
          />
        </div>
      </div>
      <fieldset class="change-kinds">
        <legend>{t('deskChangeKinds')}</legend>
        {ACTIONS.map((action) => (
          <label key={action}>
            <input
              type="checkbox"
              name="action"
              value={action}
              checked={actions.includes(action)}
              onChange={(event) => toggle(action, event.currentTarget.checked)}
            />{' '}
            {t(actionLabel[action])}
          </label>
        ))}
      </fieldset>
      <button type="button" class="clear" onClick={() => onChange({})}>
        {t('deskChangeFiltersClear')}
      </button>
    </form>
  )
}
