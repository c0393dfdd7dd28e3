import type { MessageKey } from '../i18n/index.js'
import type { BulkChangeBody, Direction, PriceType, Rounding } from './bulk-api.js'

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
  ENDS_90: 'roundEnds90Words',
  ENDS_99: 'roundEnds99Words',
  ENDS_00: 'roundEnds00Words',
}
/** Whether `value` is a rounding the formula can say in words. */
export function isRounding(value: string): value is Rounding {
  return Object.hasOwn(roundingKey, value)
}
const directionKey: Record<Direction, MessageKey> = { NEAREST: 'directionNearestWords', UP: 'directionUpWords' }

/**
 * The formula in words, e.g. "New retail price = purchase price × 2.5 − 10 RUB, rounded to tens of roubles
 * (halves up)", or "New retail price = retail price + 10 %, rounded to a price ending in …90 (upwards). Takes
 * effect 01.12.2026, 09:00."; a blank coefficient is 1 and a blank difference 0, as the service reads them.
 */
export function describeFormula(body: BulkChangeBody, t: Translate): string {
  let expression = t(priceKey[body.priceTypeBase])
  const coefficient = normaliseDecimal(body.coefficient ?? '')
  const percent = normaliseDecimal(body.percent ?? '').replace(/^\+/, '')
  if (coefficient !== '') expression += ` × ${coefficient}`
  else if (percent !== '') expression += percent.startsWith('-') ? ` − ${percent.slice(1)} %` : ` + ${percent} %`
  const difference = normaliseDecimal(body.difference ?? '').replace(/^\+/, '')
  if (difference !== '' && !/^-?0*\.?0*$/.test(difference)) {
    expression += difference.startsWith('-')
      ? ` − ${difference.slice(1)} ${t('currency')}`
      : ` + ${difference} ${t('currency')}`
  }
  const words = t('formulaWords', {
    changed: t(priceKey[body.priceTypeChange]),
    expression,
    rounding: t(roundingKey[body.round]),
    direction: t(directionKey[body.direction ?? 'NEAREST']),
  })
  return body.effectiveAt ? `${words} ${t('formulaEffective', { at: formatEffective(body.effectiveAt, t) })}` : words
}

/** An effective date-time as the page's language writes it, in the browser's time zone. */
export function formatEffective(at: string, t: Translate): string {
  const time = Date.parse(at)
  if (Number.isNaN(time)) return at
  return new Intl.DateTimeFormat(t('numberLocale'), { dateStyle: 'medium', timeStyle: 'short' }).format(time)
}
