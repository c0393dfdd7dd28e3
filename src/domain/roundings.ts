/*
 * The bulk change's roundings, named once for the service (which validates `round` and `direction` with its own
 * messages, so the OpenAPI document describes them in words) and for the web app's choices.
 */

/**
 * The rounding steps and, beyond the contract, the price endings (…90, …99, …00 roubles); `TO_INT` (sent by the
 * existing front end) is an alias of `WHOLE`.
 */
export const ROUNDINGS = ['WHOLE', 'TENS', 'HUNDREDS', 'ENDS_90', 'ENDS_99', 'ENDS_00'] as const
export type Rounding = (typeof ROUNDINGS)[number]
/** Which way a value between two steps (or endings) goes: the nearest (halves up), or up to the next one. */
export const ROUNDING_DIRECTIONS = ['NEAREST', 'UP'] as const
export type RoundingDirection = (typeof ROUNDING_DIRECTIONS)[number]
