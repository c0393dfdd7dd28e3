import type { ComponentChildren } from 'preact'
import type { CheckPage, CheckRow, ConflictRow, ImportResult } from '../api/types.js'
import type { MessageKey, Translate } from '../i18n/index.js'
import { Pager } from '../pager.js'
import type { ConflictChoice } from './bulk-api.js'
import { fieldLabel, formatMoment, formatMoney } from './desk-format.js'

/*
 * An upload's check, row by row: the rows that change an entry (old → new per price), that add one, the entries a
 * replace deletes, and the conflicts (entries colleagues changed since the file was exported, highlighted with who
 * and when), one page of each as the dry run answered it; and, when there are conflicts, the choice without which
 * the file is not applied.
 */

/** "позицию, изменённую", "позиции, изменённые", "позиций, изменённых" by the number, in the page's language. */
export function entriesWord(count: number, t: Translate): string {
  const form = new Intl.PluralRules(t('numberLocale')).select(count)
  return t(form === 'one' ? 'entriesOne' : form === 'few' ? 'entriesFew' : 'entriesMany')
}

/** A price cell: old → new where it changes, else the value. */
function PriceCell(props: { readonly row: CheckRow; readonly field: 'price' | 'purchase'; readonly t: Translate }) {
  const { row, field } = props
  const money = (value: number) => formatMoney(value, props.t('numberLocale'))
  const change = row.changes.find((item) => item.field === field)
  return (
    <td class="number">
      {change ? (
        <>
          <del>{money(change.oldValue)}</del> → <ins>{money(change.newValue)}</ins>
        </>
      ) : (
        money(row[field])
      )}
    </td>
  )
}

function CheckTable<T extends CheckRow>(props: {
  readonly id: string
  readonly title: MessageKey
  readonly page: CheckPage<T>
  /** The conflicts' own cells (who and when, versions); the table is highlighted then. */
  readonly conflictCells?: (row: T, t: Translate) => ComponentChildren
  readonly t: Translate
}) {
  const { page, t } = props
  if (page.totalElements === 0) return null
  return (
    <table class={`results check-list${props.conflictCells ? ' conflicts' : ''}`} id={props.id}>
      <caption>{t(props.title, { count: page.totalElements })}</caption>
      <thead>
        <tr>
          <th scope="col">{t('fileLine')}</th>
          <th scope="col">{t('checkEntry')}</th>
          <th scope="col">{t(fieldLabel.price)}</th>
          <th scope="col">{t(fieldLabel.purchase)}</th>
          {props.conflictCells ? (
            <>
              <th scope="col">{t('checkChangedBy')}</th>
              <th scope="col">{t('checkVersions')}</th>
            </>
          ) : null}
        </tr>
      </thead>
      <tbody>
        {page.content.map((row) => (
          <tr key={`${row.line}-${row.id}`} class={props.conflictCells ? 'conflict' : undefined}>
            <td>{row.line ?? t('emptyValue')}</td>
            <td>
              {row.manufacturer} · {row.brand} · {row.model}
            </td>
            <PriceCell row={row} field="price" t={t} />
            <PriceCell row={row} field="purchase" t={t} />
            {props.conflictCells?.(row, t)}
          </tr>
        ))}
      </tbody>
    </table>
  )
}

function conflictCells(row: ConflictRow, t: Translate) {
  return (
    <>
      <td>
        {row.changedBy}, {formatMoment(row.changedAt, t('numberLocale'))}
      </td>
      <td class="number">
        {row.fileVersion} → {row.storedVersion}
      </td>
    </>
  )
}

export function UploadCheck(props: {
  readonly result: ImportResult
  readonly onPage: (page: number) => void
  readonly choice: ConflictChoice | undefined
  readonly onChoice: (choice: ConflictChoice) => void
  readonly canWrite: boolean
  readonly t: Translate
}) {
  const { result, t } = props
  const { check } = result
  const lists = [check.changed, check.created, check.deleted, check.conflicts]
  const pages = Math.max(...lists.map((list) => list.totalPages))
  const count = result.conflicts
  return (
    <section class="upload-check" aria-labelledby="check-lists-title">
      <h4 id="check-lists-title">{t('checkListsTitle')}</h4>
      {count > 0 ? (
        <div class="danger-zone" role="alert" id="upload-conflicts">
          <p>
            <strong>{t('conflictsFound', { count })}</strong>
          </p>
          {props.canWrite ? (
            <fieldset class="choice">
              <label>
                <input
                  type="radio"
                  name="conflicts"
                  id="overwrite-conflicts"
                  checked={typeof props.choice === 'object'}
                  onChange={() => props.onChoice({ overwrite: count })}
                />{' '}
                {t('overwriteConflicts', { count, entries: entriesWord(count, t) })}
              </label>
              <label>
                <input
                  type="radio"
                  name="conflicts"
                  id="skip-conflicts"
                  checked={props.choice === 'skip'}
                  onChange={() => props.onChoice('skip')}
                />{' '}
                {t('skipConflicts')}
              </label>
            </fieldset>
          ) : null}
        </div>
      ) : null}
      <CheckTable
        id="check-conflicts"
        title="checkConflicts"
        page={check.conflicts}
        conflictCells={conflictCells}
        t={t}
      />
      <CheckTable id="check-changed" title="checkChanged" page={check.changed} t={t} />
      <CheckTable id="check-created" title="checkCreated" page={check.created} t={t} />
      <CheckTable id="check-deleted" title="checkDeleted" page={check.deleted} t={t} />
      {pages > 1 ? (
        <Pager label={t('checkPages')} page={check.changed.number} pages={pages} onPage={props.onPage} t={t} />
      ) : null}
    </section>
  )
}
