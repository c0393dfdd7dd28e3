/**
 * What a product kind is, as data. One descriptor per kind (see `kinds.ts`) drives the tables, the matview, the
 * request and item schemas, the search query, the CSV columns and the table-driven tests; no shared code branches
 * on a kind's name.
 *
 * Vocabulary:
 * - attribute: a descriptive value (`brand`, `refractionIndex`). Every SKU carries it concretely; a price-list
 *   entry carries it as a `key` (must be equal), a `wildcard` key (NULL covers every value) or not at all.
 * - range: a power zone or band (`diameter`, `sphere`). An entry carries `<name>_from`/`<name>_to` (inclusive,
 *   NULL bound = open); a SKU may carry the concrete value (`diameter`, a stock lens's `sphere`).
 */

export type ValueType = 'text' | 'decimal' | 'integer'

/** A field's name as the staff's web app shows it, in Russian and English. */
export interface Label {
  readonly ru: string
  readonly en: string
}

export interface Attribute {
  /** The API's name (`refractionIndex`). */
  readonly name: string
  /** The SQL column (`refraction_index`). */
  readonly column: string
  readonly type: ValueType
  readonly sqlType: string
  readonly entry: 'key' | 'wildcard' | 'none'
  /** The column's name in a Russian spreadsheet (`Производитель`), which an import's header may use. */
  readonly ru: string
  /** The optician's name of it on the counter's form and table (KindSpec's `labels`, else `ru` and the API name). */
  readonly label: Label
}

/**
 * What a range is in an optician's prescription: a spherical power (a lens's sphere, a contact lens's or ready
 * glasses' dioptre), a cylinder, an addition, or a cylinder axis. Powers go in quarter dioptres within ±30 and
 * axes in whole degrees 0…180; a prescription with a plus cylinder is transposed to minus notation.
 */
export type PrescriptionRole = 'sphere' | 'cylinder' | 'addition' | 'axis'

export interface Range {
  readonly name: string
  readonly column: string
  readonly type: ValueType
  readonly sqlType: string
  /** Whether a SKU carries the concrete value: always, for some SKUs only (stock vs made-to-order), or never. */
  readonly sku: 'required' | 'optional' | 'none'
  readonly prescription?: PrescriptionRole
  /** The range's name in a Russian spreadsheet (`Диаметр`; its bounds are `Диаметр от`, `Диаметр до`). */
  readonly ru: string
  /** The optician's name of it on the counter's form and table (its bounds' labels add from / to). */
  readonly label: Label
}

/** Where an item field's value comes from. */
export type ItemSource =
  | { readonly from: 'price' }
  | { readonly from: 'attribute'; readonly attribute: Attribute }
  | { readonly from: 'point'; readonly range: Range }
  | { readonly from: 'bound'; readonly range: Range; readonly bound: 'from' | 'to' }

export interface ItemField {
  readonly name: string
  readonly type: ValueType
  /** The column in the matview (and, where the entry has it, in the price-list table). */
  readonly column: string
  readonly source: ItemSource
  /** The column in the price-list table, or null where an entry lacks the value (`null` in price-list mode). */
  readonly entryColumn: string | null
}

/** How a request filter matches. */
export type Filter = (
  | { readonly name: string; readonly match: 'substring'; readonly attribute: Attribute }
  | { readonly name: string; readonly match: 'equals'; readonly attribute: Attribute }
  | { readonly name: string; readonly match: 'covers'; readonly range: Range }
) & {
  /** True for the prescription filters, which the contract does not have. */
  readonly prescription: boolean
}

export interface KindSpec {
  /** The path segment: `/api/v2/good/nomenclature/search/{path}`. */
  readonly path: string
  /** Table prefix: `<table>_price`, `<table>_sku`, `<table>_mv`. */
  readonly table: string
  /** Human name, for documentation. */
  readonly title: string
  /** The kind's name in Russian, as the staff's web app shows it. */
  readonly ruTitle: string
  readonly attributes: Readonly<Record<string, AttributeSpec>>
  readonly ranges?: Readonly<Record<string, RangeSpec>>
  /** The contract's request filters, in the contract's order. */
  readonly filters: readonly string[]
  /** Filters beyond the contract (the optician's prescription): ranges matched by coverage. */
  readonly prescription?: readonly string[]
  /** The contract's item fields after `retailPrice`, in the contract's order (`xFrom`/`xTo` name range bounds). */
  readonly item: readonly string[]
  /** The natural order of a page (item fields); a unique tiebreak is appended. */
  readonly order: readonly string[]
  /**
   * How SKUs meet entries in the matview: `most-specific` keeps, per SKU, the covering entry with the most
   * non-NULL keys and bounds (then the latest change, then the lowest id); `all-zones` keeps one row per covering
   * entry, since the zone is part of the item (a made-to-order lens is priced by every zone of its product).
   */
  readonly match: 'most-specific' | 'all-zones'
  /**
   * Every attribute's and range's name as a Russian spreadsheet heads its column (`brand: 'Бренд'`): an import's
   * header may use either name (transfer-columns.ts). Must name each attribute and range, and nothing else.
   */
  readonly ru: Readonly<Record<string, string>>
  /**
   * Where the spreadsheet's Russian name (`ru`, which files already carry) or the API name read as English is not
   * what an optician says, the words the counter's form and table use instead: `targetGroup: { ru: 'Пол и
   * возраст', en: 'Gender and age' }`. Names only attributes and ranges.
   */
  readonly labels?: Readonly<Record<string, Partial<Label>>>
  /**
   * Filters of a search that finds goods in the demo catalogue, priced and in the price list (`byPriceList` either
   * way): the OpenAPI document's example of the kind's search and facets, what Swagger UI's "Try it out" sends.
   * Names only the kind's filters.
   */
  readonly example: Readonly<Record<string, string | number>>
}

