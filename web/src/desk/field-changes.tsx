import type { HistoryItem } from '../api/types.js'
import type { Language, Translate } from '../i18n/index.js'
import { fieldLabel, formatMoney } from './desk-format.js'

/** What one change wrote to an entry, field by field old → new (an entry's history, a change's entries). */
export function FieldChanges({
  changes,
  language,
  t,
}: {
  readonly changes: HistoryItem['changes']
  readonly language: Language
  readonly t: Translate
}) {
  const value = (field: string, raw: string | number | null) =>
    raw === null ? t('emptyValue') : field === 'price' || field === 'purchase' ? formatMoney(raw, language) : raw
  return (
    <ul class="field-changes">
      {changes.map((change) => (
        <li key={change.field}>
          {t(fieldLabel[change.field])}: <span class="old">{value(change.field, change.oldValue)}</span>
          {' → '}
          <span class="new">{value(change.field, change.newValue)}</span>
        </li>
      ))}
    </ul>
  )
}
