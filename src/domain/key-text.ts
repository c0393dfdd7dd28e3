/*
 * One spelling per key. Text that prints the same must compare the same, so every door that writes or searches
 * keys (JSON bodies, query strings, CSV imports over HTTP and the CLI) brings text to one form before anything
 * compares it:
 *   - invisible characters are removed: zero-width space, non-joiner and joiner (U+200B–U+200D), the left-to-right
 *     and right-to-left marks (U+200E, U+200F, U+061C), the word joiner and invisible operators (U+2060–U+2064),
 *     the zero-width no-break space / byte order mark (U+FEFF), the soft hyphen (U+00AD) and U+180E;
 *   - no-break spaces become spaces (U+00A0, U+2007 figure space, U+202F narrow no-break space);
 *   - then Unicode NFKC: a letter with a combining accent and its precomposed form are one text, and so are the
 *     compatibility forms and what they stand for (fullwidth `５２` and `52`, the ligature `ﬁ` and `fi`);
 *   - then a word (a run of Latin and Cyrillic letters, digits and combining accents) that mixes Latin and
 *     Cyrillic letters is written in one script, its look-alike letters ({@link LOOK_ALIKES}: Cyrillic `а` and
 *     Latin `a`, `Р` and `P`, …) taking that script's form: Cyrillic when each Latin letter of the word has a
 *     Cyrillic look-alike and one of its Cyrillic letters has none (`Мoсква` with a Latin `o`), Latin otherwise
 *     (`Rаy-Ban` with a Cyrillic `а`). A word in one script stays as it is: `ТОР` in Cyrillic is not `TOP`.
 * What cannot be made safe is refused where a key is written (`keyTextProblem`): an unpaired surrogate (no
 * character at all; PostgreSQL would store U+FFFD), U+FFFD itself (what invalid UTF-8 decodes to) and the bidi
 * embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which make text print in another order than
 * it compares.
 *
 * The database's `optics_norm` (trim, lower case, ё → е) then applies on top, as before. `optics_key_text` is the
 * same form in SQL (migration 0011-confusable-keys, which brought the keys stored earlier to it, as
 * 0007-look-alike-keys did for the form without NFKC and scripts).
 */

import { type Message, message } from './messages.js'

const invisible = /[\u00ad\u061c\u180e\u200b-\u200f\u2060-\u2064\ufeff]/g
const noBreakSpaces = /[\u00a0\u2007\u202f]/g
/** Bidi embeddings, overrides (U+202A–U+202E) and isolates (U+2066–U+2069). */
const bidiControls = /[\u202a-\u202e\u2066-\u2069]/
/** In a `u` regular expression a surrogate range matches only surrogates that do not form a pair. */
const loneSurrogate = /[\ud800-\udfff]/u

/**
 * Cyrillic letters and the Latin letters they print as, pair by pair (case matters: `В` looks like `B`, `в` like
 * no Latin letter). The SQL twin (migration 0011-confusable-keys) holds the same two strings.
 */
export const LOOK_ALIKES = {
  cyrillic: 'АВЕКМНОРСТХЅІЈҮԚԜЁЇаеорсухѕіјһԛԝёї',
  latin: 'ABEKMHOPCTXSIJYQWËÏaeopcyxsijhqwëï',
} as const

/** Latin letters (ASCII, Latin-1 and Latin Extended-A/B), Cyrillic letters, and what a word is made of. */
const latinLetter = /[A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f]/
const cyrillicLetter = /[\u0400-\u052f]/
const word = /(?:[0-9A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0400-\u052f]|[\u0300-\u036f])+/g

const toLatin = new Map([...LOOK_ALIKES.cyrillic].map((c, index) => [c, LOOK_ALIKES.latin[index] as string]))
const toCyrillic = new Map([...LOOK_ALIKES.latin].map((c, index) => [c, LOOK_ALIKES.cyrillic[index] as string]))

const translate = (text: string, map: ReadonlyMap<string, string>) => {
  let result = ''
  for (const character of text) result += map.get(character) ?? character
  return result
}
const withoutKeys = (text: string, map: ReadonlyMap<string, string>) => [...text].filter((c) => !map.has(c)).join('')

/** One word in one script (see the comment at the top). */
function oneScript(text: string): string {
  if (!latinLetter.test(text) || !cyrillicLetter.test(text)) return text
  const cyrillic = cyrillicLetter.test(withoutKeys(text, toLatin)) && !latinLetter.test(withoutKeys(text, toCyrillic))
  return translate(text, cyrillic ? toCyrillic : toLatin)
}

function isAscii(value: string): boolean {
  for (let index = 0; index < value.length; index++) if (value.charCodeAt(index) > 0x7f) return false
  return true
}

/**
 * The one form of a key or of a filter on keys: invisible characters removed, no-break spaces made spaces, NFKC,
 * one script per word. Idempotent; ASCII text comes back as it is. Does not trim (callers trim as their field's
 * rule says).
 */
export function canonicalText(value: string): string {
  if (isAscii(value)) return value
  return value.replace(invisible, '').replace(noBreakSpaces, ' ').normalize('NFKC').replace(word, oneScript)
}

/** Whether the string holds a UTF-16 surrogate without its pair (no character; not valid Unicode text). */
export function hasLoneSurrogate(value: string): boolean {
  return !isAscii(value) && loneSurrogate.test(value)
}

/**
 * Why a key's text cannot be stored (after {@link canonicalText}), or undefined when it can. The message follows
 * the field's name: `model must not contain …`.
 */
export function keyTextProblem(value: string): Message | undefined {
  if (isAscii(value)) return undefined
  if (loneSurrogate.test(value)) return message('validation.loneSurrogate')
  if (value.includes('\ufffd')) return message('validation.replacementCharacter')
  if (bidiControls.test(value)) {
    return message('validation.bidiControls')
  }
  return undefined
}
