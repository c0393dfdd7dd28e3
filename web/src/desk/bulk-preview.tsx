import type { BulkChangePreview, PreviewRow } from '../api/types.js'
import type { MessageKey, Translate } from '../i18n/index.js'
import { reasonKey } from './bulk-formula.js'
import { formatCount, formatMoney } from './desk-format.js'

/*
 * The bulk change's dry run as the wizard shows it: the counts, the totals before and after, why it would be
 * refused, and the first rows it would reject or change (old → new).
 */

export function DryRunResult({ preview, t }: { readonly preview: BulkChangePreview; readonly t: Translate }) {
  const money = new Intl.NumberFormat(t('numberLocale'), { maximumFractionDigits: 2 })
  const beforeAfter = (
    id: string,
    label: MessageKey,
    values: { old: string | null; new: string | null },
    unit = '',
  ) => (
    <div>
      <dt>{t(label)}</dt>
      <dd id={id}>
        {t('beforeAfter', {
          old: `${formatMoney(values.old, t('numberLocale'))}${unit}`,
          new: `${formatMoney(values.new, t('numberLocale'))}${unit}`,
        })}
      </dd>
    </div>
  )

  const rows = (caption: string, list: readonly PreviewRow[], rejected: boolean) => (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolled region takes the focus, so the keyboard scrolls it
    <section class="table-scroll" aria-label={caption} tabIndex={0}>
      <table class={`results sample${rejected ? ' rejected' : ''}`}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{t('entryId')}</th>
            <th scope="col">{t('manufacturer')}</th>
            <th scope="col">{t('brand')}</th>
            <th scope="col">{t('model')}</th>
            <th scope="col" class="number">
              {t('basePrice')}
            </th>
            <th scope="col" class="number">
              {t('oldValue')}
            </th>
            <th scope="col" class="number">
              {t('newValue')}
            </th>
          </tr>
        </thead>
        <tbody>
          {list.map((row) => (
            <tr key={row.id}>
              <td>{row.id}</td>
              <td>{row.manufacturer}</td>
              <td>{row.brand}</td>
              <td>{row.model}</td>
              <td class="number">{money.format(row.base)}</td>
              <td class="number">{money.format(row.oldValue)}</td>
              <td class="number new">{money.format(row.newValue)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  )

  return (
    <>
      <dl class="counts">
        <div>
          <dt>{t('countSelected')}</dt>
          <dd id="count-selected">{preview.selectedCount}</dd>
        </div>
        <div>
          <dt>{t('countChanged')}</dt>
          <dd id="count-changed">{preview.changedCount}</dd>
        </div>
        <div>
          <dt>{t('countUnchanged')}</dt>
          <dd id="count-unchanged">{preview.unchangedCount}</dd>
        </div>
        <div>
          <dt>{t('countRejected')}</dt>
          <dd id="count-rejected">{preview.rejectedCount}</dd>
        </div>
      </dl>
      <dl class="counts totals" aria-label={t('totals')}>
        {beforeAfter('total-retail', 'totalRetail', preview.totals.retail)}
        {beforeAfter('total-purchase', 'totalPurchase', preview.totals.purchase)}
        {beforeAfter('average-markup', 'averageMarkup', preview.totals.averageMarkup, ' %')}
      </dl>
      {preview.wouldApply ? null : (
        <div class="refused" role="alert">
          <p>{t('wouldNotApply')}</p>
          <ul>
            {preview.reasons.map((reason) => (
              <li key={reason.code}>
                {reasonKey[reason.code] ? t(reasonKey[reason.code]!, { count: preview.rejectedCount }) : reason.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      {preview.rejected.length > 0
        ? rows(
            t('rejectedSample', { shown: preview.rejected.length, count: preview.rejectedCount }),
            preview.rejected,
            true,
          )
        : null}
      {/* With rejections the change is refused whole: its rejected rows are what to look at. */}
      {preview.changes.length > 0 && preview.rejectedCount === 0
        ? rows(
            t('changesSample', {
              shown: preview.changes.length,
              count: formatCount(preview.changedCount, t('numberLocale')),
            }),
            preview.changes,
            false,
          )
        : null}
    </>
  )
}