export interface AttributeSpec {
  readonly type: ValueType
  readonly sqlType?: string
  readonly entry?: 'key' | 'wildcard' | 'none'
}

export interface RangeSpec {
  readonly type: ValueType
  readonly sqlType: string
  readonly sku: 'required' | 'optional' | 'none'
  readonly prescription?: PrescriptionRole
}

export interface Kind {
  readonly path: string
  readonly title: string
  readonly ruTitle: string
  readonly priceTable: string
  readonly skuTable: string
  readonly matview: string
  readonly match: KindSpec['match']
  readonly attributes: readonly Attribute[]
  readonly ranges: readonly Range[]
  /** Contract filters then prescription filters. */
  readonly filters: readonly Filter[]
  /** `retailPrice` first, then the contract's fields. */
  readonly itemFields: readonly ItemField[]
  /**
   * The fields whose values a search form offers (facets, suggestions): the item fields, then every text filter
   * an item does not carry (a lens's material, geometry, technology), read from the same columns.
   */
  readonly valueFields: readonly ItemField[]
  readonly order: readonly ItemField[]
  /** The filters of a search that finds goods in the demo catalogue (KindSpec's `example`). */
  readonly example: Readonly<Record<string, string | number>>
}

/** `refractionIndex` → `refraction_index`. */
export function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)
}

const defaultSqlType: Record<ValueType, string> = { text: 'text', decimal: 'numeric', integer: 'integer' }

/** How a price-list entry carries an attribute. */
type Entry = NonNullable<AttributeSpec['entry']>

/*
 * The spec helpers keep their arguments' literal types, so the types of a kind's tables follow from its descriptor
 * (kind-tables.ts).
 */

/** Text attribute; `entry` says how a price-list entry carries it (default: not at all). */
export function text(): { readonly type: 'text'; readonly entry: 'none' }
export function text<const E extends Entry>(entry: E): { readonly type: 'text'; readonly entry: E }
export function text(entry: Entry = 'none'): AttributeSpec {
  return { type: 'text', entry }
}

/** Decimal attribute stored as `sqlType` (e.g. `numeric(4,3)`), compared as a number (1.6 = 1.60). */
export function decimal(sqlType: string): { readonly type: 'decimal'; readonly sqlType: string; readonly entry: 'none' }
export function decimal<const E extends Entry>(
  sqlType: string,
  entry: E,
): { readonly type: 'decimal'; readonly sqlType: string; readonly entry: E }
export function decimal(sqlType: string, entry: Entry = 'none'): AttributeSpec {
  return { type: 'decimal', sqlType, entry }
}

export function integer(): { readonly type: 'integer'; readonly entry: 'none' }
export function integer<const E extends Entry>(entry: E): { readonly type: 'integer'; readonly entry: E }
export function integer(entry: Entry = 'none'): AttributeSpec {
  return { type: 'integer', entry }
}

/**
 * A range carried by entries as `<name>_from`/`<name>_to`; `sku` says whether SKUs carry the concrete value, and
 * `prescription` what the range is in a prescription (when it is a prescription filter).
 */
export function range<const T extends ValueType, const S extends RangeSpec['sku']>(
  type: T,
  sqlType: string,
  sku: S,
  prescription?: PrescriptionRole,
): RangeSpec & { readonly type: T; readonly sku: S } {
  return prescription ? { type, sqlType, sku, prescription } : { type, sqlType, sku }
}

/** Resolves a kind's spec into the derived description every other module reads. Throws on an inconsistent spec. */
/** `refractionIndex` → `Refraction index`. */
function englishLabel(name: string): string {
  const words = name.replace(/[A-Z]/g, (letter) => ` ${letter.toLowerCase()}`)
  return words.charAt(0).toUpperCase() + words.slice(1)
}

