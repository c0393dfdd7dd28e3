import { parse as parseLosslessJson } from 'lossless-json'
import { parseDecimal } from '../domain/decimal.js'
import { canonicalText } from '../domain/key-text.js'

/*
 * The one conversion step before validation: a request's values are read the way the Spring service read them,
 * driven by the type each field declares in its route schema, so the validator then sees the canonical request.
 *
 * JSON bodies, as Jackson 2.15 coerces by default (`CoercionConfigs`, `StdDeserializer._parseBoolean`,
 * `_parseString`, the BigDecimal deserializer):
 *   numbers   ""/blank/"null" → null; a numeric string is trimmed and read, exponent included ("1.29e3" → "1290",
 *             as exact decimal text, never through a float); a JSON number a float cannot hold exactly keeps its
 *             digits as text (BigDecimal reads them all); anything else is left for validation to refuse
 *   text      a JSON number or boolean → its text as written (1307 → "1307", 1.50 → "1.50")
 *   booleans  "true"/"True"/"TRUE" and "false"/"False"/"FALSE" (trimmed); integers: 0 = false, others true;
 *             ""/blank/"null" → null (so a required `byPriceList` still refuses it)
 * Arrays and objects where a scalar is expected, other words for booleans, and enum values in another case are
 * left as they are and refused by validation, as Jackson refuses them.
 *
 * Query parameters, as Spring's converters read them (`StringToEnumConverterFactory`, `StringToNumberConverterFactory`
 * with `NumberUtils.parseNumber`, `StringToBooleanConverter`):
 *   every typed (non-text) parameter: "" → absent
 *   enums     trimmed
 *   numbers   every whitespace character removed ("1 300" → "1300"), exponent read ("1.3e3" → "1300");
 *             nothing left → absent (blank means no filter)
 *   integers  the same, decimal or hexadecimal (0x…, #…)
 *   booleans  true/on/yes/1, false/off/no/0 in any case, trimmed
 *   lists     a single value is a list of one
 * Text, in bodies and query strings alike, is brought to its one form (domain/key-text.ts: invisible characters
 * removed, no-break spaces made spaces, NFKC, one script per word), so a key typed with a no-break space or in decomposed form is the
 * same key, and a filter typed so finds it. Spring converted nothing for a String; this is the one departure.
 */

type FieldKind = 'decimal' | 'integer' | 'boolean' | 'enum' | 'text' | 'list'

/** A declared type: JSON Schema's `type` (one or several), `enum` and `format` (`decimal` marks exact decimals). */
interface DeclaredSchema {
  readonly type?: string | readonly string[]
  readonly enum?: readonly unknown[]
  readonly format?: string
  readonly properties?: Readonly<Record<string, DeclaredSchema>>
}

function kindOf(schema: DeclaredSchema): FieldKind | undefined {
  const types = schema.type === undefined ? [] : typeof schema.type === 'string' ? [schema.type] : schema.type
  if (types.includes('array')) return types.includes('string') ? undefined : 'list'
  if (schema.format === 'decimal' || types.includes('number')) return 'decimal'
  if (types.includes('integer')) return 'integer'
  if (types.includes('boolean')) return 'boolean'
  if (schema.enum?.every((value) => typeof value === 'string')) return 'enum'
  if (types.includes('string')) return 'text'
  return undefined
}

/** What a conversion answers for a value that is to be dropped (a query parameter read as absent). */
const ABSENT = Symbol('absent')
type Converted = unknown | typeof ABSENT
/** Converts one value; `sourceText` gives a JSON number's text as written in the body (undefined elsewhere). */
type Converter = (value: unknown, sourceText: () => string | undefined) => Converted

/** Jackson's exact decimal: the canonical text of a numeric string, null for the empty and textual null. */
function bodyDecimal(value: unknown, sourceText: () => string | undefined): Converted {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return value
    const written = sourceText()
    const exact = written === undefined ? undefined : parseDecimal(written)
    // A float that holds the number exactly stays a number; one that lost digits gives way to the digits.
    return exact && exact.text !== parseDecimal(value)?.text ? exact.text : value
  }
  if (typeof value !== 'string') return value
  const text = value.trim()
  if (text === '' || text === 'null') return null
  return parseDecimal(text)?.text ?? value
}

function bodyText(value: unknown, sourceText: () => string | undefined): Converted {
  if (typeof value === 'number') return sourceText() ?? String(value)
  if (typeof value === 'string') return canonicalText(value)
  return typeof value === 'boolean' ? String(value) : value
}

const jacksonTrue = new Set(['true', 'True', 'TRUE'])
const jacksonFalse = new Set(['false', 'False', 'FALSE'])

function bodyBoolean(value: unknown): Converted {
  if (typeof value === 'number') return Number.isInteger(value) ? value !== 0 : value
  if (typeof value !== 'string') return value
  const text = value.trim()
  if (jacksonTrue.has(text)) return true
  if (jacksonFalse.has(text)) return false
  if (text === '' || text === 'null') return null
  return value
}

const bodyConverters: Partial<Record<FieldKind, Converter>> = {
  decimal: bodyDecimal,
  text: bodyText,
  boolean: bodyBoolean,
}

/** Java's `Character.isWhitespace`: Unicode spaces except the no-break ones, and the ASCII controls it names. */
const javaWhitespace = new Set(
  [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x1680, 0x2028, 0x2029, 0x205f, 0x3000]
    .concat([0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2008, 0x2009, 0x200a])
    .map((code) => String.fromCharCode(code)),
)

