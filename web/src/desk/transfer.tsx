import { useMemo, useRef, useState } from 'preact/hooks'
import type { ImportMode, ImportResult, ScheduledChange } from '../api/types.js'
import type { Api } from '../api.js'
import type { Language, MessageKey, Translate } from '../i18n/index.js'
import { useSession } from '../session.js'
import {
  BulkApi,
  type ConflictChoice,
  type ExportFormat,
  type FileProblem,
  newIdempotencyKey,
  Problem,
} from './bulk-api.js'
import { checkFilters, errorsAt, type FieldErrors, FilterFields, sentFilters, TextField } from './desk-fields.js'
import { effectiveInstant, formatEffective, normaliseDecimal } from './formula.js'
import type { Filters } from './prices-api.js'
import { UndoChange } from './undo-change.js'
import { UploadCheck } from './upload-check.js'
import './bulk-desk.css'

/*
 * Upload and download of the glass price list. An upload is always checked first (a dry run: counts, the rows it
 * changes, adds, deletes and the conflicts, page by page, or the problems by line and column); only a checked file
 * can be applied, with conflicts only after the manager chooses to overwrite or skip them, once (one Idempotency-Key per check), and a
 * replace only after the manager confirms the number of entries it deletes, as the check counted it. With a time to
 * take effect, the checked file is scheduled (with its name) and waits in the change log until then. A download
 * is fetched with the page's headers (the Bearer token once signed in) and saved from a blob URL.
 */

const MODES: readonly { mode: ImportMode; label: MessageKey; hint: MessageKey }[] = [
  { mode: 'append', label: 'modeAppend', hint: 'modeAppendHint' },
  { mode: 'upsert', label: 'modeUpsert', hint: 'modeUpsertHint' },
  { mode: 'replace', label: 'modeReplace', hint: 'modeReplaceHint' },
]

const FORMATS: readonly { format: ExportFormat; label: MessageKey }[] = [
  { format: 'csv', label: 'formatCsv' },
  { format: 'excel', label: 'formatExcel' },
  { format: 'xlsx', label: 'formatXlsx' },
]

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

interface Checked {
  readonly result: ImportResult
  /** For a replace: the entries it deletes, which the apply confirms (`confirmDeletes`). */
  readonly deletes: number
  /** The service's warning when the file looks like a filtered export. */
  readonly warning?: string
  /** What the check was asked with, so another page of its lists asks the same. */
  readonly confirmDeletes?: number
  readonly key: string
}

