import { type Message, message } from '../../domain/messages.js'
import { badRequest, type FieldError, listFieldErrors } from '../../http/problem.js'
import type { Filter, Kind, PrescriptionRole } from '../kinds/kind.js'
import type { FilterValues } from './search-query.js'

/*
 * The optician's prescription as search filters (lenses: sphere, cylinder, add; contact lenses: dioptre,
 * cylinder, axis; ready glasses: dioptre). Powers are written in quarter dioptres within ±30 and an axis in whole
 * degrees 0…180; anything else is a 400 naming the field. Price lists are written in minus-cylinder notation, so
 * a prescription with a plus cylinder is transposed first: sphere + cylinder, −cylinder, axis ± 90. The same
 * lens, written either way, finds the same goods.
 */

/** The greatest power, in dioptres either way, and the greatest axis, in degrees, a prescription may name. */
export const MAX_POWER = 30
export const MAX_AXIS = 180

type Role = PrescriptionRole

function roleFilter(kind: Kind, role: Role): Filter | undefined {
  return kind.filters.find(
    (filter) => filter.prescription && filter.match === 'covers' && filter.range.prescription === role,
  )
}

const present = (value: unknown): value is string | number =>
  value !== null && value !== undefined && String(value).trim() !== ''

/** A power in quarter dioptres (an integer), or the reason it is not one. */
function quarters(value: string | number): number | Message {
  const number = Number(String(value).trim())
  if (!Number.isFinite(number)) return message('validation.number')
  if (Math.abs(number) > MAX_POWER) return message('validation.dioptres', { max: MAX_POWER })
  const steps = number * 4
  // Quarter values are exact in binary floating point, so this test is exact too.
  if (!Number.isInteger(steps)) return message('validation.quarterDioptres')
  return steps
}

function degrees(value: string | number): number | Message {
  const number = Number(String(value).trim())
  if (!Number.isInteger(number) || number < 0 || number > MAX_AXIS) return message('validation.degrees')
  return number
}

const fromQuarters = (steps: number): string => String(steps / 4)

/**
 * Checks the prescription filters of a search body and transposes a plus-cylinder prescription to minus notation.
 * Returns the filters to search with (the others unchanged); throws a 400 listing every field at fault.
 */
export function readPrescription(kind: Kind, values: FilterValues): FilterValues {
  const errors: FieldError[] = []
  const read = new Map<Role, number>()
  for (const filter of kind.filters) {
    if (!filter.prescription || filter.match !== 'covers' || !filter.range.prescription) continue
    const value = values[filter.name]
    if (!present(value)) continue
    const role = filter.range.prescription
    const parsed = role === 'axis' ? degrees(value) : quarters(value)
    if (typeof parsed !== 'number') errors.push({ field: filter.name, message: parsed })
    else read.set(role, parsed)
  }
  if (errors.length > 0) {
    throw badRequest(message('validation.invalidPrescription', { errors: listFieldErrors(errors) }), errors)
  }
  // Every value read goes on in its canonical form ("90.0" → "90", "-2.750" → "-2.75"), as the checks read it.
  const transposed: Record<string, string | number | null | undefined> = { ...values }
  const set = (role: Role, value: string) => {
    const filter = roleFilter(kind, role)
    if (filter) transposed[filter.name] = value
  }
  for (const [role, value] of read) set(role, role === 'axis' ? String(value) : fromQuarters(value))
  const cylinder = read.get('cylinder')
  if (cylinder === undefined || cylinder <= 0) return transposed

  const sphere = read.get('sphere')
  if (sphere !== undefined) set('sphere', fromQuarters(sphere + cylinder))
  set('cylinder', fromQuarters(-cylinder))
  const axis = read.get('axis')
  if (axis !== undefined) set('axis', String(axis <= 90 ? axis + 90 : axis - 90))
  return transposed
}
