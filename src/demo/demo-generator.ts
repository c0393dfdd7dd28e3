import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64'
import { uniformInt } from 'pure-rand/distribution/uniformInt'
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus'
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator'
import { entryFieldColumns } from '../catalog/freshness/catalog-repository.js'
import type { Kind } from '../catalog/kinds/kind.js'
import { normaliseKeyText } from '../catalog/kinds/kind-schema.js'

/*
 * The demo catalogue's engine, shared by the kinds. A kind's recipe (demo-recipes.ts; generic-recipe.ts for a kind
 * without one) is data plus a small function that describes product number `index`: the values every entry and SKU
 * of the product carries, its price-list entries (power zones, dioptre bands, variant prices) and the options its
 * SKUs pick from. Everything else happens here, the same way for every kind: SKUs placed on the grid inside a zone
 * of their product, EAN-13 barcodes, purchase prices, about 5% unpriced SKUs and 5% entries without SKUs, and the
 * guarantee that no two entries collide on the price list's unique key.
 */

export type DemoValue = string | number | null
export type DemoValues = Readonly<Record<string, DemoValue>>
/** A row by API field names, as `insertPriceEntries` / `insertSkus` and the loader take it. */
export type DemoRow = Record<string, DemoValue>

export interface EntryPlan {
  /** Values this entry sets beyond the product's (a variant price: `lensesType` polarized, `diameter` 80). */
  readonly values?: DemoValues
  /** Bounds by range name (`sphere: [-4, 0]`), inclusive. */
  readonly ranges?: Readonly<Record<string, readonly [number, number]>>
  /** Retail price in whole roubles. */
  readonly price: number
  /** Grid steps of SKU points inside this entry, by range name (overrides the product's). */
  readonly steps?: Readonly<Record<string, number>>
}

export interface ProductPlan {
  /** Attribute values every entry and SKU of the product carries: the product's identity. */
  readonly values: DemoValues
  /** Values every SKU of the product carries that its entries leave open (a frame model's shape and material). */
  readonly skuValues?: DemoValues
  /** The product's price-list entries; at least one. Every SKU lies inside one of them. */
  readonly entries: readonly EntryPlan[]
  /** Per SKU attribute, the values a SKU picks one of (colour, size, lens type …). */
  readonly options?: Readonly<Record<string, readonly DemoValue[]>>
  /** Whether SKUs carry the kind's optional range points (a stock lens's sphere) or leave them out (made to order). */
  readonly concrete?: boolean
  /** How many SKUs to make at density 1 (fewer when the grid has fewer distinct points). */
  readonly skus: number
  /** At most this many SKUs whatever the density. */
  readonly maxSkus?: number
  /** Whether SKUs must differ in their attributes; false allows twins that differ only by barcode (base curves). */
  readonly distinct?: boolean
  /** Grid steps of SKU points by range name; default 0.25 (dioptres). */
  readonly steps?: Readonly<Record<string, number>>
}

/** One kind's demo data: the per-kind tables live in the recipe, the code path is this module's. */
export interface DemoRecipe {
  readonly kind: Kind
  /** Four digits that start every barcode of the kind (a GS1-like prefix), so barcodes never collide. */
  readonly barcodePrefix: string
  /**
   * Scale from which products grow denser (more SKUs each, up to their grid) instead of more numerous; unset for
   * kinds whose product names never run out (model codes).
   */
  readonly denseFrom?: number
  /** Describes product number `index`. Distinct indices must give distinct entry keys. */
  product(index: number, random: Random, density: number): ProductPlan
}

/** A seeded pseudo-random source (xoroshiro128+ of pure-rand): the same seed gives the same sequence. */
export class Random {
  readonly #rng: RandomGenerator

  constructor(seed: number) {
    this.#rng = xoroshiro128plus(seed | 0)
  }

  /** An integer in [from, to]. */
  int(from: number, to: number): number {
    return uniformInt(this.#rng, from, to)
  }

  /** A float in [0, 1). */
  float(): number {
    return uniformFloat64(this.#rng)
  }

  chance(probability: number): boolean {
    return this.float() < probability
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list')
    return items[this.int(0, items.length - 1)] as T
  }

  /** `count` distinct items (fewer if the list is shorter), in list order. */
  sample<T>(items: readonly T[], count: number): T[] {
    const indices = items.map((_, i) => i)
    for (let i = indices.length - 1; i > 0; i--) {
      const j = this.int(0, i)
      ;[indices[i], indices[j]] = [indices[j] as number, indices[i] as number]
    }
    return indices
      .slice(0, Math.min(count, items.length))
      .sort((a, b) => a - b)
      .map((i) => items[i] as T)
  }
}

/** A 32-bit seed from a text (FNV-1a), so each kind has its own sequence under one catalogue seed. */
function hashSeed(text: string, seed: number): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193) >>> 0
  }
  return hash | 0
}

