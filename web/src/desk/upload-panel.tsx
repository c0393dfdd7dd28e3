import type { ImportMode } from '../api/types.js'
import type { MessageKey, Translate } from '../i18n/index.js'
import type { BulkApi } from './bulk-api.js'
import { TextField } from './desk-fields.js'
import { effectiveInstant, formatEffective } from './formula.js'
import { UndoChange } from './undo-change.js'
import { UploadCheck } from './upload-check.js'
import type { Upload, UploadOutcome } from './use-upload.js'

/*
 * The upload's panel: the file and its mode, the check's counts and lists (or the file's problems by line and
 * column), the manager's choices, and what the apply did (with its Undo) or when it takes effect.
 */

const MODES: readonly { mode: ImportMode; label: MessageKey; hint: MessageKey }[] = [
  { mode: 'append', label: 'modeAppend', hint: 'modeAppendHint' },
  { mode: 'upsert', label: 'modeUpsert', hint: 'modeUpsertHint' },
  { mode: 'replace', label: 'modeReplace', hint: 'modeReplaceHint' },
]

export function UploadPanel(props: {
  readonly upload: Upload
  readonly bulk: BulkApi
  readonly canWrite: boolean
  readonly t: Translate
}) {
  const { upload, bulk, canWrite, t } = props
  const { busy, checked, choices } = upload
  const { problems, uploaded, scheduled, failure } = upload.outcome
  const result = checked?.result
  const replace = result?.mode === 'replace'
  const conflictsChosen = (result?.conflicts ?? 0) === 0 || choices.conflicts !== undefined
  const done = uploaded !== undefined || scheduled !== undefined
  const canApply = canWrite && checked !== undefined && !done && (!replace || choices.confirmed) && conflictsChosen
  const effective = effectiveInstant(choices.effectiveAt)
  return (
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
          void upload.check()
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
            onChange={(event) => upload.chooseFile(event.currentTarget.files?.[0])}
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
                checked={upload.mode === item.mode}
                onChange={() => upload.chooseMode(item.mode)}
              />{' '}
              <strong>{t(item.label)}</strong> — {t(item.hint)}
            </label>
          ))}
        </fieldset>
        <div class="actions">
          <button type="submit" disabled={!upload.file} aria-disabled={busy}>
            {busy && !checked ? t('checking') : t('checkFile')}
          </button>
        </div>
      </form>

      {problems ? <FileProblems problems={problems} t={t} /> : null}

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
            onPage={(page) => void upload.turnPage(page)}
            choice={choices.conflicts}
            onChoice={(conflicts) => upload.choose({ conflicts })}
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
                    checked={choices.confirmed}
                    onChange={(event) => upload.choose({ confirmed: event.currentTarget.checked })}
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
              value={choices.effectiveAt}
              dateTime
              onInput={(effectiveAt) => upload.choose({ effectiveAt })}
            />
          ) : null}
          {canWrite ? (
            <div class="actions">
              <button
                type="button"
                class={replace ? 'danger' : undefined}
                disabled={!canApply}
                aria-disabled={busy}
                onClick={() => void upload.apply()}
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
            {uploaded.batch === null && uploaded.written + uploaded.deleted === 0
              ? t('fileChangedNothing', { unchanged: uploaded.unchanged })
              : t('fileApplied', {
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
      {failure ? (
        <p class="refused" role="alert">
          {t('requestFailed', { reason: failure })}
        </p>
      ) : null}
    </section>
  )
}

/** A file the service refused: its problems by line and column. */
function FileProblems({
  problems,
  t,
}: {
  readonly problems: NonNullable<UploadOutcome['problems']>
  readonly t: Translate
}) {
  return (
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
  )
}
