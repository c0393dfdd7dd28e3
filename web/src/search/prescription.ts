import type { FormField } from '../api.js'
import type { MessageKey } from '../i18n/index.js'

/*
 * A prescription field checked as the API checks it (its step, least and greatest value come with the form:
 * quarter dioptres within ±30, whole degrees 0…180), so the optician sees the mistake before asking. A decimal
 * comma is read as a point. Values are compared in whole steps, never as float sums.
 */

export type Check =
  | { readonly ok: true; readonly value: string }
  | { readonly ok: false; readonly message: MessageKey; readonly values: Record<string, string | number> }

/**
 * `-2,75` → `-2.75`; the minus of print and word processors (`−` U+2212, `‒` figure dash, `–` en dash) is a minus
 * (`−2.25` → `-2.25`); blank stays blank.
 */
export const normaliseNumber = (raw: string): string =>
  raw
    .trim()
    .replace(/^[\u2212\u2012\u2013]/, '-')
    .replace(',', '.')

/** Checks a number or prescription field's text; a blank field is valid (no filter). */
export function checkNumber(field: FormField, raw: string): Check {
  const text = normaliseNumber(raw)
  if (text === '') return { ok: true, value: '' }
  const number = Number(text)
  if (!/^[-+]?(\d+\.?\d*|\.\d+)$/.test(text) || !Number.isFinite(number)) {
    return { ok: false, message: 'notANumber', values: {} }
  }
  if (field.input !== 'prescription' || field.step === undefined) return { ok: true, value: text }
  const { step, min = -Infinity, max = Infinity } = field
  if (number < min || number > max) return { ok: false, message: 'outOfRange', values: { min, max } }
  if (!Number.isInteger(number / step)) {
    return { ok: false, message: 'notInSteps', values: { step, example: step === 1 ? '90' : '-2.75' } }
  }
  return { ok: true, value: text }
}

const quarters = (text: string): number => Math.round(Number(text) * 4)
const fromQuarters = (steps: number): string => (steps > 0 ? `+${steps / 4}` : String(steps / 4))

/**
 * With a plus cylinder, what the API searches instead (minus-cylinder notation: sphere + cylinder, −cylinder,
 * axis ± 90) by field name, for the page to say so; undefined otherwise. `values` are the form's texts by field.
 */
export function transposedPrescription(
  fields: readonly FormField[],
  values: Readonly<Record<string, string>>,
): Record<string, string> | undefined {
  const read = (role: FormField['role']) => {
    const field = fields.find((candidate) => candidate.input === 'prescription' && candidate.role === role)
    const value = field ? (values[field.name] ?? '') : ''
    return field && value.trim() !== '' && checkNumber(field, value).ok
      ? { name: field.name, value: normaliseNumber(value) }
      : undefined
  }
  const cylinder = read('cylinder')
  if (!cylinder || quarters(cylinder.value) <= 0) return undefined
  const result: Record<string, string> = { [cylinder.name]: fromQuarters(-quarters(cylinder.value)) }
  const sphere = read('sphere')
  if (sphere) result[sphere.name] = fromQuarters(quarters(sphere.value) + quarters(cylinder.value))
  const axis = read('axis')
  if (axis) {
    const degrees = Number(axis.value)
    result[axis.name] = String(degrees <= 90 ? degrees + 90 : degrees - 90)
  }
  return result
}
