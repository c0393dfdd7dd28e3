import type { MessageKey } from '../i18n/index.js'
import type { BulkChangeBody, PriceType, Rounding } from './bulk-api.js'

/*
 * The desk's decimals and the bulk change's formula in words. Decimals stay text from the input to the request:
 * the service computes with PostgreSQL numeric, the page only checks the form and says what will be computed.
 */

type Translate = (key: MessageKey, values?: Record<string, string | number>) => string

/** What was typed as a decimal, as the API reads it: spaces (thousands) dropped, a decimal comma made a point. */
export function normaliseDecimal(raw: string): string {
  return raw.replace(/[\s\u00a0\u202f]/g, '').replace(',', '.')
}

const DECIMAL = /^[-+]?(\d+(\.\d*)?|\.\d+)$/

/** True for a blank value (no filter, the default) or a number as the API reads one. */
export function isDecimalOrBlank(raw: string): boolean {
  const value = normaliseDecimal(raw)
  return value === '' || DECIMAL.test(value)
}

const priceKey: Record<PriceType, MessageKey> = { RETAIL: 'retailPrice', PURCHASE: 'purchasePrice' }
const roundingKey: Record<Rounding, MessageKey> = {
  WHOLE: 'roundWholeWords',
  TENS: 'roundTensWords',
  HUNDREDS: 'roundHundredsWords',
}

/**
 * The formula in words, e.g. "New retail price = purchase price × 2.5 − 10 RUB, rounded to tens of roubles
 * (halves up)"; a blank coefficient is 1 and a blank difference 0, as the service reads them.
 */
export function describeFormula(body: BulkChangeBody, t: Translate): string {
  let expression = t(priceKey[body.priceTypeBase])
  const coefficient = normaliseDecimal(body.coefficient ?? '')
  if (coefficient !== '') expression += ` × ${coefficient}`
  const difference = normaliseDecimal(body.difference ?? '').replace(/^\+/, '')
  if (difference !== '' && !/^-?0*\.?0*$/.test(difference)) {
    expression += difference.startsWith('-')
      ? ` − ${difference.slice(1)} ${t('currency')}`
      : ` + ${difference} ${t('currency')}`
  }
  return t('formulaWords', {
    changed: t(priceKey[body.priceTypeChange]),
    expression,
    rounding: t(roundingKey[body.round]),
  })
}
