import type { Api } from '../api.js'
import type { Translate } from '../app.js'

/** The bulk price change as a wizard: filters and band, formula, dry run, confirm, undo. */
export function BulkChangeScreen({ t }: { readonly api: Api; readonly t: Translate }) {
  return <h2>{t('bulkChange')}</h2>
}
