import type { Attribute, Kind, PrescriptionRole, Range } from '../catalog/kinds/kind.js'
import { type DemoRecipe, type DemoValue, type EntryPlan, shelfPrice } from './demo-generator.js'

/*
 * The demo recipe of a kind that has none of its own (demo-recipes.ts), derived from its descriptor alone: values
 * a person can read and the database takes, not a real assortment. Text is the kind's `example` values where it
 * gives them, else the field's Russian label with a number (`Модель 12`); numbers and zones fit their column's type
 * (`numeric(4,1)` holds up to 999.9, an integer has no decimals); the bounds of a zone are ordered; a
 * prescription's zones are dioptres in quarter steps (cylinders minus) and axes in degrees; prices are roubles
 * of an everyday purchase, the purchase price below retail (demo-generator.ts).
 *
 * Products come in four lines taking turns; the first carries every value of the kind's example together, so the
 * example (the OpenAPI document's, what Swagger UI sends) finds goods. One text key, the identity, numbers the
 * products, so no two products share an entry key.
 */

/** Lines of products taking turns: the first carries the kind's example. */
const LINES = 4

/** The most a generated number reaches when its column would allow more (an integer, a wide `numeric`). */
const TOP = 100

/** Round numbers a numeric attribute takes, those its column holds. */
const roundNumbers = [0.5, 1, 1.5, 2, 2.5, 3, 5, 6, 10, 12, 15, 20, 25, 30, 50, 60, 90, 100]

/** The zones of a prescription range: dioptres in quarter steps (minus cylinders), axes in degrees. */
const prescriptionZones: Readonly<Record<PrescriptionRole, { bands: readonly [number, number][]; step: number }>> = {
  sphere: {
    bands: [
      [-6, -0.25],
      [0, 4],
      [-10, -6.25],
    ],
    step: 0.25,
  },
  cylinder: {
    bands: [
      [-2, 0],
      [-4, -2.25],
      [-6, -4.25],
    ],
    step: 0.25,
  },
  addition: {
    bands: [
      [0.75, 2],
      [2.25, 3.5],
    ],
    step: 0.25,
  },
  axis: { bands: [[0, 180]], step: 1 },
}

/** What a column of `type`/`sqlType` holds: its largest value and its decimals (at most two are generated). */
function columnLimits(type: Attribute['type'], sqlType: string): { max: number; decimals: number } {
  if (type === 'integer') return { max: 2 ** 31 - 1, decimals: 0 }
  const [, precision, scale] = /^numeric\s*\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\)$/i.exec(sqlType.trim()) ?? []
  if (!precision) return { max: Number.POSITIVE_INFINITY, decimals: 2 }
  const decimals = Number(scale ?? 0)
  return { max: 10 ** (Number(precision) - decimals) - 10 ** -decimals, decimals: Math.min(2, decimals) }
}

const roundTo = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals

/** A few round values a numeric attribute's column holds. */
function numberPool(attribute: Attribute): number[] {
  const { max, decimals } = columnLimits(attribute.type, attribute.sqlType)
  const fits = roundNumbers.filter((value) => value <= max && roundTo(value, decimals) === value)
  if (fits.length >= 2) return fits
  // A narrow column (`numeric(2,2)`): tenths of what it holds.
  return [1, 3, 5, 7, 9].map((tenth) => roundTo((Math.min(max, TOP) * tenth) / 10, decimals))
}

interface Zones {
  readonly bands: readonly (readonly [number, number])[]
  readonly step: number
}

/** The zones a range's entries take: a prescription's where its column holds them, else three inside the column. */
function zonesOf(range: Range): Zones {
  const { max, decimals } = columnLimits(range.type, range.sqlType)
  const prescription = range.prescription ? prescriptionZones[range.prescription] : undefined
  const holds = (bound: number) => Math.abs(bound) <= max && roundTo(bound, decimals) === bound
  if (prescription?.bands.every(([from, to]) => holds(from) && holds(to))) return prescription
  const top = Math.min(max, TOP)
  const bands = [
    [0.1, 0.3],
    [0.4, 0.6],
    [0.7, 0.9],
  ].map(([from, to]) => [roundTo(top * (from ?? 0), decimals), roundTo(top * (to ?? 0), decimals)] as const)
  const width = (bands[0]?.[1] ?? 0) - (bands[0]?.[0] ?? 0)
  return { bands, step: Math.max(10 ** -decimals, roundTo(width / 4, decimals)) }
}

/** `Модель 3`: a field's Russian label with a number. */
const numbered = (attribute: Attribute, n: number) => `${attribute.label.ru} ${n}`

/** A 32-bit hash of a text (FNV-1a), for a kind's barcode prefix. */
function hash(text: string): number {
  let value = 0x811c9dc5
  for (let i = 0; i < text.length; i++) value = Math.imul(value ^ text.charCodeAt(i), 0x01000193) >>> 0
  return value
}

/**
 * The demo recipe of `kind` from its descriptor (see above). Its barcodes start with 48 and two digits of the
 * kind's path. Throws for a kind without a text key (nothing to number its products by).
 */
