import { useState } from 'preact/hooks'
import type { PriceEntry, PriceRow } from '../api/types.js'
import type { Translate } from '../i18n/index.js'
import { type EntryInput, PriceProblem, type PricesApi } from './prices-api.js'

/*
 * The price list's writes of one entry: an edit in place (saved with the ETag read when it began, so a change made
 * meanwhile is never overwritten), the new entry's form, and a delete confirmed first. Each tells the screen what
 * happened through `Outcome`: a notice, the entry to mark, the grid to load again, a row's button to focus.
 */

/** A message above the grid: `tone` alert for what went wrong, status for what went right. */
export interface Notice {
  readonly tone: 'status' | 'alert'
  readonly text: string
  /** An entry the message is about, linked (the existing entry of a duplicate, a created entry). */
  readonly entry?: { readonly id: number; readonly label: string }
}

/** An entry being edited (or created: id absent): what is typed, the version it started from, the API's word. */
export interface Draft {
  readonly id?: number
  readonly etag?: string
  readonly values: EntryInput
  readonly errors: Readonly<Record<string, string>>
  readonly busy: boolean
  readonly existingId?: number
  readonly message?: string
}

/** An entry asked to be deleted, with the version shown in the question. */
export interface Removal {
  readonly entry: PriceEntry
  readonly etag: string
  readonly busy: boolean
}

/** What the screen does when a write ends. */
export interface Outcome {
  readonly notify: (notice: Notice | undefined) => void
  readonly highlight: (id: number) => void
  readonly reload: () => void
  /** Puts the focus back on a row's button (`edit`, …) once the grid has drawn it again. */
  readonly focusRowAction: (id: number, action: string) => void
}

const emptyInput: EntryInput = { manufacturer: '', brand: '', model: '', price: '', purchase: '' }
const inputOf = (entry: PriceEntry): EntryInput => ({
  manufacturer: entry.manufacturer,
  brand: entry.brand,
  model: entry.model,
  price: String(entry.price),
  purchase: String(entry.purchase),
})

export const entryLabel = (entry: { manufacturer: string; brand: string; model: string }) =>
  `${entry.manufacturer} / ${entry.brand} / ${entry.model}`

/** Why an entry could not be read: gone (404), or what the API said. */
export const readFailure = (reason: unknown, id: number, t: Translate) =>
  reason instanceof PriceProblem && reason.status === 404
    ? t('deskEntryGone', { id })
    : t('loadFailed', { reason: (reason as Error).message })

/** The words for a refused write: the field errors stay at their fields; 409 and 412 are explained. */
function refusal(reason: unknown, current: Draft, t: Translate): Draft {
  if (!(reason instanceof PriceProblem)) return { ...current, busy: false, message: (reason as Error).message }
  const { existingId } = reason.problem
  if (reason.status === 409 && existingId !== undefined) {
    return { ...current, busy: false, errors: {}, existingId, message: t('deskDuplicate', { id: existingId }) }
  }
  const errors = reason.fieldErrors()
  return {
    ...current,
    busy: false,
    errors,
    message: Object.keys(errors).length > 0 ? t('deskFixFields') : reason.message,
  }
}

export function useEntryWrites(prices: PricesApi, outcome: Outcome, t: Translate) {
  const [edit, setEdit] = useState<Draft | undefined>()
  const [draft, setDraft] = useState<Draft>({ values: emptyInput, errors: {}, busy: false })
  const [removal, setRemoval] = useState<Removal | undefined>()
  const { notify, highlight, reload, focusRowAction } = outcome

  /** Reads the row's entry (and its ETag) for `then`; a failure is said, and the grid loaded again. */
  const readThen = async (row: PriceRow, then: (entry: PriceEntry, etag: string) => void) => {
    notify(undefined)
    try {
      const { entry, etag } = await prices.read(row.id)
      then(entry, etag)
    } catch (reason) {
      notify({ tone: 'alert', text: readFailure(reason, row.id, t) })
      reload()
    }
  }

  const startEdit = (row: PriceRow) =>
    readThen(row, (entry, etag) => setEdit({ id: row.id, etag, values: inputOf(entry), errors: {}, busy: false }))

  const cancelEdit = (id: number) => {
    setEdit(undefined)
    focusRowAction(id, 'edit')
  }

  const save = async () => {
    if (!edit?.id || edit.busy) return
    const { id } = edit
    setEdit({ ...edit, busy: true })
    try {
      const { entry } = await prices.update(id, edit.values, edit.etag ?? '*')
      setEdit(undefined)
      highlight(id)
      notify({ tone: 'status', text: t('deskSaved', { id, entry: entryLabel(entry) }) })
      reload()
      focusRowAction(id, 'edit')
    } catch (reason) {
      if (reason instanceof PriceProblem && reason.status === 412) {
        // Someone else saved the entry since the edit began: show what it holds now, and say so.
        setEdit(undefined)
        highlight(id)
        notify({ tone: 'alert', text: t('deskChangedElsewhere', { id }) })
        reload()
        focusRowAction(id, 'edit')
      } else if (reason instanceof PriceProblem && reason.status === 404) {
        setEdit(undefined)
        notify({ tone: 'alert', text: t('deskEntryGone', { id }) })
        reload()
      } else {
        setEdit((current) => current && refusal(reason, current, t))
      }
    }
  }

  const create = async () => {
    if (draft.busy) return
    setDraft({ ...draft, busy: true })
    try {
      const { entry } = await prices.create(draft.values)
      setDraft({ values: emptyInput, errors: {}, busy: false })
      highlight(entry.id)
      notify({
        tone: 'status',
        text: t('deskCreated', { id: entry.id }),
        entry: { id: entry.id, label: entryLabel(entry) },
      })
      reload()
    } catch (reason) {
      setDraft((current) => refusal(reason, current, t))
    }
  }

  const askRemoval = (row: PriceRow) => readThen(row, (entry, etag) => setRemoval({ entry, etag, busy: false }))

  const remove = async () => {
    if (!removal || removal.busy) return
    const { entry, etag } = removal
    setRemoval({ ...removal, busy: true })
    try {
      await prices.remove(entry.id, etag)
      notify({ tone: 'status', text: t('deskDeleted', { id: entry.id, entry: entryLabel(entry) }) })
    } catch (reason) {
      const status = reason instanceof PriceProblem ? reason.status : 0
      notify({
        tone: 'alert',
        text:
          status === 412
            ? t('deskChangedBeforeDelete', { id: entry.id })
            : status === 404
              ? t('deskEntryGone', { id: entry.id })
              : (reason as Error).message,
      })
      highlight(entry.id)
    }
    setRemoval(undefined)
    reload()
  }

  return {
    edit,
    /** Changes what the edited row holds (its message cleared). */
    editValues: (values: EntryInput) => setEdit((current) => current && { ...current, values, message: undefined }),
    startEdit,
    cancelEdit,
    save,
    draft,
    draftValues: (values: EntryInput) => setDraft((current) => ({ ...current, values, message: undefined })),
    create,
    removal,
    askRemoval,
    keepEntry: () => setRemoval(undefined),
    remove,
  }
}

export type EntryWrites = ReturnType<typeof useEntryWrites>