export function defineKind(spec: KindSpec): Kind {
  const named = [...Object.keys(spec.attributes), ...Object.keys(spec.ranges ?? {})]
  const russian = (name: string): string => {
    const ru = spec.ru[name]
    if (!ru?.trim()) throw new Error(`kind ${spec.path}: ${name} has no Russian name (ru)`)
    return ru
  }
  for (const name of Object.keys(spec.ru)) {
    if (!named.includes(name)) throw new Error(`kind ${spec.path}: ru names ${name}, neither an attribute nor a range`)
  }
  for (const name of Object.keys(spec.labels ?? {})) {
    if (!named.includes(name))
      throw new Error(`kind ${spec.path}: labels names ${name}, neither an attribute nor a range`)
  }
  const label = (name: string): Label => ({
    ru: spec.labels?.[name]?.ru ?? russian(name),
    en: spec.labels?.[name]?.en ?? englishLabel(name),
  })
  const attributes: Attribute[] = Object.entries(spec.attributes).map(([name, a]) => ({
    name,
    column: snakeCase(name),
    type: a.type,
    sqlType: a.sqlType ?? defaultSqlType[a.type],
    entry: a.entry ?? 'none',
    ru: russian(name),
    label: label(name),
  }))
  const ranges: Range[] = Object.entries(spec.ranges ?? {}).map(([name, r]) => ({
    name,
    column: snakeCase(name),
    type: r.type,
    sqlType: r.sqlType,
    sku: r.sku,
    ...(r.prescription ? { prescription: r.prescription } : {}),
    ru: russian(name),
    label: label(name),
  }))
  const attributeByName = new Map(attributes.map((a) => [a.name, a]))
  const rangeByName = new Map(ranges.map((r) => [r.name, r]))

  const resolveItem = (name: string): ItemField => {
    if (name === 'retailPrice') {
      return { name, type: 'decimal', column: 'retail_price', source: { from: 'price' }, entryColumn: 'price' }
    }
    const attribute = attributeByName.get(name)
    if (attribute) {
      return {
        name,
        type: attribute.type,
        column: attribute.column,
        source: { from: 'attribute', attribute },
        entryColumn: attribute.entry === 'none' ? null : attribute.column,
      }
    }
    const point = rangeByName.get(name)
    if (point && point.sku !== 'none') {
      return {
        name,
        type: point.type,
        column: point.column,
        source: { from: 'point', range: point },
        entryColumn: null,
      }
    }
    const bound = /^(.*)(From|To)$/.exec(name)
    const boundRange = bound ? rangeByName.get(bound[1] ?? '') : undefined
    if (bound && boundRange) {
      const which = bound[2] === 'From' ? 'from' : 'to'
      return {
        name,
        type: boundRange.type,
        column: `${boundRange.column}_${which}`,
        source: { from: 'bound', range: boundRange, bound: which },
        entryColumn: `${boundRange.column}_${which}`,
      }
    }
    throw new Error(`kind ${spec.path}: item field ${name} is neither an attribute nor a range`)
  }

  const resolveFilter = (name: string, prescription: boolean): Filter => {
    const attribute = attributeByName.get(name)
    if (attribute) {
      return attribute.type === 'text'
        ? { name, match: 'substring', attribute, prescription }
        : { name, match: 'equals', attribute, prescription }
    }
    const covered = rangeByName.get(name)
    if (covered) return { name, match: 'covers', range: covered, prescription }
    throw new Error(`kind ${spec.path}: filter ${name} is neither an attribute nor a range`)
  }

  for (const name of spec.prescription ?? []) {
    if (!rangeByName.get(name)?.prescription) {
      throw new Error(`kind ${spec.path}: prescription filter ${name} needs a range with a prescription role`)
    }
  }

  const filterNames = new Set([...spec.filters, ...(spec.prescription ?? [])])
  for (const name of Object.keys(spec.example)) {
    if (!filterNames.has(name)) throw new Error(`kind ${spec.path}: the example names ${name}, not a filter`)
  }

  const itemFields = ['retailPrice', ...spec.item].map(resolveItem)
  const itemByName = new Map(itemFields.map((field) => [field.name, field]))
  const filterOnly = spec.filters.filter((name) => !itemByName.has(name) && attributeByName.get(name)?.type === 'text')
  const valueFields = [...itemFields, ...filterOnly.map(resolveItem)]
  const order = spec.order.map((name) => {
    const field = itemByName.get(name)
    if (!field) throw new Error(`kind ${spec.path}: order field ${name} is not an item field`)
    return field
  })

  return Object.freeze({
    path: spec.path,
    title: spec.title,
    ruTitle: spec.ruTitle,
    priceTable: `${spec.table}_price`,
    skuTable: `${spec.table}_sku`,
    matview: `${spec.table}_mv`,
    match: spec.match,
    attributes,
    ranges,
    filters: [
      ...spec.filters.map((name) => resolveFilter(name, false)),
      ...(spec.prescription ?? []).map((name) => resolveFilter(name, true)),
    ],
    itemFields,
    valueFields,
    order,
    example: spec.example,
  })
}
