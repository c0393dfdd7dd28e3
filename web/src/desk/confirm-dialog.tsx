import type { ComponentChildren } from 'preact'
import { useEffect, useRef } from 'preact/hooks'

interface ConfirmDialogProps {
  readonly id: string
  readonly title: string
  readonly confirm: string
  readonly cancel: string
  readonly busy?: boolean
  readonly onConfirm: () => void
  readonly onClose: () => void
  readonly children?: ComponentChildren
}

/**
 * A modal question (the browser's `<dialog>`): the focus is trapped in it and starts on "cancel", Escape closes
 * it, and the focus returns to where it was when it closes. Both buttons say what they do ("Вернуть прежние
 * цены" / "Не отменять", never "Отменить" beside "Отмена"); the safe one comes first, the destructive one last.
 */
export function ConfirmDialog(props: ConfirmDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null)
  const cancel = useRef<HTMLButtonElement>(null)

  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null
    dialog.current?.showModal()
    cancel.current?.focus()
    return () => {
      dialog.current?.close()
      opener?.focus()
    }
  }, [])

  return (
    <dialog
      ref={dialog}
      class="confirm"
      aria-labelledby={`${props.id}-title`}
      onCancel={(event) => {
        event.preventDefault()
        props.onClose()
      }}
    >
      <h3 id={`${props.id}-title`}>{props.title}</h3>
      {props.children}
      <div class="actions">
        <button type="button" ref={cancel} onClick={props.onClose}>
          {props.cancel}
        </button>
        <button type="button" class="danger" disabled={props.busy} onClick={props.onConfirm}>
          {props.confirm}
        </button>
      </div>
    </dialog>
  )
}
