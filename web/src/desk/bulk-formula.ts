import { ROUNDINGS } from '../../../src/domain/roundings.js'
import type { PriceType } from '../api/types.js'
import type { MessageKey } from '../i18n/index.js'
import type { BulkChangeBody, Direction, Rounding } from './bulk-api.js'
import { effectiveInstant, normaliseDecimal, roundingMessages } from './formula.js'

/*
 * The bulk change wizard's steps and its formula as typed: the choices it offers, the request body it makes of
 * them, and where the service's field errors of that body are shown.
 */

export type Step = 1 | 2 | 3 | 4

export const STEPS: readonly { step: Step; label: MessageKey }[] = [
  { step: 1, label: 'stepSelection' },
  { step: 2, label: 'stepFormula' },
  { step: 3, label: 'stepDryRun' },
  { step: 4, label: 'stepConfirm' },
]

export interface Formula {
  readonly bandFrom: string
  readonly bandTo: string
  readonly priceTypeBase: PriceType
  readonly priceTypeChange: PriceType
  readonly coefficient: string
  readonly percent: string
  readonly difference: string
  readonly round: Rounding
  readonly direction: Direction
  /** The picker's local date and time (`2026-12-01T09:00`); blank = at once. */
  readonly effectiveAt: string
}

export const initialFormula: Formula = {
  bandFrom: '',
  bandTo: '',
  priceTypeBase: 'RETAIL',
  priceTypeChange: 'RETAIL',
  coefficient: '',
  percent: '',
  difference: '',
  round: 'WHOLE',
  direction: 'NEAREST',
  effectiveAt: '',
}

/** The roundings offered, as described (src/domain/roundings.ts). */
export const ROUNDING_OPTIONS: readonly [Rounding, MessageKey][] = ROUNDINGS.map((rounding) => [
  rounding,
  roundingMessages[rounding].choice,
])
export const DIRECTION_OPTIONS: readonly [Direction, MessageKey][] = [
  ['NEAREST', 'directionNearest'],
  ['UP', 'directionUp'],
]

/** The request body of a formula: blanks left out (a coefficient of 1, a difference of 0, no band). */
export function bodyOf(formula: Formula): BulkChangeBody {
  const effective = effectiveInstant(formula.effectiveAt)
  const optional = (name: string, raw: string) => {
    const value = normaliseDecimal(raw)
    return value === '' ? {} : { [name]: value }
  }
  return {
    ...optional('priceFrom', formula.bandFrom),
    ...optional('priceTo', formula.bandTo),
    priceTypeBase: formula.priceTypeBase,
    priceTypeChange: formula.priceTypeChange,
    ...optional('coefficient', formula.coefficient),
    ...optional('percent', formula.percent),
    ...optional('difference', formula.difference),
    round: formula.round,
    ...(formula.direction === 'UP' ? { direction: formula.direction } : {}),
    ...(effective ? { effectiveAt: effective } : {}),
  }
}

/** Where the service's field errors of the bulk change's body are shown (input ids), and on which step. */
export const bodyFieldIds: Readonly<Record<string, { id: string; step: Step }>> = {
  priceFrom: { id: 'band-priceFrom', step: 1 },
  priceTo: { id: 'band-priceTo', step: 1 },
  priceTypeBase: { id: 'base-RETAIL', step: 2 },
  priceTypeChange: { id: 'change-RETAIL', step: 2 },
  coefficient: { id: 'coefficient', step: 2 },
  percent: { id: 'percent', step: 2 },
  difference: { id: 'difference', step: 2 },
  round: { id: 'round', step: 2 },
  direction: { id: 'direction', step: 2 },
  effectiveAt: { id: 'effectiveAt', step: 2 },
}

export const reasonKey: Record<string, MessageKey> = {
  'bulk-change-rejected': 'reasonRejected',
  'nothing-selected': 'reasonNothingSelected',
  'nothing-changes': 'reasonNothingChanges',
}
