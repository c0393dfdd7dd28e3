import { ROUNDING_RULES } from '../../../src/domain/roundings.js'
import type { PriceChange, PriceType } from '../api/types.js'
import type { MessageKey, Translate } from '../i18n/index.js'
import type { BulkChangeBody, Direction, Rounding } from './bulk-api.js'
import { FILTER_BANDS, filterInput, TEXT_FILTER_NAMES } from './prices-api.js'

/*
 * The desk's decimals and the bulk change's formula in words. Decimals stay text from the input to the request:
 * the service computes with PostgreSQL numeric, the page only checks the form and says what will be computed.
 */

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
/** A message key the roundings' description names (a type error names one the catalogues lack). */
type RoundingMessages = (typeof ROUNDING_RULES)[number]['messages']
const roundingMessage = (key: RoundingMessages | `${RoundingMessages}${'Words' | 'Short'}`): MessageKey => key
/** Each rounding's messages (src/domain/roundings.ts): its choice, its words and its short words. */
export const roundingMessages = Object.fromEntries(
  ROUNDING_RULES.map((rule) => [
    rule.name,
    {
      choice: roundingMessage(rule.messages),
      words: roundingMessage(`${rule.messages}Words` as const),
      short: roundingMessage(`${rule.messages}Short` as const),
    },
  ]),
) as Readonly<Record<Rounding, { readonly choice: MessageKey; readonly words: MessageKey; readonly short: MessageKey }>>
/** Whether `value` is a rounding the formula can say in words. */
export function isRounding(value: string): value is Rounding {
  return Object.hasOwn(roundingMessages, value)
}
const directionKey: Record<Direction, MessageKey> = { NEAREST: 'directionNearestWords', UP: 'directionUpWords' }

/**
 * `base × coefficient ± difference` (or `base ± percent %`), the base and the unit after the difference (` ₽`, or
 * none) as given.
 */
function expressionWords(body: BulkChangeBody, base: string, unit: string, number: (text: string) => string) {
  let expression = base
  const coefficient = normaliseDecimal(body.coefficient ?? '')
  const percent = normaliseDecimal(body.percent ?? '').replace(/^\+/, '')
  if (coefficient !== '') expression += ` × ${number(coefficient)}`
  else if (percent !== '') {
    expression += percent.startsWith('-') ? ` − ${number(percent.slice(1))} %` : ` + ${number(percent)} %`
  }
  const difference = normaliseDecimal(body.difference ?? '').replace(/^\+/, '')
  if (difference !== '' && !/^-?0*\.?0*$/.test(difference)) {
    expression += difference.startsWith('-')
      ? ` − ${number(difference.slice(1))}${unit}`
      : ` + ${number(difference)}${unit}`
  }
  return expression
}

/**
 * The formula in words, e.g. "New retail price = purchase price × 2.5 − 10 RUB, rounded to tens of roubles
 * (halves up)", or "New retail price = retail price + 10 %, rounded to a price ending in …90 (upwards). Takes
 * effect 01.12.2026, 09:00."; a blank coefficient is 1 and a blank difference 0, as the service reads them.
 */
export function describeFormula(body: BulkChangeBody, t: Translate): string {
  const words = t('formulaWords', {
    changed: t(priceKey[body.priceTypeChange]),
    expression: expressionWords(body, t(priceKey[body.priceTypeBase]), ` ${t('currency')}`, (text) => text),
    rounding: t(roundingMessages[body.round].words),
    direction: t(directionKey[body.direction ?? 'NEAREST']),
  })
  return body.effectiveAt ? `${words} ${t('formulaEffective', { at: formatEffective(body.effectiveAt, t) })}` : words
}

/** The picker's local date and time as an instant with its offset (ISO 8601, UTC); blank or unreadable: none. */
export function effectiveInstant(local: string): string | undefined {
  const time = local ? new Date(local).getTime() : Number.NaN
  return Number.isNaN(time) ? undefined : new Date(time).toISOString()
}

/** An effective date-time as the page's language writes it, in the browser's time zone. */
export function formatEffective(at: string, t: Translate): string {
  const time = Date.parse(at)
  if (Number.isNaN(time)) return at
  return new Intl.DateTimeFormat(t('numberLocale'), { dateStyle: 'medium', timeStyle: 'short' }).format(time)
}

const priceShortKey: Record<PriceType, MessageKey> = { RETAIL: 'retailShort', PURCHASE: 'purchaseShort' }
const importModeKey = { append: 'modeAppend', upsert: 'modeUpsert', replace: 'modeReplace' } as const satisfies Record<
  string,
  MessageKey
