import { useRef } from 'preact/hooks'
import type { KindForm } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'

/** A tab per kind; the arrow keys move to the next or previous kind (and its tab takes the focus). */
export function KindTabs(props: {
  readonly forms: readonly KindForm[]
  readonly form: KindForm
  readonly onSwitch: (kind: string) => void
  readonly language: Language
  readonly t: Translate
}) {
  const { forms, form, onSwitch, language, t } = props
  const tabs = useRef<HTMLDivElement>(null)
  const onTabKey = (event: KeyboardEvent) => {
    const index = forms.indexOf(form)
    const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0
    if (step === 0) return
    event.preventDefault()
    const next = forms[(index + step + forms.length) % forms.length]!
    onSwitch(next.kind)
    tabs.current?.querySelector<HTMLButtonElement>(`#tab-${next.kind}`)?.focus()
  }
  return (
    <div role="tablist" aria-label={t('kinds')} class="tabs" ref={tabs} onKeyDown={onTabKey}>
      {forms.map((candidate) => (
        <button
          key={candidate.kind}
          id={`tab-${candidate.kind}`}
          type="button"
          role="tab"
          aria-selected={candidate.kind === form.kind}
          aria-controls="kind-panel"
          tabIndex={candidate.kind === form.kind ? 0 : -1}
          onClick={() => onSwitch(candidate.kind)}
        >
          {candidate.title[language]}
        </button>
      ))}
    </div>
  )
}
