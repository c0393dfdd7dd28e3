import { useEffect, useRef, useState } from 'preact/hooks'
import { type Suggestion as Answered, isAbort } from '../api.js'
import type { Translate } from '../i18n/index.js'

/** A value offered: a suggestion, or a facet's value, with how many goods have it. */
type Suggestion = Pick<Answered, 'value' | 'count'>

interface ComboboxProps {
  /** The API field name: the input's `name`, and the base of its ids. */
  readonly name: string
  readonly id: string
  readonly label: string
  readonly value: string
  /** The field's values under the other filters, with counts (facets); offered while nothing is typed. */
  readonly values: readonly Suggestion[]
  /** Suggestions for what is typed, typos forgiven. */
  readonly suggest: (q: string, signal: AbortSignal) => Promise<readonly Suggestion[]>
  /** Typed text: a substring. */
  readonly onInput: (value: string) => void
  /** The typed value is final (Enter): search now. */
  readonly onCommit: (value: string) => void
  /** A value picked from the list: an exact filter (the API's `exact`), searched now. */
  readonly onPick: (value: string) => void
  /** Whether the value is exact (picked); the mark beside it turns it back into a substring (`onContains`). */
  readonly exact: boolean
  readonly onContains: () => void
  readonly t: Translate
}

const SUGGEST_DELAY_MS = 120

/**
 * A text filter with a list of values (WAI-ARIA combobox): the facet values while it is empty, suggestions as
 * one types; ↑ ↓ move through them, Enter takes one (or commits the typed text and submits the form), Escape
 * closes the list. A value taken from the list is exact ("= Ray-Ban" beside the field, which a click turns back
 * into "contains"); typed text is a substring.
 */
export function Combobox(props: ComboboxProps) {
  const { name, id, label, value, values, t } = props
  const [open, setOpen] = useState(false)
  const [active, setActive] = useState(-1)
  const [suggestions, setSuggestions] = useState<{ q: string; list: readonly Suggestion[] } | undefined>()
  const suggestRef = useRef(props.suggest)
  suggestRef.current = props.suggest

  const q = value.trim()
  useEffect(() => {
    if (!open || q === '') return
    const controller = new AbortController()
    const timer = setTimeout(() => {
      suggestRef
        .current(q, controller.signal)
        .then((list) => setSuggestions({ q, list }))
        .catch((error: unknown) => {
          if (!isAbort(error)) setSuggestions({ q, list: [] })
        })
    }, SUGGEST_DELAY_MS)
    return () => {
      clearTimeout(timer)
      controller.abort()
    }
  }, [q, open])

  const options = q !== '' && suggestions ? suggestions.list : values
  const listId = `${id}-list`
  const optionId = (index: number) => `${id}-option-${index}`

  const close = () => {
    setOpen(false)
    setActive(-1)
  }
  const choose = (chosen: string) => {
    close()
    props.onPick(chosen)
  }

  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault()
      if (!open) setOpen(true)
      const last = options.length - 1
      setActive((current) =>
        event.key === 'ArrowDown' ? Math.min(current + 1, last) : Math.max(current - 1, open ? 0 : last),
      )
    } else if (event.key === 'Enter') {
      const option = open && active >= 0 ? options[active] : undefined
      if (option) {
        event.preventDefault()
        choose(option.value)
      } else {
        // The typed value: committed, and the Enter goes on to the form (a wizard's step is submitted).
        close()
        props.onCommit(value)
      }
    } else if (event.key === 'Escape') {
      setOpen(false)
      setActive(-1)
    }
  }

  const expanded = open && options.length > 0
  const markId = `${id}-exact`
  return (
    <div class="field combobox">
      <label for={id}>{label}</label>
      <input
        id={id}
        name={name}
        type="text"
        role="combobox"
        autocomplete="off"
        spellcheck={false}
        aria-autocomplete="list"
        aria-expanded={expanded}
        aria-controls={listId}
        aria-activedescendant={expanded && active >= 0 ? optionId(active) : undefined}
        aria-describedby={props.exact ? markId : undefined}
        value={value}
        onInput={(event) => {
          props.onInput(event.currentTarget.value)
          setOpen(true)
          setActive(-1)
        }}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        onKeyDown={onKeyDown}
      />
      <div id={listId} role="listbox" aria-label={label} hidden={!expanded}>
        {options.map((option, index) => (
          <div
            key={option.value}
            id={optionId(index)}
            role="option"
            tabIndex={-1}
            aria-selected={index === active}
            // Chosen on mousedown, before the input's blur closes the list.
            onMouseDown={(event) => {
              event.preventDefault()
              choose(option.value)
            }}
          >
            <span>{option.value}</span> <span class="count">{option.count}</span>
          </div>
        ))}
      </div>
      {open && options.length === 0 && q === '' ? <span class="hint">{t('noValues')}</span> : null}
      {props.exact && q !== '' ? (
        <span class="exact-mark" id={markId}>
          <span class="exact-value" title={t('exactTitle')}>
            = {q}
          </span>{' '}
          <button type="button" class="link" onClick={props.onContains}>
            {t('exactToContains')}
          </button>
        </span>
      ) : null}
    </div>
  )
}
