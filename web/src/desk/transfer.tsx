import type { Api } from '../api.js'
import type { Translate } from '../app.js'

/** Upload (dry run first) and download of the glass price list. */
export function TransferScreen({ t }: { readonly api: Api; readonly t: Translate }) {
  return <h2>{t('uploadDownload')}</h2>
}
