/*
 * Text as PostgreSQL sees it in this service's databases: the order of `ORDER BY` under a byte-order collation
 * ("C", "C.UTF-8": UTF-8 byte order, which is code point order), `lower()` and `optics_norm()` (trimmed spaces,
 * lower case, `ё` → `е`). JavaScript computes them itself only for ASCII text, where every database agrees; any
 * other text is normalised by the database (see loader.ts and search-index.ts), so the index and SQL never differ.
 */

export function isAscii(value: string): boolean {
  for (let index = 0; index < value.length; index++) if (value.charCodeAt(index) > 0x7f) return false
  return true
}

/** `btrim(value)`: spaces only, as PostgreSQL trims by default. */
function trimSpaces(value: string): string {
  let start = 0
  let end = value.length
  while (start < end && value.charCodeAt(start) === 32) start++
  while (end > start && value.charCodeAt(end - 1) === 32) end--
  return start === 0 && end === value.length ? value : value.slice(start, end)
}

/** `optics_norm(value)` of ASCII text (undefined for any other: the database decides). */
export function asciiNorm(value: string): string | undefined {
  return isAscii(value) ? trimSpaces(value).toLowerCase() : undefined
}

/**
 * Characters beyond ASCII that people type in goods' names: Latin-1 and Latin Extended, Cyrillic, general
 * punctuation (dashes, quotes), currency and letter-like symbols (№, ™). The index asks the database once how
 * `optics_norm` treats each of them (see {@link ProbedNorm}).
 */
const probedRanges: readonly (readonly [number, number])[] = [
  [0x00a0, 0x024f],
  [0x0400, 0x052f],
  [0x2010, 0x2027],
  [0x2030, 0x205e],
  [0x20a0, 0x20c0],
  [0x2100, 0x214f],
]

/** The single characters the database is asked about: ASCII's letters too, to learn that it agrees there. */
export function normProbeCharacters(): string[] {
  const characters: string[] = []
  for (let code = 0x41; code <= 0x5a; code++) characters.push(String.fromCharCode(code))
  for (const [from, to] of probedRanges) {
    for (let code = from; code <= to; code++) characters.push(String.fromCharCode(code))
  }
  return characters
}

/**
 * `optics_norm` (trimmed spaces, `lower`, `ё` → `е`) computed here for text beyond ASCII, on the characters where
 * the database was seen to agree. `lower` of these scripts maps each character by itself (no rule looks at its
 * neighbours, unlike the Greek final sigma, which is not among them), so agreeing on every character of a text is
 * agreeing on the text. Text with any other character is the database's to normalise.
 */
export class ProbedNorm {
  readonly #agreed = new Set<number>()
  /** Whether the database agrees on ASCII's letters (every database the index runs on should). */
  readonly asciiAgrees: boolean

  /** What it was built from: another thread builds the same one from it (replica.ts). */
  readonly probe: { readonly characters: readonly string[]; readonly answers: readonly string[] }

  /** `answers`: the database's `optics_norm` of each of {@link normProbeCharacters}, in that order. */
  constructor(characters: readonly string[], answers: readonly string[]) {
    this.probe = { characters, answers }
    let asciiAgrees = true
    characters.forEach((character, index) => {
      const agrees = localNorm(character) === answers[index]
      if (isAscii(character)) asciiAgrees &&= agrees
      else if (agrees) this.#agreed.add(character.charCodeAt(0))
    })
    this.asciiAgrees = asciiAgrees
  }

  /** `optics_norm(value)`, or undefined when the database must say. */
  norm(value: string): string | undefined {
    for (let index = 0; index < value.length; index++) {
      const code = value.charCodeAt(index)
      if (code > 0x7f && !this.#agreed.has(code)) return undefined
    }
    return localNorm(value)
  }
}

function localNorm(value: string): string {
  return trimSpaces(value).toLowerCase().replace(/ё/g, 'е')
}

/** `lower(value)` of ASCII text (undefined for any other). */
export function asciiLower(value: string): string | undefined {
  return isAscii(value) ? value.toLowerCase() : undefined
}

/**
 * Compares two strings in code point order (UTF-8 byte order), not JavaScript's UTF-16 unit order: the two differ
 * only where a character beyond U+FFFF (a surrogate pair) meets one in U+E000…U+FFFF.
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0
  const length = Math.min(a.length, b.length)
  for (let index = 0; index < length; index++) {
    let x = a.charCodeAt(index)
    let y = b.charCodeAt(index)
    if (x === y) continue
    if (x >= 0xd800 && y >= 0xd800) {
      // Surrogates (D800–DFFF) stand for code points above every unit from E000 up.
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000
    }
    return x - y
  }
  return a.length - b.length
}

/**
 * Splits `COPY … TO STDOUT (FORMAT text)` output into rows of fields: tab-separated, `\N` = NULL, backslash escapes.
 * Feed it chunks in order; it calls `onRow` for every complete line.
 */
export class CopyTextParser {
  #rest = ''
  readonly #onRow: (fields: (string | null)[]) => void

  constructor(onRow: (fields: (string | null)[]) => void) {
    this.#onRow = onRow
  }

  push(chunk: string): void {
    const text = this.#rest === '' ? chunk : this.#rest + chunk
    let start = 0
    for (;;) {
      const end = text.indexOf('\n', start)
      if (end < 0) break
      this.#line(text.slice(start, end))
      start = end + 1
    }
    this.#rest = text.slice(start)
  }

  end(): void {
    if (this.#rest !== '') this.#line(this.#rest)
    this.#rest = ''
  }

  #line(line: string): void {
    const fields: (string | null)[] = line.split('\t')
    for (let index = 0; index < fields.length; index++) {
      const field = fields[index] as string
      if (field === '\\N') fields[index] = null
      else if (field.includes('\\')) fields[index] = unescapeCopy(field)
    }
    this.#onRow(fields)
  }
}

const escapes: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' }

function unescapeCopy(field: string): string {
  return field.replace(/\\(?:([0-7]{1,3})|x([0-9a-fA-F]{1,2})|(.))/g, (_all, octal, hex, other: string) => {
    if (octal) return String.fromCharCode(Number.parseInt(octal, 8))
    if (hex) return String.fromCharCode(Number.parseInt(hex, 16))
    return escapes[other] ?? other
  })
}
