import { useEffect, useRef, useState } from 'preact/hooks'
import { type Api, type Column, isAbort, type SearchBody } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'
import { EXPORT_CAP, fileName, readView } from './view-export.js'

/*
 * Above the results: the view on screen as a CSV or XLSX file (every page of the search up to EXPORT_CAP rows,
 * the columns shown in their order, headed in the page's language) and the print of the page. The file writers
 * are loaded on the first download, so the page's bundle carries neither.
 */

interface ExportBarProps {
  readonly api: Api
  readonly kind: string
  readonly title: string
  /** The search on screen, or undefined while a filter is invalid (nothing to export then). */
  readonly body: SearchBody | undefined
  readonly sort: string
  readonly columns: readonly Column[]
  /** The search's total, once known. */
  readonly total: number | undefined
  readonly language: Language
  readonly t: Translate
}

/** Hands a file to the browser's own download, named `name`. */
export function saveFile(name: string, blob: Blob): void {
  const url = URL.createObjectURL(blob)
  const anchor = document.createElement('a')
  anchor.href = url
  anchor.download = name
  document.body.append(anchor)
  anchor.click()
  anchor.remove()
  // The browser has taken the file once the click is handled; the URL is not needed after.
  setTimeout(() => URL.revokeObjectURL(url), 1_000)
}

type Progress =
  | { readonly state: 'reading'; readonly read: number; readonly of: number }
  | { readonly state: 'saved'; readonly name: string; readonly rows: number; readonly total: number }
  | { readonly state: 'failed'; readonly reason: string }

export function ExportBar({ api, kind, title, body, sort, columns, total, language, t }: ExportBarProps) {
  const [progress, setProgress] = useState<Progress | undefined>()
  const running = useRef<AbortController | undefined>(undefined)
  // Another kind or search: the outcome said no longer concerns the view on screen.
  const viewKey = JSON.stringify([kind, body, sort])
  useEffect(() => {
    running.current?.abort()
    setProgress(undefined)
  }, [viewKey])
  useEffect(() => () => running.current?.abort(), [])

  const download = async (format: 'csv' | 'xlsx') => {
    if (!body) return
    running.current?.abort()
    const controller = new AbortController()
    running.current = controller
    setProgress({ state: 'reading', read: 0, of: Math.min(total ?? 0, EXPORT_CAP) })
    try {
      const [{ items, total: found }, files] = await Promise.all([
        readView(api, kind, body, sort, (read, of) => setProgress({ state: 'reading', read, of }), controller.signal),
        import('./view-files.js'),
      ])
      const name = fileName(kind, format)
      const blob =
        format === 'csv' ? files.csvFile(columns, items, language) : files.xlsxFile(columns, items, language, title)
      saveFile(name, blob)
      setProgress({ state: 'saved', name, rows: items.length, total: found })
    } catch (reason) {
      if (!isAbort(reason)) setProgress({ state: 'failed', reason: (reason as Error).message })
    }
  }

  const count = (value: number) => value.toLocaleString(language)
  const busy = progress?.state === 'reading'
  const capped = total !== undefined && total > EXPORT_CAP
  return (
    <fieldset class="export-bar">
      <legend class="visually-hidden">{t('exportView')}</legend>
      <button type="button" disabled={!body || busy || total === 0} onClick={() => download('csv')}>
        {t('downloadCsv')}
      </button>
      <button type="button" disabled={!body || busy || total === 0} onClick={() => download('xlsx')}>
        {t('downloadXlsx')}
      </button>
      <button type="button" onClick={() => window.print()}>
        {t('print')}
      </button>
      {capped ? <span class="hint">{t('exportCapped', { cap: count(EXPORT_CAP), total: count(total) })}</span> : null}
      <span class="export-status" role="status">
        {progress?.state === 'reading'
          ? t('exportReading', { read: count(progress.read), of: count(progress.of) })
          : progress?.state === 'saved'
            ? progress.rows < progress.total
              ? t('exportSavedCapped', {
                  name: progress.name,
                  rows: count(progress.rows),
                  total: count(progress.total),
                })
              : t('exportSaved', { name: progress.name, rows: count(progress.rows) })
            : null}
      </span>
      {progress?.state === 'failed' ? (
        <span class="error" role="alert">
          {t('exportFailed', { reason: progress.reason })}
        </span>
      ) : null}
    </fieldset>
  )
}