>

const oneOf = <T extends string>(value: unknown, allowed: Readonly<Record<T, unknown>>): value is T =>
  typeof value === 'string' && Object.hasOwn(allowed, value)
const decimalText = (value: unknown): string | undefined =>
  typeof value === 'string' || typeof value === 'number' ? String(value) : undefined

/**
 * A change of the log in words, as the price manager would say it: a bulk change by its formula and selection
 * ("розница = закупка × 2,5 − 10, до десятков; бренд «Ray-Ban»; розница от 3000 до 5000"), an upload by its mode;
 * undefined for what has no words (the parameters are then shown as they are recorded).
 */
export function describeChange(change: Pick<PriceChange, 'action' | 'parameters'>, t: Translate): string | undefined {
  const parameters = change.parameters
  // A change applied by the schedule says so, with the number of its scheduled change and its time.
  const scheduled =
    typeof parameters.scheduled === 'number' && typeof parameters.effectiveAt === 'string'
      ? [t('changeScheduled', { id: parameters.scheduled, at: formatEffective(parameters.effectiveAt, t) })]
      : []
  if (change.action === 'IMPORT') {
    const mode = parameters.mode
    return oneOf(mode, importModeKey)
      ? [t('changeImportMode', { mode: t(importModeKey[mode]).toLowerCase() }), ...scheduled].join('; ')
      : undefined
  }
  if (change.action !== 'BULK_CHANGE') return undefined
  const { priceTypeBase, priceTypeChange, round } = parameters
  if (!oneOf(priceTypeBase, priceKey) || !oneOf(priceTypeChange, priceKey) || !oneOf(round, roundingMessages)) {
    return undefined
  }
  const number = (text: string) => text.replace('.', t('decimalPoint'))
  const body: BulkChangeBody = {
    priceTypeBase,
    priceTypeChange,
    round,
    ...(decimalText(parameters.coefficient) ? { coefficient: decimalText(parameters.coefficient) } : {}),
    ...(decimalText(parameters.difference) ? { difference: decimalText(parameters.difference) } : {}),
    ...(decimalText(parameters.percent) ? { percent: decimalText(parameters.percent) } : {}),
  }
  const formula =
    `${t(priceShortKey[priceTypeChange])} = ` +
    `${expressionWords(body, t(priceShortKey[priceTypeBase]), '', number)}, ${t(roundingMessages[round].short)}` +
    (parameters.direction === 'UP' ? ` (${t('directionUpShort')})` : '')
  const range = (short: MessageKey, from: unknown, to: unknown) => {
    const [low, high] = [decimalText(from), decimalText(to)]
    if (low === undefined && high === undefined) return []
    const values = { from: number(low ?? ''), to: number(high ?? '') }
    const words = low === undefined ? 'rangeTo' : high === undefined ? 'rangeFrom' : 'rangeFromTo'
    return [`${t(short)} ${t(words, values)}`]
  }
  const filter = (parameters.filter ?? {}) as Readonly<Record<string, unknown>>
  const exact = Array.isArray(filter.exact) ? filter.exact : []
  const selection = [
    ...TEXT_FILTER_NAMES.flatMap((name) =>
      typeof filter[name] === 'string'
        ? [
            `${t(filterInput(name).label).toLowerCase()}${exact.includes(name) ? ` ${t('exactShort')}` : ''} ` +
              `«${filter[name]}»`,
          ]
        : [],
    ),
    ...FILTER_BANDS.flatMap((band) => range(band.short, filter[band.from], filter[band.to])),
    ...range(priceShortKey[priceTypeBase], parameters.priceFrom, parameters.priceTo),
  ]
  return [formula, ...selection, ...scheduled].join('; ')
}

/**
 * A scheduled upload's terms in words, "Загрузка файла «prices.csv», режим «обновить»" (the mode as the change log
 * says it); undefined when its parameters have neither a file name nor a mode it can say.
 */
export function describeScheduledUpload(
  parameters: Readonly<Record<string, unknown>>,
  t: Translate,
): string | undefined {
  const mode = describeChange({ action: 'IMPORT', parameters: { mode: parameters.mode } }, t)
  const name = typeof parameters.fileName === 'string' && parameters.fileName !== '' ? parameters.fileName : undefined
  if (mode === undefined && name === undefined) return undefined
  const file = name === undefined ? t('scheduledUploadFile') : t('scheduledUploadNamed', { name })
  return mode === undefined ? file : `${file}, ${mode}`
}
