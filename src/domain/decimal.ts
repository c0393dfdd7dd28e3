/*
 * Decimal inputs read as text: a money value arrives as a JSON number or a numeric string, and is checked
 * (scale, bounds, order) on its digits, never through a float. Arithmetic stays in SQL `numeric`; what leaves
 * this module is canonical decimal text for a `::numeric` parameter.
 */

import { type Message, message } from './messages.js'

/** A decimal as its digits: `integer` without leading zeros ("0" for none), `fraction` without trailing zeros. */
export interface DecimalValue {
  readonly negative: boolean
  readonly integer: string
  readonly fraction: string
  /** Canonical text: `-12.5`, `0`, `1500`; what SQL receives. */
  readonly text: string
}

const plainPattern = /^([+-]?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i

/**
 * Reads a JSON number or a numeric string exactly. A number is read through its shortest round-trip text
 * (`String(1.15)` is `"1.15"`), including the exponent form JavaScript uses for very small or large numbers.
 * Returns undefined when the input is not a finite decimal.
 */
export function parseDecimal(value: number | string): DecimalValue | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) return undefined
  const text = (typeof value === 'number' ? String(value) : value).trim()
  const match = plainPattern.exec(text)
  if (!match) return undefined
  const [, sign = '', integerDigits = '', fractionDigits = '', exponentText] = match
  if (integerDigits === '' && fractionDigits === '') return undefined
  const exponent = exponentText === undefined ? 0 : Number(exponentText)
  // An absurd exponent is not a price; refusing it also keeps the expansion below small.
  if (!Number.isSafeInteger(exponent) || Math.abs(exponent) > 400) return undefined

  let digits = integerDigits + fractionDigits
  let point = integerDigits.length + exponent
  if (point < 0) {
    digits = '0'.repeat(-point) + digits
    point = 0
  } else if (point > digits.length) {
    digits = digits + '0'.repeat(point - digits.length)
  }
  const integer = digits.slice(0, point).replace(/^0+/, '') || '0'
  const fraction = digits.slice(point).replace(/0+$/, '')
  const negative = sign === '-' && (integer !== '0' || fraction !== '')
  const body = fraction === '' ? integer : `${integer}.${fraction}`
  return { negative, integer, fraction, text: negative ? `-${body}` : body }
}

function compareMagnitude(a: DecimalValue, b: DecimalValue): number {
  if (a.integer.length !== b.integer.length) return a.integer.length < b.integer.length ? -1 : 1
  if (a.integer !== b.integer) return a.integer < b.integer ? -1 : 1
  const length = Math.max(a.fraction.length, b.fraction.length)
  const fa = a.fraction.padEnd(length, '0')
  const fb = b.fraction.padEnd(length, '0')
  return fa === fb ? 0 : fa < fb ? -1 : 1
}

/** Orders two decimals exactly: negative when `a < b`, 0 when equal, positive when `a > b`. */
export function compareDecimal(a: DecimalValue, b: DecimalValue): number {
  if (a.negative !== b.negative) return a.negative ? -1 : 1
  const magnitude = compareMagnitude(a, b)
  // Equal negatives compare as 0, never as -0 (which `Object.is` and a strict test tell apart from 0).
  return a.negative && magnitude !== 0 ? -magnitude : magnitude
}

export interface DecimalRule {
  /** Inclusive bounds, as decimal text. */
  readonly min?: string
  readonly max?: string
  /** Exclusive lower bound (`> 0`). */
  readonly above?: string
  /** The most digits after the point. */
  readonly scale?: number
}

/**
 * Checks a decimal input against a rule; returns the value, or the message saying what is wrong with it
 * (for a `{field, message}` validation error).
 */
