import { useRef, useState } from 'preact/hooks'
import type { ImportMode, ImportResult, ScheduledChange } from '../api/types.js'
import type { BulkApi, ConflictChoice, FileProblem } from './bulk-api.js'
import { newIdempotencyKey, Problem } from './bulk-api.js'
import { effectiveInstant } from './formula.js'

/*
 * An upload's state and calls: the file and its mode, the check (a dry run, page by page), the manager's choices
 * (the conflicts overwritten or skipped, a replace's deletes confirmed, a time to take effect) and what the apply
 * did. Only a checked file is applied, once per check (one Idempotency-Key).
 */

/** Whether a CSV file's header has the version column an export writes (so the file is an export). */
async function looksLikeExport(file: File): Promise<boolean> {
  if (file.name.toLowerCase().endsWith('.xlsx')) return false
  const head = await file.slice(0, 4096).text()
  const header = head.replace(/^\uFEFF/, '').split(/\r?\n/)[0] ?? ''
  return header
    .split(/[;,]/)
    .map((name) => name.trim().replace(/^"|"$/g, '').toLowerCase())
    .some((name) => name === 'version' || name === 'версия')
}

export interface Checked {
  readonly result: ImportResult
  /** For a replace: the entries it deletes, which the apply confirms (`confirmDeletes`). */
  readonly deletes: number
  /** The service's warning when the file looks like a filtered export. */
  readonly warning?: string
  /** What the check was asked with, so another page of its lists asks the same. */
  readonly confirmDeletes?: number
  readonly key: string
}

/** What the manager chose about a checked file. */
interface Choices {
  /** A replace's deletes confirmed. */
  readonly confirmed: boolean
  readonly conflicts?: ConflictChoice
  /** When the upload takes effect, as the picker holds it (local time); blank: at once. */
  readonly effectiveAt: string
}

/** What became of the file: its problems by line, the upload applied or scheduled, or a failure. */
export interface UploadOutcome {
  readonly problems?: { readonly count: number; readonly detail: string; readonly list: readonly FileProblem[] }
  readonly uploaded?: ImportResult
  readonly scheduled?: ScheduledChange
  readonly failure?: string
}

const noChoices: Choices = { confirmed: false, effectiveAt: '' }

export function useUpload(bulk: BulkApi) {
  const [input, setInput] = useState<{ file?: File; mode: ImportMode }>({ mode: 'upsert' })
  const [busy, setBusy] = useState(false)
  const [checked, setChecked] = useState<Checked | undefined>()
  const [choices, setChoices] = useState<Choices>(noChoices)
  const [outcome, setOutcome] = useState<UploadOutcome>({})
  // Set at once (state is not, until the next render): a double click sends one request.
  const inFlight = useRef(false)
  const { file, mode } = input

  const reset = () => {
    setChecked(undefined)
    setChoices((last) => ({ ...noChoices, effectiveAt: last.effectiveAt }))
    setOutcome({})
  }

  const uploadProblem = (error: unknown) => {
    if (error instanceof Problem && error.code === 'import-rejected') {
      const problems = {
        count: error.numberOf('problemCount') ?? error.problems.length,
        detail: error.message,
        list: error.problems,
      }
      setOutcome((last) => ({ ...last, problems }))
    } else {
      setOutcome((last) => ({ ...last, failure: (error as Error).message }))
    }
  }

  const check = async () => {
    if (busy || !file) return
    reset()
    setBusy(true)
    try {
      let warning: string | undefined
      let confirmDeletes: number | undefined
      let result: ImportResult
      try {
        result = await bulk.upload(file, { mode })
      } catch (error) {
        // A replace by what looks like a filtered export: the check goes on with the number it names.
        if (!(error instanceof Problem && error.code === 'confirm-deletes')) throw error
        warning = error.message
        confirmDeletes = error.numberOf('deleteCount')
        result = await bulk.upload(file, { mode, ...(confirmDeletes === undefined ? {} : { confirmDeletes }) })
      }
      setChecked({
        result,
        deletes: Math.max(result.deleted, confirmDeletes ?? 0),
        ...(warning ? { warning } : {}),
        ...(confirmDeletes === undefined ? {} : { confirmDeletes }),
        key: newIdempotencyKey(),
      })
    } catch (error) {
      uploadProblem(error)
    } finally {
      setBusy(false)
    }
  }

  /** Another page of the check's lists: the same dry run, asked for that page. */
  const turnPage = async (page: number) => {
    if (busy || !file || !checked) return
    setBusy(true)
    try {
      const { confirmDeletes } = checked
      const result = await bulk.upload(file, {
        mode: checked.result.mode,
        page,
        ...(confirmDeletes === undefined ? {} : { confirmDeletes }),
      })
      setChecked({ ...checked, result })
    } catch (error) {
      uploadProblem(error)
    } finally {
      setBusy(false)
    }
  }

  const apply = async () => {
    if (inFlight.current || !file || !checked) return
    inFlight.current = true
    setBusy(true)
    setOutcome((last) => ({ ...last, failure: undefined }))
    try {
      const replace = checked.result.mode === 'replace'
      const options = {
        mode: checked.result.mode,
        key: checked.key,
        ...(replace ? { confirmDeletes: checked.deletes } : {}),
        ...(checked.result.conflicts > 0 && choices.conflicts ? { conflicts: choices.conflicts } : {}),
      }
      const effective = effectiveInstant(choices.effectiveAt)
      const answer = effective
        ? await bulk.upload(file, { ...options, effectiveAt: effective, fileName: file.name })
        : await bulk.upload(file, options)
      setOutcome((last) => ('state' in answer ? { ...last, scheduled: answer } : { ...last, uploaded: answer }))
    } catch (error) {
      uploadProblem(error)
    } finally {
      inFlight.current = false
      setBusy(false)
    }
  }

  return {
    file,
    mode,
    busy,
    checked,
    choices,
    outcome,
    /** A file chosen: an export (it carries versions) goes back as an update, so conflicts are found. */
    chooseFile: (chosen: File | undefined) => {
      setInput((last) => ({ ...last, file: chosen }))
      reset()
      if (chosen) {
        void looksLikeExport(chosen).then((exported) => {
          if (exported) setInput((last) => ({ ...last, mode: 'upsert' }))
        })
      }
    },
    chooseMode: (next: ImportMode) => {
      setInput((last) => ({ ...last, mode: next }))
      reset()
    },
    choose: (change: Partial<Choices>) => setChoices((last) => ({ ...last, ...change })),
    check,
    turnPage,
    apply,
  }
}

export type Upload = ReturnType<typeof useUpload>
