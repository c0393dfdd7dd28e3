import type { Api } from '../api.js'
import type { Translate } from '../app.js'

/** The change log of the glass price list, with revert. */
export function ChangeLogScreen({ t }: { readonly api: Api; readonly t: Translate }) {
  return <h2>{t('changeLog')}</h2>
}
