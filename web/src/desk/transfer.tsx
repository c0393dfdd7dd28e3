import { useMemo } from 'preact/hooks'
import type { Api } from '../api.js'
import type { Language, Translate } from '../i18n/index.js'
import { useSession } from '../session.js'
import { BulkApi } from './bulk-api.js'
import { DownloadPanel } from './download-panel.js'
import { UploadPanel } from './upload-panel.js'
import { useUpload } from './use-upload.js'
import './bulk-desk.css'

/*
 * Upload and download of the glass price list. An upload is always checked first (a dry run: counts, the rows it
 * changes, adds, deletes and the conflicts, page by page, or the problems by line and column); only a checked file
 * can be applied, with conflicts only after the manager chooses to overwrite or skip them, once (one Idempotency-Key per check), and a
 * replace only after the manager confirms the number of entries it deletes, as the check counted it. With a time to
 * take effect, the checked file is scheduled (with its name) and waits in the change log until then. A download
 * is fetched with the page's headers (the Bearer token once signed in) and saved from a blob URL.
 */

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
  const upload = useUpload(bulk)
  return (
    <section class="bulk-desk transfer" aria-labelledby="transfer-title">
      <h2 id="transfer-title">{t('uploadDownload')}</h2>
      <UploadPanel upload={upload} bulk={bulk} canWrite={canWrite} t={t} />
      <DownloadPanel api={api} bulk={bulk} language={language} t={t} />
    </section>
  )
}