export function TransferScreen({
  api,
  language,
  t,
}: {
  readonly api: Api
  readonly language: Language
  readonly t: Translate
}) {
  const bulk = useMemo(() => new BulkApi(api), [api])
  const { canWrite } = useSession()
  const [file, setFile] = useState<File | undefined>()
  const [mode, setMode] = useState<ImportMode>('upsert')
  const [busy, setBusy] = useState(false)
  const [checked, setChecked] = useState<Checked | undefined>()
  const [problems, setProblems] = useState<{ count: number; detail: string; list: readonly FileProblem[] }>()
  const [confirmed, setConfirmed] = useState(false)
  const [conflictChoice, setConflictChoice] = useState<ConflictChoice | undefined>()
  const [uploaded, setUploaded] = useState<ImportResult | undefined>()
  const [scheduled, setScheduled] = useState<ScheduledChange | undefined>()
  /** When the upload takes effect, as the picker holds it (local time); blank: at once. */
  const [effectiveAt, setEffectiveAt] = useState('')
  const [uploadFailure, setUploadFailure] = useState<string | undefined>()

  const [filters, setFilters] = useState<Filters>({})
  const [format, setFormat] = useState<ExportFormat>('csv')
  const [errors, setErrors] = useState<FieldErrors>({})
  const [downloaded, setDownloaded] = useState<string | undefined>()
  const [downloadFailure, setDownloadFailure] = useState<string | undefined>()
  const [downloading, setDownloading] = useState(false)

  // Set at once (state is not, until the next render): a double click sends one request.
  const inFlight = useRef(false)

  const reset = () => {
    setChecked(undefined)
    setProblems(undefined)
    setConfirmed(false)
    setConflictChoice(undefined)
    setUploaded(undefined)
    setScheduled(undefined)
    setUploadFailure(undefined)
  }

  const uploadProblem = (error: unknown) => {
    if (error instanceof Problem && error.code === 'import-rejected') {
      setProblems({
        count: error.numberOf('problemCount') ?? error.problems.length,
        detail: error.message,
        list: error.problems,
      })
    } else {
      setUploadFailure((error as Error).message)
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
    setUploadFailure(undefined)
    try {
      const replace = checked.result.mode === 'replace'
      const options = {
        mode: checked.result.mode,
        key: checked.key,
        ...(replace ? { confirmDeletes: checked.deletes } : {}),
        ...(checked.result.conflicts > 0 && conflictChoice ? { conflicts: conflictChoice } : {}),
      }
      const effective = effectiveInstant(effectiveAt)
      const answer = effective
        ? await bulk.upload(file, { ...options, effectiveAt: effective, fileName: file.name })
        : await bulk.upload(file, options)
      if ('state' in answer) setScheduled(answer)
      else setUploaded(answer)
    } catch (error) {
      uploadProblem(error)
    } finally {
      inFlight.current = false
      setBusy(false)
    }
  }

  const download = async () => {
    if (downloading) return
    const own = checkFilters('export', filters, t)
    setErrors(own)
    setDownloadFailure(undefined)
    setDownloaded(undefined)
    if (Object.keys(own).length > 0) return
    setDownloading(true)
    try {
      const { name, blob } = await bulk.download(sentFilters(filters, normaliseDecimal), format, language)
      const url = URL.createObjectURL(blob)
      // Saved through a transient anchor: the browser's own download, named as the service names the file.
      const anchor = document.createElement('a')
      anchor.href = url
      anchor.download = name
      document.body.append(anchor)
      anchor.click()
      anchor.remove()
      // The browser has taken the file once the click is handled; the URL is not needed after.
      setTimeout(() => URL.revokeObjectURL(url), 1_000)
      setDownloaded(name)
    } catch (error) {
      if (error instanceof Problem && error.errors.length > 0) {
        setErrors(errorsAt(error, (field) => `export-${field}`))
      } else {
        setDownloadFailure((error as Error).message)
      }
    } finally {
      setDownloading(false)
    }
  }

  const result = checked?.result
  const replace = result?.mode === 'replace'
  const conflictsChosen = (result?.conflicts ?? 0) === 0 || conflictChoice !== undefined
  const done = uploaded !== undefined || scheduled !== undefined
  const canApply = canWrite && checked !== undefined && !done && (!replace || confirmed) && conflictsChosen
  const effective = effectiveInstant(effectiveAt)

  return (
    <section class="bulk-desk transfer" aria-labelledby="transfer-title">
      <h2 id="transfer-title">{t('uploadDownload')}</h2>

      <section class="panel" aria-labelledby="upload-title">
        <h3 id="upload-title">{t('uploadTitle')}</h3>
        {canWrite ? null : (
          <p class="note" role="note">
            {t('uploadReadOnly')}
          </p>
        )}
        <form
          onSubmit={(event) => {
            event.preventDefault()
            void check()
          }}
        >
          <div class="field">
            <label for="upload-file">{t('uploadFile')}</label>
            <input
              id="upload-file"
              name="file"
              type="file"
              accept=".csv,.xlsx,text/csv,application/vnd.ms-excel,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
              aria-describedby="upload-file-hint"
              onChange={(event) => {
                const chosen = event.currentTarget.files?.[0]
                setFile(chosen)
                reset()
                // An export carries versions: it goes back as an update, so conflicts with colleagues are found.
                if (chosen) {
                  void looksLikeExport(chosen).then((exported) => {
                    if (exported) setMode('upsert')
                  })
                }
              }}
            />
            <span class="hint" id="upload-file-hint">
              {t('uploadFileHint')}
            </span>
          </div>
          <fieldset class="choice modes">
            <legend>{t('uploadMode')}</legend>
            {MODES.map((item) => (
              <label key={item.mode}>
                <input
                  type="radio"
                  name="mode"
                  value={item.mode}
                  checked={mode === item.mode}
                  onChange={() => {
                    setMode(item.mode)
                    reset()
                  }}
                />{' '}
                <strong>{t(item.label)}</strong> — {t(item.hint)}
              </label>
            ))}
          </fieldset>
          <div class="actions">
            <button type="submit" disabled={!file} aria-disabled={busy}>
              {busy && !checked ? t('checking') : t('checkFile')}
            </button>
          </div>
        </form>

        {problems ? (
          <div class="refused" role="alert">
            <p>{t('fileRejected', { count: problems.count })}</p>
            <table class="results problems">
              <caption>{problems.detail}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('fileLine')}</th>
                  <th scope="col">{t('fileColumn')}</th>
                  <th scope="col">{t('fileProblem')}</th>
                </tr>
              </thead>
              <tbody>
                {problems.list.map((problem, index) => (
                  <tr key={index}>
                    <td>{problem.line > 0 ? problem.line : t('emptyValue')}</td>
                    <td>{problem.column ?? t('emptyValue')}</td>
                    <td>{problem.message}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}

        {result && !done ? (
          <div class="checked">
            <p role="status" id="upload-checked">
              {t('fileChecked', {
                rows: result.rows,
                format: result.format === 'xlsx' ? 'XLSX' : `CSV «${result.delimiter ?? ','}»`,
                created: result.created,
                updated: result.updated,
                unchanged: result.unchanged,
              })}
              {result.conflicts > 0 ? ` ${t('fileConflicts', { conflicts: result.conflicts })}` : null}
            </p>
            <UploadCheck
              result={result}
              onPage={(page) => void turnPage(page)}
              choice={conflictChoice}
              onChoice={setConflictChoice}
              canWrite={canWrite}
              t={t}
            />
            {replace ? (
              <div class="danger-zone" role="alert" id="replace-warning">
                <p>
                  <strong>{t('replaceWarning', { deletes: checked!.deletes, rows: result.rows })}</strong>
                </p>
                {checked?.warning ? <p>{checked.warning}</p> : null}
                {canWrite ? (
                  <label>
                    <input
                      type="checkbox"
                      id="replace-confirmed"
                      checked={confirmed}
                      onChange={(event) => setConfirmed(event.currentTarget.checked)}
                    />{' '}
                    {t('replaceConfirm', { deletes: checked!.deletes })}
                  </label>
                ) : null}
              </div>
            ) : null}
            {canWrite ? (
              <TextField
                id="upload-effectiveAt"
                name="effectiveAt"
                label={t('effectiveAt')}
                hint={t('uploadEffectiveAtHint')}
                value={effectiveAt}
                dateTime
                onInput={setEffectiveAt}
              />
            ) : null}
            {canWrite ? (
              <div class="actions">
                <button
                  type="button"
                  class={replace ? 'danger' : undefined}
                  disabled={!canApply}
                  aria-disabled={busy}
                  onClick={() => void apply()}
                >
                  {busy
                    ? t('uploading')
                    : effective
                      ? t('scheduleUpload', { at: formatEffective(effective, t) })
                      : replace
                        ? t('applyReplace', { deletes: checked!.deletes })
                        : t('applyUpload')}
                </button>
              </div>
            ) : null}
          </div>
        ) : null}

        {uploaded ? (
          <>
            <p class="outcome" role="status" id="upload-applied">
              {t('fileApplied', {
                written: uploaded.written,
                created: uploaded.created,
                updated: uploaded.updated,
                deleted: uploaded.deleted,
                batch: uploaded.batch ?? t('emptyValue'),
              })}
            </p>
            {uploaded.batch === null ? null : (
              <UndoChange
                bulk={bulk}
                batch={uploaded.batch}
                size={uploaded.written + uploaded.deleted}
                canWrite={canWrite}
                t={t}
              />
            )}
          </>
        ) : null}
        {scheduled ? (
          <p class="outcome" role="status" id="upload-scheduled">
            {t('uploadScheduledOutcome', { id: scheduled.id, at: formatEffective(scheduled.effectiveAt, t) })}{' '}
            <a href="#/prices/changes">{t('changeLog')}</a>
          </p>
        ) : null}
        {uploadFailure ? (
          <p class="refused" role="alert">
            {t('requestFailed', { reason: uploadFailure })}
          </p>
        ) : null}
      </section>

      <section class="panel" aria-labelledby="download-title">
        <h3 id="download-title">{t('downloadTitle')}</h3>
        <form
          onSubmit={(event) => {
            event.preventDefault()
            void download()
          }}
        >
          <fieldset>
            <legend>{t('listingFilters')}</legend>
            <FilterFields api={api} prefix="export" filters={filters} errors={errors} onChange={setFilters} t={t} />
          </fieldset>
          <div class="field format">
            <label for="export-format">{t('fileFormat')}</label>
            <select
              id="export-format"
              name="format"
              value={format}
              onChange={(event) => setFormat(event.currentTarget.value as ExportFormat)}
            >
              {FORMATS.map((item) => (
                <option key={item.format} value={item.format}>
                  {t(item.label)}
                </option>
              ))}
            </select>
          </div>
          <div class="actions">
            <button type="submit" aria-disabled={downloading}>
              {downloading ? t('downloading') : t('download')}
            </button>
          </div>
        </form>
        {downloaded ? (
          <p role="status" id="downloaded">
            {t('downloaded', { name: downloaded })}
          </p>
        ) : null}
        {downloadFailure ? (
          <p class="refused" role="alert">
            {t('requestFailed', { reason: downloadFailure })}
          </p>
        ) : null}
      </section>
    </section>
  )
}
