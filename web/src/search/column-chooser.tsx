import { useState } from 'preact/hooks'
import type { Column } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'
import { storage } from '../storage.js'
import { PRICE } from './results-table.js'

/*
 * Which columns of a kind's result table are shown, chosen by the optician and remembered on this browser per
 * kind, so a wide table (the lenses' 18 columns) fits the screen. The price is always shown.
 */

const storageKey = (kind: string) => `optics-catalog.hidden-columns.${kind}`

function readHidden(kind: string): readonly string[] {
  try {
    const stored: unknown = JSON.parse(storage?.getItem(storageKey(kind)) ?? '[]')
    return Array.isArray(stored) ? stored.filter((name): name is string => typeof name === 'string') : []
  } catch {
    return []
  }
}

/** The kind's hidden columns (remembered) and a setter that remembers them. */
export function useHiddenColumns(kind: string): [readonly string[], (hidden: readonly string[]) => void] {
  const [all, setAll] = useState<Readonly<Record<string, readonly string[]>>>({})
  const hidden = all[kind] ?? readHidden(kind)
  const set = (next: readonly string[]) => {
    storage?.setItem(storageKey(kind), JSON.stringify(next))
    setAll((current) => ({ ...current, [kind]: next }))
  }
  return [hidden, set]
}

interface ColumnChooserProps {
  readonly columns: readonly Column[]
  readonly hidden: readonly string[]
  readonly onChange: (hidden: readonly string[]) => void
  readonly language: Language
  readonly t: Translate
}

/** A fold-out list of the columns with a check box each ("Столбцы: 12 из 18"). */
export function ColumnChooser({ columns, hidden, onChange, language, t }: ColumnChooserProps) {
  const shown = columns.filter((column) => !hidden.includes(column.name)).length
  return (
    <details class="column-chooser">
      <summary>{t('columnsShown', { shown, total: columns.length })}</summary>
      <fieldset>
        <legend class="visually-hidden">{t('columns')}</legend>
        {columns.map((column) => (
          <label key={column.name}>
            <input
              type="checkbox"
              name="column"
              value={column.name}
              checked={!hidden.includes(column.name)}
              disabled={column.name === PRICE}
              onChange={(event) =>
                onChange(
                  event.currentTarget.checked
                    ? hidden.filter((name) => name !== column.name)
                    : [...hidden, column.name],
                )
              }
            />{' '}
            {column.label[language]}
          </label>
        ))}
      </fieldset>
    </details>
  )
}
