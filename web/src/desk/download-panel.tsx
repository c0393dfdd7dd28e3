import { useState } from 'preact/hooks'
import type { Api } from '../api.js'
import type { Language, MessageKey, Translate } from '../i18n/index.js'
import { type BulkApi, type ExportFormat, Problem } from './bulk-api.js'
import { checkFilters, errorsAt, type FieldErrors, FilterFields, sentFilters } from './desk-fields.js'
import { normaliseDecimal } from './formula.js'
import type { Filters } from './prices-api.js'

/*
 * The download's panel: the listing's filters and the file's format. The file is fetched with the page's headers
 * (the Bearer token once signed in) and saved from a blob URL, named as the service names it.
 */

const FORMATS: readonly { format: ExportFormat; label: MessageKey }[] = [
  { format: 'csv', label: 'formatCsv' },
  { format: 'excel', label: 'formatExcel' },
  { format: 'xlsx', label: 'formatXlsx' },
]

export function DownloadPanel(props: {
  readonly api: Api
  readonly bulk: BulkApi
  readonly language: Language
  readonly t: Translate
}) {
  const { api, bulk, language, t } = props
  const [filters, setFilters] = useState<Filters>({})
  const [format, setFormat] = useState<ExportFormat>('csv')
  const [errors, setErrors] = useState<FieldErrors>({})
  /** The file saved, or why it could not be. */
  const [outcome, setOutcome] = useState<{ downloaded?: string; failure?: string }>({})
  const [downloading, setDownloading] = useState(false)
  const { downloaded, failure } = outcome

  const download = async () => {
    if (downloading) return
    const own = checkFilters('export', filters, t)
    setErrors(own)
    setOutcome({})
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
      setOutcome({ downloaded: name })
    } catch (error) {
      if (error instanceof Problem && error.errors.length > 0) {
        setErrors(errorsAt(error, (field) => `export-${field}`))
      } else {
        setOutcome({ failure: (error as Error).message })
      }
    } finally {
      setDownloading(false)
    }
  }

  return (
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
      {failure ? (
        <p class="refused" role="alert">
          {t('requestFailed', { reason: failure })}
        </p>
      ) : null}
    </section>
  )
}
