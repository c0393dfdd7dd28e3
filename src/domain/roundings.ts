/*
 * The bulk change's roundings, described once: the service validates `round` and `direction` with its own
 * messages and computes each rounding in SQL from its step and ending, the OpenAPI document describes them in words
 * made from this list, and the web app offers them as choices and says them in words (its message keys are named
 * here). A rounding is added here, with its translations, and nowhere else.
 */

/**
 * A rounding: a rounded value is `k × step + ending` for a whole `k` (roubles). A rounding without an `ending` is a
 * step (its values are its multiples); one with an ending is a price ending (…90, …99, …00). `contract`: the
 * contract names it (the others are beyond it). `messages`: the desk's message key of its choice; the keys of its
 * words and of its short words are that key with `Words` and `Short` after it (web/src/i18n).
 */
export interface RoundingRule {
  readonly name: string
  readonly step: number
  readonly ending?: number
  readonly contract?: boolean
  readonly messages: string
}

/** The roundings, in the order they are offered; `TO_INT` (sent by the existing front end) is an alias of `WHOLE`. */
export const ROUNDING_RULES = [
  { name: 'WHOLE', step: 1, contract: true, messages: 'roundWhole' },
  { name: 'TENS', step: 10, contract: true, messages: 'roundTens' },
  { name: 'HUNDREDS', step: 100, contract: true, messages: 'roundHundreds' },
  { name: 'ENDS_90', step: 100, ending: 90, messages: 'roundEnds90' },
  { name: 'ENDS_99', step: 100, ending: 99, messages: 'roundEnds99' },
  { name: 'ENDS_00', step: 100, ending: 0, messages: 'roundEnds00' },
] as const satisfies readonly RoundingRule[]

export type Rounding = (typeof ROUNDING_RULES)[number]['name']
/** The roundings' names, in the description's order. */
export const ROUNDINGS: readonly Rounding[] = ROUNDING_RULES.map((rule) => rule.name)

/** The rule of a rounding. */
export const roundingRule = (rounding: Rounding): RoundingRule =>
  ROUNDING_RULES.find((rule) => rule.name === rounding) as RoundingRule

/** Which way a value between two steps (or endings) goes: the nearest (halves up), or up to the next one. */
export const ROUNDING_DIRECTIONS = ['NEAREST', 'UP'] as const
export type RoundingDirection = (typeof ROUNDING_DIRECTIONS)[number]