/** Spring's `StringUtils.trimAllWhitespace`; undefined when nothing is left. */
function withoutWhitespace(value: string): string | undefined {
  let text = ''
  for (const character of value) if (!javaWhitespace.has(character)) text += character
  return text === '' ? undefined : text
}

function queryDecimal(value: string): Converted {
  const text = withoutWhitespace(value)
  if (text === undefined) return ABSENT
  return parseDecimal(text)?.text ?? value
}

function queryInteger(value: string): Converted {
  const text = withoutWhitespace(value)
  if (text === undefined) return ABSENT
  const hex = /^([+-]?)(?:0x|#)([0-9a-f]+)$/i.exec(text)
  const number = hex ? Number.parseInt(`${hex[1]}${hex[2]}`, 16) : /^[+-]?\d+$/.test(text) ? Number(text) : Number.NaN
  return Number.isSafeInteger(number) ? number : value
}

const springTrue = new Set(['true', 'on', 'yes', '1'])
const springFalse = new Set(['false', 'off', 'no', '0'])

function queryBoolean(value: string): Converted {
  const text = value.trim().toLowerCase()
  if (text === '') return ABSENT
  if (springTrue.has(text)) return true
  if (springFalse.has(text)) return false
  return value
}

/**
 * True when the query string's parameter `name` reads as `true` by the rules above, before any route converts it
 * (one value; absent, repeated, false or another word is not).
 */
export function queryFlag(query: unknown, name: string): boolean {
  const value: unknown = typeof query === 'object' && query !== null ? Reflect.get(query, name) : undefined
  return typeof value === 'string' && queryBoolean(value) === true
}

const queryConverters: Partial<Record<FieldKind, (value: string) => Converted>> = {
  decimal: queryDecimal,
  integer: queryInteger,
  boolean: queryBoolean,
  enum: (value) => value.trim(),
}

/** The text each JSON body was parsed from, kept by its parsed object until its numbers are read. */
const bodyTexts = new WeakMap<object, string>()

/**
 * Keeps the text a JSON body was parsed from, so its conversion can read numbers as written (`JSON.parse` keeps
 * only a float). Call it from the body parser with the parsed value.
 */
export function keepBodyText(body: unknown, text: string): void {
  if (body !== null && typeof body === 'object') bodyTexts.set(body, text)
}

class NumberText {
  constructor(readonly text: string) {}
}

/** Reads a body's top-level numbers as written, on first need (most bodies never need it). */
function numberTextsOf(body: object): (name: string) => string | undefined {
  let numbers: Record<string, unknown> | null | undefined
  return (name) => {
    if (numbers === undefined) {
      const text = bodyTexts.get(body)
      try {
        const parsed = text === undefined ? null : parseLosslessJson(text, null, (digits) => new NumberText(digits))
        numbers = parsed !== null && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : null
      } catch {
        // Duplicate keys (JSON.parse keeps the last): the float stands.
        numbers = null
      }
    }
    const value = numbers && Object.hasOwn(numbers, name) ? numbers[name] : undefined
    return value instanceof NumberText ? value.text : undefined
  }
}

function queryConverter(kind: FieldKind): Converter | undefined {
  if (kind === 'list') return (value) => (typeof value === 'string' ? [value] : value)
  if (kind === 'text') return (value) => (typeof value === 'string' ? canonicalText(value) : value)
  const convert = queryConverters[kind]
  return (value) => {
    if (typeof value !== 'string') return value
    if (value === '') return ABSENT
    return convert ? convert(value) : value
  }
}

/** The conversions of one object schema's properties; empty when there is nothing to convert. */
type Plan = ReadonlyMap<string, Converter>

function planOf(schema: DeclaredSchema | undefined, side: 'body' | 'query'): Plan {
  const plan = new Map<string, Converter>()
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const kind = kindOf(property)
    if (kind === undefined) continue
    const convert = side === 'body' ? bodyConverters[kind] : queryConverter(kind)
    if (convert) plan.set(name, convert)
  }
  return plan
}

function applyPlan(plan: Plan, value: unknown): unknown {
  if (plan.size === 0 || value === null || typeof value !== 'object' || Array.isArray(value)) return value
  const converted: Record<string, unknown> = { ...(value as Record<string, unknown>) }
  const numberText = numberTextsOf(value)
  for (const [name, convert] of plan) {
    if (!Object.hasOwn(converted, name)) continue
    const result = convert(converted[name], () => numberText(name))
    if (result === ABSENT) delete converted[name]
    else converted[name] = result
  }
  return converted
}

const plans = { body: new WeakMap<object, Plan>(), query: new WeakMap<object, Plan>() }

function cachedPlan(schema: object, side: 'body' | 'query'): Plan {
  let plan = plans[side].get(schema)
  if (!plan) {
    plan = planOf(schema as DeclaredSchema, side)
    plans[side].set(schema, plan)
  }
  return plan
}

/**
 * A JSON body converted as Jackson reads it into the body schema's declared types. Returns a new object (the
 * parsed body is not changed); anything but an object is returned as it is.
 */
export function convertBody(schema: object, body: unknown): unknown {
  return applyPlan(cachedPlan(schema, 'body'), body)
}

/** Query parameters converted as Spring reads them into the query schema's declared types; a new object. */
export function convertQuery(schema: object, query: unknown): unknown {
  return applyPlan(cachedPlan(schema, 'query'), query)
}
