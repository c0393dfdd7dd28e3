import type { Api } from '../api.js'
import type { Translate } from '../app.js'

/** The price manager's desk: the glass price list as a grid. */
export function PriceListScreen({ t }: { readonly api: Api; readonly t: Translate }) {
  return <h2>{t('priceList')}</h2>
}