export function checkDecimal(input: number | string, rule: DecimalRule): DecimalValue | Message {
  const value = parseDecimal(input)
  if (!value) return message('validation.number')
  if (rule.scale !== undefined && value.fraction.length > rule.scale) {
    return rule.scale === 0
      ? message('validation.wholeNumber')
      : message('validation.decimalPlaces', { scale: rule.scale })
  }
  const bound = (text: string) => parseDecimal(text)!
  if (rule.above !== undefined && compareDecimal(value, bound(rule.above)) <= 0) {
    return message('validation.greaterThan', { bound: rule.above })
  }
  if (rule.min !== undefined && compareDecimal(value, bound(rule.min)) < 0) {
    return rule.max === undefined
      ? message('validation.atLeast', { min: rule.min })
      : message('validation.between', { min: rule.min, max: rule.max })
  }
  if (rule.max !== undefined && compareDecimal(value, bound(rule.max)) > 0) {
    return rule.min === undefined
      ? message('validation.atMost', { max: rule.max })
      : message('validation.between', { min: rule.min, max: rule.max })
  }
  return value
}

/*
 * Decimal text as files bring it, checked by syntax first (transfer/transfer-columns.ts): canonical without
 * parsing into parts, so a million cells stay cheap.
 */

/** `+01.50` → `1.50`, `.5` → `0.5`, `-0` → `0`: the same number, written one way. */
export function canonicalDecimal(text: string): string {
  // Already canonical: starts with a digit 1-9 and does not end with the point (the syntax is checked before).
  const first = text.charCodeAt(0)
  if (first >= 49 && first <= 57 && text.charCodeAt(text.length - 1) !== 46) return text
  const negative = text.startsWith('-')
  const unsigned = text.replace(/^[-+]/, '')
  let [whole = '', fraction = ''] = unsigned.split('.')
  whole = whole.replace(/^0+(?=\d)/, '') || '0'
  const result = fraction ? `${whole}.${fraction}` : whole
  return negative && /[1-9]/.test(result) ? `-${result}` : result
}

/** Compares two canonical decimals exactly (no floating point). */
export function compareDecimals(a: string, b: string): number {
  const scale = Math.max(decimals(a), decimals(b))
  const scaled = (value: string) => BigInt(value.replace('.', '') + '0'.repeat(scale - decimals(value)))
  const difference = scaled(a) - scaled(b)
  return difference < 0n ? -1 : difference > 0n ? 1 : 0
}

function decimals(value: string): number {
  const point = value.indexOf('.')
  return point === -1 ? 0 : value.length - point - 1
}

/** A decimal as a key: equal numbers give equal keys (1.6 and 1.60). */
export function decimalKey(value: string): string {
  return value.includes('.') ? value.replace(/0+$/, '').replace(/\.$/, '') : value
}

/** A decimal as an integer of its units at `scale` decimals (`12.5` at 2 → 1250n); `scale` ≥ its own decimals. */
function scaledInteger(value: DecimalValue, scale: number): bigint {
  const units = BigInt(value.integer + value.fraction.padEnd(scale, '0'))
  return value.negative ? -units : units
}

/**
 * The markup of a price over its purchase price in percent, (price − purchase) / purchase × 100, computed exactly
 * (integers of the prices' smallest unit) and rounded to `places` decimals, halves away from zero, as PostgreSQL's
 * `round` does: `markupPercent(150, 100)` is `50.0`, of 1 over 3 `-66.7`. Undefined when the purchase is 0 (or
 * either is not a decimal): a markup over nothing is no number.
 */
export function markupPercent(price: number | string, purchase: number | string, places = 1): string | undefined {
  const retail = parseDecimal(price)
  const cost = parseDecimal(purchase)
  if (!retail || !cost) return undefined
  const scale = Math.max(retail.fraction.length, cost.fraction.length)
  const divisor = scaledInteger(cost, scale)
  if (divisor === 0n) return undefined
  const dividend = (scaledInteger(retail, scale) - divisor) * 100n * 10n ** BigInt(places)
  const magnitude = (value: bigint) => (value < 0n ? -value : value)
  let quotient = magnitude(dividend) / magnitude(divisor)
  if (2n * (magnitude(dividend) % magnitude(divisor)) >= magnitude(divisor)) quotient += 1n
  const negative = dividend < 0n !== divisor < 0n && quotient !== 0n
  const digits = quotient.toString().padStart(places + 1, '0')
  const whole = digits.slice(0, digits.length - places)
  const text = places > 0 ? `${whole}.${digits.slice(digits.length - places)}` : whole
  return negative ? `-${text}` : text
}