/** The EAN-13 check digit of 12 digits. */
export function ean13CheckDigit(digits12: string): number {
  let sum = 0
  for (let i = 0; i < 12; i++) sum += Number(digits12[i]) * (i % 2 === 0 ? 1 : 3)
  return (10 - (sum % 10)) % 10
}

/** A valid EAN-13: the 4-digit prefix, an 8-digit serial number, the check digit. */
function ean13(prefix: string, serial: number): string {
  const digits = `${prefix}${String(serial).padStart(8, '0')}`
  return `${digits}${ean13CheckDigit(digits)}`
}

/**
 * A shelf price: rounded up to a step that grows with the amount, ending in 90 from a thousand up
 * (490, 2 450, 14 990). Integer arithmetic only.
 */
export function shelfPrice(amount: number): number {
  const whole = Math.max(1, Math.round(amount))
  if (whole < 1000) return Math.ceil(whole / 10) * 10
  if (whole < 5000) return Math.ceil(whole / 50) * 50
  const step = whole < 20000 ? 100 : 1000
  return Math.ceil(whole / step) * step - 10
}

/** Purchase price: retail divided by a mark-up factor of 1.8–3.0, rounded to tens (integer arithmetic). */
function purchasePrice(retail: number, random: Random): number {
  const markupPermille = random.int(1800, 3000)
  return Math.max(10, Math.round((retail * 100) / markupPermille) * 10)
}

const entryKeyNames = new WeakMap<Kind, string[]>()

/** The unique key of a price-list entry (keys and bounds, NULLs equal), as the unique index sees it. */
export function entryKey(kind: Kind, entry: Readonly<Record<string, unknown>>): string {
  let names = entryKeyNames.get(kind)
  if (!names) {
    names = entryFieldColumns(kind)
      .map(([name]) => name)
      .filter((name) => name !== 'price' && name !== 'purchase')
    entryKeyNames.set(kind, names)
  }
  const parts: string[] = []
  for (const name of names) {
    const value = entry[name]
    if (value === null || value === undefined || value === '') parts.push('\u0000')
    else if (typeof value === 'number') parts.push(String(value))
    else parts.push(normaliseKeyText(String(value)))
  }
  return parts.join('\u0001')
}

/** A random point of the grid from..to by step, as an exact decimal (integer hundredths underneath). */
function gridPoint(random: Random, from: number, to: number, step: number): number {
  const first = Math.round(from * 100)
  const last = Math.round(to * 100)
  const increment = Math.max(1, Math.round(step * 100))
  // Points sit on multiples of the step, as a lab's grid does (−2.25, not −2.13).
  const start = Math.ceil(first / increment) * increment
  const count = Math.floor((last - start) / increment) + 1
  return count > 0 ? (start + increment * random.int(0, count - 1)) / 100 : first / 100
}

export interface GeneratedProduct {
  readonly entries: readonly DemoRow[]
  readonly skus: readonly DemoRow[]
}

export interface GenerateOptions {
  readonly seed: number
  /** About this many SKUs (exactly, unless the last product runs out of grid). */
  readonly scale: number
}

/** The share of SKUs left without a price, and of entries left without SKUs. */
const UNPRICED_SHARE = 0.05
const UNSOLD_SHARE = 0.05

/**
 * Generates a kind's demo catalogue, product by product: the same recipe, seed and scale give the same rows in the
 * same order, and a smaller scale gives a prefix of a larger one (up to density). Rows are keyed by API names;
 * SKUs carry barcodes, entries carry `price` and `purchase`.
 */
