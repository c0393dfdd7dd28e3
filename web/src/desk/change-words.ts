import type { ScheduledChange } from '../api/types.js'
import type { Translate } from '../i18n/index.js'
import { describeFormula, describeScheduledUpload, isRounding } from './formula.js'

/* What the change log says of a change's or a scheduled change's parameters when it has no better words. */

/** A change's parameters in one line (`filter.manufacturer=safilo, coefficient=1.15`), nested keys dotted. */
export function parameterText(parameters: Readonly<Record<string, unknown>>, prefix = ''): string[] {
  return Object.entries(parameters).flatMap(([key, value]) => {
    if (value === null || value === undefined || value === '') return []
    if (typeof value === 'object' && !Array.isArray(value)) {
      return parameterText(value as Record<string, unknown>, `${prefix}${key}.`)
    }
    return [`${prefix}${key}=${Array.isArray(value) ? value.join(',') : String(value)}`]
  })
}

/**
 * A scheduled change's terms in words (the wizard's formula, or an upload's file and mode), or its parameters when
 * they have no words.
 */
export function formulaOf(item: ScheduledChange, t: Translate): string {
  const terms = item.parameters
  if (item.operation === 'upload') return describeScheduledUpload(terms, t) ?? parameterText(terms).join(', ')
  const text = (name: string) => (typeof terms[name] === 'string' ? (terms[name] as string) : undefined)
  const base = text('priceTypeBase')
  const change = text('priceTypeChange')
  const round = text('round')
  if ((base !== 'RETAIL' && base !== 'PURCHASE') || (change !== 'RETAIL' && change !== 'PURCHASE') || !round) {
    return parameterText(terms).join(', ')
  }
  if (!isRounding(round)) {
    return parameterText(terms).join(', ')
  }
  const optional = (name: string) => (text(name) === undefined ? {} : { [name]: text(name) })
  const filter = typeof terms.filter === 'object' && terms.filter !== null ? terms.filter : {}
  const selection = parameterText(filter as Record<string, unknown>).join(', ')
  const words = describeFormula(
    {
      priceTypeBase: base,
      priceTypeChange: change,
      round,
      ...optional('coefficient'),
      ...optional('percent'),
      ...optional('difference'),
      ...(text('direction') === 'UP' ? { direction: 'UP' as const } : {}),
    },
    t,
  )
  return selection ? `${words} (${selection})` : words
}