export function genericRecipe(kind: Kind): DemoRecipe {
  const textKeys = kind.attributes.filter((a) => a.entry === 'key' && a.type === 'text')
  const identity = textKeys.findLast((a) => kind.example[a.name] === undefined) ?? textKeys.at(-1)
  if (!identity) throw new Error(`demo ${kind.path}: a generic recipe needs a text key`)
  const pools = new Map(kind.attributes.filter((a) => a.type !== 'text').map((a) => [a.name, numberPool(a)]))
  const zones = new Map(kind.ranges.map((range) => [range.name, zonesOf(range)]))
  // Entries of one product are zones of this range (the first with several), so no two of them overlap.
  const zoning = kind.ranges.find((range) => (zones.get(range.name)?.bands.length ?? 0) > 1)
  const exampleOf = (name: string, line: number): DemoValue | undefined => {
    const value = line === 0 ? kind.example[name] : undefined
    if (value === undefined) return undefined
    return kind.attributes.find((a) => a.name === name)?.type === 'text' ? String(value) : Number(value)
  }

  return {
    kind,
    barcodePrefix: `48${String(hash(kind.path) % 100).padStart(2, '0')}`,
    product(index, random) {
      const line = index % LINES
      const serial = Math.floor(index / LINES)
      const values: Record<string, DemoValue> = {}
      const skuValues: Record<string, DemoValue> = {}
      const options: Record<string, DemoValue[]> = {}
      /** Several values a SKU picks one of. */
      const choices = (attribute: Attribute): DemoValue[] => {
        const pool = pools.get(attribute.name)
        return pool
          ? random.sample(pool, random.int(1, 3))
          : random.sample([1, 2, 3, 4], random.int(1, 3)).map((n) => numbered(attribute, n))
      }
      const single = (attribute: Attribute): DemoValue => {
        const pool = pools.get(attribute.name)
        return pool ? random.pick(pool) : numbered(attribute, random.int(1, 4))
      }

      for (const attribute of kind.attributes) {
        const example = exampleOf(attribute.name, line)
        if (attribute === identity) {
          values[attribute.name] =
            example === undefined ? numbered(attribute, index + 1) : serial === 0 ? example : `${example} ${serial + 1}`
        } else if (attribute.entry === 'key') {
          const pool = pools.get(attribute.name)
          values[attribute.name] =
            example ?? (pool ? (pool[line % pool.length] as number) : numbered(attribute, line + 1))
        } else if (example !== undefined) {
          ;(attribute.entry === 'wildcard' ? values : skuValues)[attribute.name] = example
        } else if (attribute.entry === 'wildcard' && random.chance(0.5)) {
          values[attribute.name] = single(attribute)
        } else {
          // A wildcard left open on the entry (it prices every value), or a value only SKUs carry.
          options[attribute.name] = choices(attribute)
        }
      }

      const base = 500 * 2 ** (random.float() * 5)
      let count = random.int(1, 3)
      const bands = new Map<string, (readonly [number, number])[]>()
      for (const range of kind.ranges) {
        const own = [...zones.get(range.name)!.bands]
        const example = exampleOf(range.name, line)
        if (typeof example === 'number') {
          // The example's value lies in the product's first zone; the very first product's SKUs carry it exactly
          // where SKUs carry the range (a one-point zone), since there a SKU's own value is what a search compares.
          const holding = own.findIndex(([from, to]) => from <= example && example <= to)
          if (index === 0 && range.sku === 'required') {
            if (holding >= 0) own.splice(holding, 1, [example, example])
            else own.splice(0, own.length, [example, example])
          }
          const first = own.findIndex(([from, to]) => from <= example && example <= to)
          if (first >= 0) own.unshift(...own.splice(first, 1))
          else {
            const [from, to] = own[0]!
            own[0] = [Math.min(from, example), Math.max(to, example)]
            count = 1
          }
        }
        bands.set(range.name, own)
      }
      count = Math.min(count, zoning ? bands.get(zoning.name)!.length : 1)
      const entries: EntryPlan[] = Array.from({ length: count }, (_, zone) => ({
        ranges: Object.fromEntries(
          kind.ranges.map((range) => {
            const own = bands.get(range.name)!
            return [range.name, own[zone % own.length]!]
          }),
        ),
        steps: Object.fromEntries(kind.ranges.map((range) => [range.name, zones.get(range.name)!.step])),
        price: shelfPrice(base * (1 + 0.15 * zone)),
      }))
      // Without zones, a dearer entry for one value of an open wildcard (as polarized lenses cost more).
      const open = kind.attributes.find((a) => a.entry === 'wildcard' && options[a.name])
      if (kind.ranges.length === 0 && open && random.chance(0.3)) {
        entries.push({ values: { [open.name]: random.pick(options[open.name]!) }, price: shelfPrice(base * 1.2) })
      }

      // A SKU of an optional range carries its value (stock) or not (made to order); the example's goods do not,
      // so a zone holding the example's value covers them.
      const exampleRange = kind.ranges.some(
        (range) => range.sku === 'optional' && exampleOf(range.name, line) !== undefined,
      )
      const concrete = !exampleRange && random.chance(0.5)
      const varies =
        Object.keys(options).length > 0 ||
        kind.ranges.some((range) => range.sku === 'required' || (range.sku === 'optional' && concrete))
      return {
        values,
        skuValues,
        entries,
        options,
        concrete,
        distinct: varies,
        skus: random.int(2, 8),
      }
    },
  }
}