export function* generateCatalogue(recipe: DemoRecipe, options: GenerateOptions): Generator<GeneratedProduct> {
  const { kind } = recipe
  const random = new Random(hashSeed(kind.path, options.seed))
  const density = recipe.denseFrom ? Math.max(1, options.scale / recipe.denseFrom) : 1
  const seenEntries = new Set<string>()
  let skuCount = 0
  let unpricedSkus = 0
  let entryCount = 0
  let unsoldEntries = 0
  let barcodeSerial = 0

  for (let index = 0; skuCount < options.scale; index++) {
    if (index > options.scale * 10 + 1000) throw new Error(`demo ${kind.path}: the recipe stopped making SKUs`)
    const plan = recipe.product(index, random, density)
    const entries = plan.entries.map((entry) => entryRow(kind, plan, entry, random))
    const keys = entries.map((entry) => entryKey(kind, entry))
    // By construction products do not collide; a collision would break the unique index, so it is skipped.
    if (keys.some((key) => seenEntries.has(key)) || new Set(keys).size !== keys.length) continue

    const skus = skuRows(kind, plan, random, density).slice(0, options.scale - skuCount)
    // Deficits keep both shares near 5% at any scale; the random factor spreads the chosen products out.
    const unpriced =
      skus.length > 0 &&
      UNPRICED_SHARE * (skuCount + skus.length) - unpricedSkus >= skus.length * (0.5 + random.float())
    const unsold =
      !unpriced &&
      UNSOLD_SHARE * (entryCount + entries.length) - unsoldEntries >= entries.length * (0.5 + random.float())

    const product: GeneratedProduct = {
      entries: unpriced ? [] : entries,
      skus: unsold ? [] : skus.map((sku) => ({ barcode: ean13(recipe.barcodePrefix, ++barcodeSerial), ...sku })),
    }
    if (!unpriced) {
      for (const key of keys) seenEntries.add(key)
      entryCount += entries.length
      if (unsold) unsoldEntries += entries.length
    }
    if (!unsold) {
      skuCount += skus.length
      if (unpriced) unpricedSkus += skus.length
    }
    yield product
  }
}

function entryRow(kind: Kind, plan: ProductPlan, entry: EntryPlan, random: Random): DemoRow {
  const row: DemoRow = {}
  for (const attribute of kind.attributes) {
    if (attribute.entry === 'none') continue
    row[attribute.name] = entry.values?.[attribute.name] ?? plan.values[attribute.name] ?? null
  }
  for (const range of kind.ranges) {
    const bounds = entry.ranges?.[range.name]
    row[`${range.name}From`] = bounds ? bounds[0] : null
    row[`${range.name}To`] = bounds ? bounds[1] : null
  }
  row.price = entry.price
  row.purchase = purchasePrice(entry.price, random)
  return row
}

/** SKUs of a product: each inside one of its entries (so it is priced), on the grid of each range. */
function skuRows(kind: Kind, plan: ProductPlan, random: Random, density: number): DemoRow[] {
  const wanted = Math.min(plan.maxSkus ?? Number.POSITIVE_INFINITY, Math.max(1, Math.round(plan.skus * density)))
  const skus: DemoRow[] = []
  const seen = new Set<string>()
  // A full grid shows as a run of repeats; stop there rather than search for the last free points.
  let repeats = 0
  while (skus.length < wanted && repeats < Math.min(200, 10 + 2 * wanted)) {
    const entry = random.pick(plan.entries)
    const sku: DemoRow = {}
    for (const attribute of kind.attributes) {
      const name = attribute.name
      const options = plan.options?.[name]
      const value =
        entry.values?.[name] ?? plan.values[name] ?? plan.skuValues?.[name] ?? (options ? random.pick(options) : null)
      sku[name] = value ?? null
    }
    for (const range of kind.ranges) {
      if (range.sku === 'none') continue
      const bounds = entry.ranges?.[range.name]
      if (!bounds || (range.sku === 'optional' && !plan.concrete)) {
        if (range.sku === 'required') throw new Error(`demo ${kind.path}: an entry lacks the ${range.name} range`)
        sku[range.name] = null
        continue
      }
      const step = entry.steps?.[range.name] ?? plan.steps?.[range.name] ?? 0.25
      sku[range.name] = gridPoint(random, bounds[0], bounds[1], step)
    }
    if (plan.distinct !== false) {
      const key = Object.values(sku).join('\u0001')
      if (seen.has(key)) {
        repeats++
        continue
      }
      seen.add(key)
      repeats = 0
    }
    skus.push(sku)
  }
  return skus
}

/**
 * A model code from a pattern (`RB####`, `PLD ####/S`): `#` are digits. Distinct serials give distinct codes:
 * a coprime stride scatters them over the digit space, and past its size a series suffix is added.
 */
export function modelCode(pattern: string, serial: number): string {
  const digits = (pattern.match(/#/g) ?? []).length
  // Codes do not start with 0: the space is 100…999, not 000…999.
  const low = digits > 1 ? 10 ** (digits - 1) : 0
  const space = 10 ** digits - low
  const series = Math.floor(serial / space)
  const offset = (hashSeed(pattern, 0) >>> 0) % space
  const number = String(low + (((serial % space) * 7919 + offset) % space))
  let i = 0
  const code = pattern.replace(/#/g, () => number[i++] ?? '0')
  return series === 0 ? code : `${code}-${series + 1}`
}
