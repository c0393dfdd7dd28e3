import { CompiledQuery, type Kysely, sql } from 'kysely'
import type { Filter, Kind, PrescriptionRole } from '../src/catalog/kinds/kind.js'
import { normaliseKeyText } from '../src/catalog/kinds/kind-schema.js'
import {
  accessories,
  contactLenses,
  extras,
  glasses,
  lenses,
  semifinishedLenses,
  sunglasses,
} from '../src/catalog/kinds/kinds.js'
import { searchFacets } from '../src/catalog/search/facets.js'
import { readPrescription } from '../src/catalog/search/prescription.js'
import {
  activeFilters,
  buildSearchQuery,
  escapeLike,
  type FilterValues,
  fieldSql,
} from '../src/catalog/search/search-query.js'
import { loadConfig } from '../src/config.js'
import type { Database } from '../src/db/database.js'
import { Random } from '../src/demo/demo-generator.js'
import { type GlassPriceFilter, glassPriceFilterConditions } from '../src/glass-prices/glass-price-filter.js'
import { buildListingQueries } from '../src/glass-prices/glass-price-repository.js'
import type { SortColumn, SortDirection } from '../src/glass-prices/glass-price-schemas.js'
import type { PageRequest, SortOrder } from '../src/http/page.js'
import { readCountedPage } from '../src/paged-reads/counted-page.js'
import type { HttpRequestSpec } from './load.js'
import type { BenchRequest, LoadScenario } from './scenarios.js'

/*
 * The cold mix: many distinct requests of an optician's working day, each sent once, so the service's result
 * caches (on, as deployed) never hold the answer asked for: what it costs to answer a request nobody asked before.
 * The requests are drawn, with a seeded generator, from the catalogue's own values (brands, models, colours,
 * sizes, lens types, refraction indexes, diameters, power zones) read at setup, in these shares:
 *
 *   35 % frames (glasses, a fifth of them sunglasses) by fragments of a brand, model or manufacturer as typed
 *        (growing prefixes, inner fragments; 2–5 letters), some with a colour or a size; 20 % in price-list mode
 *   30 % spectacle lenses by refraction index and diameter, a prescription within the catalogue's power zones
 *        (quarter dioptres), brand, type or manufacturer fragments
 *   10 % lens facets with such bodies
 *    5 % suggestions for a fragment typed into a field (some with a typo)
 *   15 % the glass price listing: text filters, price bounds, every sort column both ways, pages 0–3
 *    5 % the other kinds: contact lenses, ready-made glasses, semi-finished lenses, accessories
 *
 * Some searches ask later pages and other orders (`sort=retailPrice,desc`). Two requests are the same when the
 * service would compute the same answer (text compared as the database normalises it, numbers as numbers, a
 * plus-cylinder prescription transposed), and no request appears twice across every list of a run: warm-ups,
 * runs and concurrencies alike.
 *
 * Each request's floor is the SQL the service sends for it when nothing is cached, straight through the driver:
 * a filtered search or listing counts its matches, then reads its page (fenced when they are few), unless the
 * page lies past the end; facets run the facet queries; a suggestion selects the field's values containing the
 * text, prefixes first, most frequent first. The SQL is built with the service's own builders as it runs.
 */

type AnyDb = Kysely<any>

/** The shares of the mix, in per cent. */
export const COLD_MIX_SHARES = {
  frames: 35,
  lenses: 30,
  lensFacets: 10,
  suggestions: 5,
  listing: 15,
  otherKinds: 5,
} as const

export type ColdCategory = keyof typeof COLD_MIX_SHARES

/** What each category of the mix is, for the report. */
export const COLD_CATEGORY_TITLES: Readonly<Record<ColdCategory, string>> = {
  frames: 'frames and sunglasses by typed fragments, some with a colour or size',
  lenses: 'lenses by index, diameter, prescription, brand or type fragments',
  lensFacets: 'lens facets',
  suggestions: 'suggestions for a typed fragment',
  listing: 'glass price listing: text filters, price bounds, every sort, pages 0–3',
  otherKinds: 'contact lenses, ready-made glasses, semi-finished lenses, accessories',
}

export interface ColdRequest extends BenchRequest {
  readonly category: ColdCategory
  /** What identifies the request's answer: two requests with one key would get the same answer. */
  readonly key: string
}

/** A price-list entry's power zone: per prescription filter, its bounds (null: open). */
type Zone = Readonly<Record<string, readonly [number | null, number | null]>>

/** What the mix draws from, for one kind: text values per filter, tuples of its numeric filters, power zones. */
export interface KindValues {
  readonly text: Readonly<Record<string, readonly string[]>>
  /** The names of the numeric filters (refraction index, diameter…) and the combinations the matview holds. */
  readonly numeric: { readonly names: readonly string[]; readonly tuples: readonly (readonly number[])[] }
  readonly zones: readonly Zone[]
}

export interface ColdCatalogue {
  readonly kinds: Readonly<Record<string, KindValues>>
  /** The glass price list: text values of its filters, and prices and purchase prices to bound them with. */
  readonly priceList: {
    readonly text: Readonly<Record<'manufacturer' | 'brand' | 'model', readonly string[]>>
    readonly prices: readonly number[]
    readonly purchases: readonly number[]
  }
}

/** The text filters the mix types into, per kind. */
const TEXT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  [glasses.path]: ['manufacturer', 'brand', 'model', 'color', 'size'],
  [sunglasses.path]: ['manufacturer', 'brand', 'model', 'color'],
  [lenses.path]: ['manufacturer', 'brand', 'type'],
  [contactLenses.path]: ['manufacturer', 'name'],
  [extras.path]: ['frameManufacturer', 'frameBrand', 'frameModel'],
  [semifinishedLenses.path]: ['manufacturer', 'brand'],
  [accessories.path]: ['category', 'model'],
}

/** At most this many distinct values of a text field are read (spread over the values by their hash). */
const VALUES_PER_FIELD = 2000

async function column<T = string>(db: AnyDb, query: string, parameters: unknown[] = []): Promise<T[]> {
  const result = await db.executeQuery<{ value: T }>(CompiledQuery.raw(query, parameters))
  return result.rows.map((row) => row.value)
}

const numericFilters = (kind: Kind) =>
  kind.filters.filter(
    (filter): filter is Filter & { match: 'equals' | 'covers' } => !filter.prescription && filter.match !== 'substring',
  )
const numericColumn = (filter: Filter) => (filter.match === 'covers' ? filter.range.column : filter.attribute.column)
const prescriptionFilters = (kind: Kind) =>
  kind.filters.filter(
    (filter): filter is Filter & { match: 'covers' } => filter.prescription && filter.match === 'covers',
  )

/** Reads what the mix draws from: distinct values of the catalogue as loaded (none for an empty kind). */
export async function readColdCatalogue(db: AnyDb): Promise<ColdCatalogue> {
  const kinds: Record<string, KindValues> = {}
  for (const kind of [glasses, sunglasses, lenses, contactLenses, extras, semifinishedLenses, accessories]) {
    const text: Record<string, string[]> = {}
    for (const name of TEXT_FIELDS[kind.path] ?? []) {
      const filter = kind.filters.find((f) => f.name === name)
      if (filter?.match !== 'substring') throw new Error(`${kind.path}: no text filter ${name}`)
      const col = filter.attribute.column
      text[name] = await column(
        db,
        `SELECT value FROM (SELECT DISTINCT ${col} AS value FROM ${kind.matview} WHERE ${col} IS NOT NULL) d
          WHERE length(trim(value)) >= 2 ORDER BY md5(value), value LIMIT ${VALUES_PER_FIELD}`,
      )
    }
    const numeric = numericFilters(kind)
    let tuples: number[][] = []
    if (numeric.length > 0) {
      const columns = numeric.map((filter) => `${numericColumn(filter)}::text`)
      const { rows } = await db.executeQuery<Record<string, string>>(
        CompiledQuery.raw(
          `SELECT DISTINCT ${columns.map((c, i) => `${c} AS v${i}`).join(', ')} FROM ${kind.matview}
            WHERE ${numeric.map((f) => `${numericColumn(f)} IS NOT NULL`).join(' AND ')} ORDER BY ${columns.map((_c, i) => i + 1).join(', ')} LIMIT 500`,
        ),
      )
      tuples = rows.map((row) => numeric.map((_f, i) => Number(row[`v${i}`])))
    }
    const prescription = prescriptionFilters(kind)
    let zones: Zone[] = []
    if (prescription.length > 0) {
      const bounds = prescription.flatMap((f) => [`${f.range.column}_from`, `${f.range.column}_to`])
      const { rows } = await db.executeQuery<Record<string, string | null>>(
        CompiledQuery.raw(
          `SELECT DISTINCT ${bounds.map((b) => `${b}::text AS ${b}`).join(', ')} FROM ${kind.priceTable}
            ORDER BY ${bounds.map((_b, i) => i + 1).join(', ')} LIMIT 300`,
        ),
      )
      const number = (value: string | null | undefined) =>
        value === null || value === undefined ? null : Number(value)
      zones = rows.map((row) =>
        Object.fromEntries(
          prescription.map((f) => [
            f.name,
            [number(row[`${f.range.column}_from`]), number(row[`${f.range.column}_to`])] as const,
          ]),
        ),
      )
    }
    kinds[kind.path] = { text, numeric: { names: numeric.map((f) => f.name), tuples }, zones }
  }
  const priceText = async (name: string) =>
    column(
      db,
      `SELECT value FROM (SELECT DISTINCT ${name} AS value FROM glasses_price WHERE ${name} IS NOT NULL) d
        WHERE length(trim(value)) >= 2 ORDER BY md5(value), value LIMIT ${VALUES_PER_FIELD}`,
    )
  const quantiles = async (name: string) =>
    (
      await column<string | null>(
        db,
        `SELECT unnest(percentile_disc(ARRAY[0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95])
           WITHIN GROUP (ORDER BY ${name}))::text AS value FROM glasses_price`,
      )
    )
      .filter((value): value is string => value !== null)
      .map((value) => Math.round(Number(value) / 10) * 10)
  return {
    kinds,
    priceList: {
      text: {
        manufacturer: await priceText('manufacturer'),
        brand: await priceText('brand'),
        model: await priceText('model'),
      },
      prices: [...new Set(await quantiles('price'))],
      purchases: [...new Set(await quantiles('purchase'))],
    },
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Requests and their floors

/** The business time zone the listing's dates are written in (the service's default configuration). */
export const listingTimezone = loadConfig({}).businessTimezone

/** The path of a glass price listing page (20 entries). */
export function listingPath(
  filter: GlassPriceFilter,
  sortColumn: SortColumn,
  sortDirection: SortDirection,
  page: number,
): string {
  const query = new URLSearchParams({
    ...(filter as Record<string, string>),
    sortColumn,
    sortDirection,
    page: String(page),
    size: '20',
  })
  return `/api/v2/glasses/prices/list?${query}`
}

type PageQueries = (options: { fenced?: boolean; walk?: number }) => {
  page: { execute(): Promise<unknown[]> }
  count: { execute(): Promise<unknown[]> }
}

/**
 * The floor of a counted page: the service's own reading of one (`readCountedPage`) with nothing cached, so the
 * floor sends the statements the service sends: unfiltered, the page, then the count only when the page cannot
 * tell the total; filtered, the count, then the page (fenced when the matches are few, else walked no further than
 * the matches and fenced if that falls short) unless it lies past the end.
 */
function countedFloor(filtered: boolean, walkable: boolean, page: PageRequest, queries: PageQueries) {
  return () =>
    readCountedPage<unknown>({
      filtered,
      walkable,
      countKey: '',
      pageKey: '',
      page,
      async count() {
        const [counted] = (await queries({}).count.execute()) as { count?: number | string }[]
        return { value: Number(counted?.count ?? 0), version: null }
      },
      currentVersion: async () => null,
      readRows: async (fenced, walk) => ({ rows: await queries({ fenced, walk }).page.execute(), version: undefined }),
    })
}

/** A search's floor: what the service's SQL path sends for it (see {@link countedFloor}). */
export function searchFloor(
  kind: Kind,
  byPriceList: boolean,
  filters: FilterValues,
  page: number,
  size: number,
  sort: SortOrder[],
) {
  const request = { byPriceList, filters: readPrescription(kind, filters), page: { page, size, sort } }
  const filtered = activeFilters(kind, request.filters).length > 0
  return (database: Database) =>
    countedFloor(filtered, sort.length === 0, request.page, (options) =>
      buildSearchQuery(database.read as AnyDb, kind, request, options),
    )()
}

/** A listing's floor: what the service's SQL path sends for it (see {@link countedFloor}). */
export function listingFloor(
  filter: GlassPriceFilter,
  sortColumn: SortColumn,
  sortDirection: SortDirection,
  page: number,
) {
  const request = { filter, page: { page, size: 20, sort: [] }, sortColumn, sortDirection, timezone: listingTimezone }
  const filtered = glassPriceFilterConditions(filter).length > 0
  return (database: Database) =>
    countedFloor(filtered, true, request.page, (options) => buildListingQueries(database.read, request, options))()
}

function suggestFloor(kind: Kind, fieldName: string, q: string, byPriceList: boolean, limit: number) {
  const field = kind.itemFields.find((candidate) => candidate.name === fieldName)
  const expression = field ? fieldSql(field, byPriceList) : null
  if (!expression) throw new Error(`${kind.path}: ${fieldName} cannot be suggested`)
  const from = byPriceList ? sql`${sql.table(kind.priceTable)} AS e` : sql`${sql.table(kind.matview)} AS m`
  const text = escapeLike(q)
  return async (database: Database) =>
    sql`SELECT ${expression} AS value, count(*) AS count FROM ${from}
        WHERE optics_norm(${expression}) LIKE '%' || optics_norm(${text}) || '%'
        GROUP BY ${expression}
        ORDER BY optics_norm(${expression}) LIKE optics_norm(${text}) || '%' DESC, count(*) DESC, ${expression}
        LIMIT ${limit}`.execute(database.read)
}

/** Filter values as the service compares them: text normalised, numbers as numbers, prescription transposed. */
function canonicalFilters(kind: Kind, filters: FilterValues): [string, string][] {
  return activeFilters(kind, readPrescription(kind, filters)).map(({ filter, value }) => [
    filter.name,
    filter.match === 'substring' ? normaliseKeyText(String(value)) : String(Number(value)),
  ])
}

const sortParameter = (sort: SortOrder[]) =>
  sort.map((order) => `${order.property},${order.direction}${order.ignoreCase ? ',ignorecase' : ''}`)

function searchRequest(
  category: ColdCategory,
  kind: Kind,
  byPriceList: boolean,
  filters: FilterValues,
  page: number,
  size: number,
  sort: SortOrder[],
): ColdRequest {
  const query = new URLSearchParams({ page: String(page), size: String(size) })
  for (const value of sortParameter(sort)) query.append('sort', value)
  const http: HttpRequestSpec = {
    method: 'POST',
    path: `/api/v2/good/nomenclature/search/${kind.path}?${query}`,
    body: { byPriceList, ...filters },
  }
  return {
    category,
    key: JSON.stringify([
      'search',
      kind.path,
      byPriceList,
      canonicalFilters(kind, filters),
      page,
      size,
      sortParameter(sort),
    ]),
    http,
    floor: searchFloor(kind, byPriceList, filters, page, size, sort),
  }
}

function facetsRequest(kind: Kind, byPriceList: boolean, filters: FilterValues): ColdRequest {
  return {
    category: 'lensFacets',
    key: JSON.stringify(['facets', kind.path, byPriceList, canonicalFilters(kind, filters)]),
    http: {
      method: 'POST',
      path: `/api/v2/good/nomenclature/search/${kind.path}/facets`,
      body: { byPriceList, ...filters },
    },
    floor: (database) => searchFacets(database.read, kind, { byPriceList, filters }),
  }
}

function suggestRequest(kind: Kind, field: string, q: string, byPriceList: boolean, limit: number): ColdRequest {
  const query = new URLSearchParams({ kind: kind.path, field, q, byPriceList: String(byPriceList) })
  if (limit !== 10) query.set('limit', String(limit))
  return {
    category: 'suggestions',
    key: JSON.stringify(['suggest', kind.path, field, byPriceList, normaliseKeyText(q), limit]),
    http: { method: 'GET', path: `/api/v2/good/nomenclature/suggest?${query}` },
    floor: suggestFloor(kind, field, q, byPriceList, limit),
  }
}

function listingRequest(
  filter: GlassPriceFilter,
  sortColumn: SortColumn,
  sortDirection: SortDirection,
  page: number,
): ColdRequest {
  const canonical = Object.entries(filter)
    .map(([name, value]) => [
      name,
      name.endsWith('From') || name.endsWith('To') ? String(Number(value)) : normaliseKeyText(value),
    ])
    .sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1))
  return {
    category: 'listing',
    key: JSON.stringify(['listing', canonical, sortColumn, sortDirection, page]),
    http: { method: 'GET', path: listingPath(filter, sortColumn, sortDirection, page) },
    floor: listingFloor(filter, sortColumn, sortDirection, page),
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The generator

/** Picks by weight: `[[value, weight], …]`. */
function weighted<T>(random: Random, choices: readonly (readonly [T, number])[]): T {
  const total = choices.reduce((sum, [, weight]) => sum + weight, 0)
  let at = random.float() * total
  for (const [value, weight] of choices) {
    at -= weight
    if (at < 0) return value
  }
  return choices[choices.length - 1]![0]
}

/** A fragment of a value as an optician types it: a prefix or an inner piece of 2–5 letters, in lower case. */
export function fragment(random: Random, value: string): string {
  const text = normaliseKeyText(value)
  const length = weighted(random, [
    [2, 20],
    [3, 35],
    [4, 25],
    [5, 20],
  ] as const)
  if (text.length <= length) return text
  const start = random.chance(0.6) ? 0 : random.int(1, text.length - length)
  const piece = text.slice(start, start + length).trim()
  return piece.length >= 2 ? piece : text.slice(0, Math.max(2, length)).trim()
}

/** What is typed into a field letter by letter: its prefixes of 2 to 5 letters. */
function growingPrefixes(value: string): string[] {
  const text = normaliseKeyText(value)
  const prefixes = new Set<string>()
  for (let length = 2; length <= Math.min(5, text.length); length++) {
    const prefix = text.slice(0, length).trim()
    if (prefix.length >= 2) prefixes.add(prefix)
  }
  return [...prefixes]
}

/** A prefix of 4–7 letters with one slip of the finger: two letters swapped, one dropped or one doubled. */
function typo(random: Random, value: string): string {
  const text = normaliseKeyText(value)
  const prefix = text.slice(0, Math.min(text.length, random.int(4, 7)))
  if (prefix.length < 3) return prefix
  const at = random.int(1, prefix.length - 2)
  const slip = random.int(0, 2)
  if (slip === 0) return prefix.slice(0, at) + prefix[at + 1] + prefix[at] + prefix.slice(at + 2)
  if (slip === 1) return prefix.slice(0, at) + prefix.slice(at + 1)
  return prefix.slice(0, at) + prefix[at] + prefix.slice(at)
}

const SEARCH_PAGES = [
  [0, 78],
  [1, 12],
  [2, 6],
  [3, 4],
] as const
const LISTING_PAGES = [
  [0, 55],
  [1, 20],
  [2, 15],
  [3, 10],
] as const

/** Default quarter-dioptre ranges where a zone leaves a bound open, and a prescription's axes. */
const ROLE_RANGE: Readonly<Record<PrescriptionRole, readonly [number, number]>> = {
  sphere: [-6, 4],
  cylinder: [-2, 0],
  addition: [0.75, 3],
  axis: [0, 180],
}

/** Draws of a category in a row that give no new request before it counts as exhausted. */
const MAX_MISSES = 200

export class ColdMixGenerator {
  readonly #random: Random
  readonly #catalogue: ColdCatalogue
  readonly #seen = new Set<string>()
  readonly #exhausted = new Set<ColdCategory>()

  constructor(catalogue: ColdCatalogue, seed = 20_000) {
    this.#catalogue = catalogue
    this.#random = new Random(seed)
  }

  #values(kind: Kind, field: string): readonly string[] {
    return this.#catalogue.kinds[kind.path]?.text[field] ?? []
  }

  #has(kind: Kind): boolean {
    const values = this.#catalogue.kinds[kind.path]
    return !!values && Object.values(values.text).some((list) => list.length > 0)
  }

  /** The categories the catalogue can feed. */
  #available(): ColdCategory[] {
    const has = {
      frames: this.#has(glasses) || this.#has(sunglasses),
      lenses: this.#has(lenses),
      lensFacets: this.#has(lenses),
      suggestions: [glasses, sunglasses, lenses, contactLenses, extras].some((kind) => this.#has(kind)),
      listing: this.#catalogue.priceList.text.brand.length > 0,
      otherKinds: [contactLenses, extras, semifinishedLenses, accessories].some((kind) => this.#has(kind)),
    }
    return (Object.keys(COLD_MIX_SHARES) as ColdCategory[]).filter((c) => has[c] && !this.#exhausted.has(c))
  }

  /**
   * The next `count` requests, none of them seen before by this generator, in the mix's shares (a category the
   * catalogue cannot feed leaves its share to the others). Throws when the catalogue cannot give that many.
   */
  take(count: number): ColdRequest[] {
    const taken: ColdRequest[] = []
    while (taken.length < count) {
      const categories = this.#available()
      if (categories.length === 0) {
        throw new Error(
          `the cold mix ran out of distinct requests after ${this.#seen.size}; the catalogue is too small`,
        )
      }
      // Quotas of what is left to take, in the shares of the categories still available (at least one each).
      const left = count - taken.length
      const weight = categories.reduce((sum, c) => sum + COLD_MIX_SHARES[c], 0)
      const quota = new Map(categories.map((c) => [c, Math.max(1, Math.round((left * COLD_MIX_SHARES[c]) / weight))]))
      const misses = new Map<ColdCategory, number>()
      for (;;) {
        const open = [...quota.entries()].filter(([, n]) => n > 0)
        if (taken.length >= count || open.length === 0) break
        const category = weighted(this.#random, open)
        let added = 0
        for (const request of this.#draw(category)) {
          if ((quota.get(category) ?? 0) <= 0 || taken.length >= count) break
          if (this.#seen.has(request.key)) continue
          this.#seen.add(request.key)
          taken.push(request)
          quota.set(category, (quota.get(category) ?? 0) - 1)
          added++
        }
        misses.set(category, added > 0 ? 0 : (misses.get(category) ?? 0) + 1)
        if ((misses.get(category) ?? 0) >= MAX_MISSES) {
          // This category has no new request left to give: the others take its share.
          this.#exhausted.add(category)
          break
        }
      }
    }
    return taken
  }

  /** One or a few requests of a category (a few: what is typed letter by letter). */
  #draw(category: ColdCategory): ColdRequest[] {
    switch (category) {
      case 'frames':
        return this.#frames()
      case 'lenses':
        return [this.#lens()]
      case 'lensFacets': {
        const { byPriceList, filters } = this.#lensFilters()
        return [facetsRequest(lenses, byPriceList, filters)]
      }
      case 'suggestions':
        return this.#suggestions()
      case 'listing':
        return [this.#listing()]
      case 'otherKinds':
        return [this.#otherKind()]
    }
  }

  #page(choices: readonly (readonly [number, number])[] = SEARCH_PAGES): number {
    return weighted(this.#random, choices)
  }

  #sort(kind: Kind): SortOrder[] {
    const other = kind === lenses ? 'refractionIndex' : kind.order[kind.order.length - 1]?.name
    const order = (property: string, direction: 'asc' | 'desc'): SortOrder[] => [
      { property, direction, ignoreCase: false },
    ]
    return weighted(this.#random, [
      [[], 75],
      [order('retailPrice', 'desc'), 15],
      [order('retailPrice', 'asc'), 5],
      [order(other ?? 'retailPrice', 'asc'), 5],
    ] as const)
  }

  #frames(): ColdRequest[] {
    const random = this.#random
    const kind = this.#has(sunglasses) && (!this.#has(glasses) || random.chance(0.2)) ? sunglasses : glasses
    const field = weighted(random, [
      ['brand', 40],
      ['model', 35],
      ['manufacturer', 25],
    ] as const)
    const values = this.#values(kind, field)
    if (values.length === 0) return []
    const value = random.pick(values)
    const extra: Record<string, string> = {}
    const colors = this.#values(kind, 'color')
    if (colors.length > 0 && random.chance(0.2)) {
      const color = random.pick(colors)
      extra.color = random.chance(0.5) ? color : normaliseKeyText(color).slice(0, random.int(3, 6))
    }
    const sizes = this.#values(kind, 'size')
    if (sizes.length > 0 && random.chance(0.08)) {
      const size = random.pick(sizes)
      extra.size = random.chance(0.5) ? size : size.slice(0, random.chance(0.5) ? 2 : 5)
    }
    const byPriceList = random.chance(0.2)
    // A quarter of the time, the text as it grows letter by letter, each prefix a search of its own.
    const texts = random.chance(0.25) ? growingPrefixes(value) : [fragment(random, value)]
    const page = this.#page()
    const size = random.chance(0.85) ? 10 : 20
    const sort = this.#sort(kind)
    return texts.map((text, index) =>
      searchRequest(
        'frames',
        kind,
        byPriceList,
        { [field]: text, ...extra },
        index === texts.length - 1 ? page : 0,
        size,
        sort,
      ),
    )
  }

  /** A power in quarter dioptres within `[from, to]` (a default range where open). */
  #power(role: PrescriptionRole, [from, to]: readonly [number | null, number | null]): number {
    const [low, high] = ROLE_RANGE[role]
    const a = from ?? Math.min(low, to ?? low)
    const b = to ?? Math.max(high, a)
    if (role === 'axis') return Math.round(this.#random.int(Math.ceil(a), Math.floor(b)) / 5) * 5
    return this.#random.int(Math.ceil(a * 4), Math.floor(b * 4)) / 4
  }

  /** A prescription within one of a kind's power zones: sphere (or dioptre) mostly, cylinder and add or axis some. */
  #prescription(kind: Kind): Record<string, number> {
    const random = this.#random
    const zones = this.#catalogue.kinds[kind.path]?.zones ?? []
    const zone = zones.length > 0 ? random.pick(zones) : {}
    const values: Record<string, number> = {}
    for (const filter of prescriptionFilters(kind)) {
      const role = filter.range.prescription as PrescriptionRole
      const bounds = zone[filter.name] ?? [null, null]
      const bounded = bounds[0] !== null || bounds[1] !== null
      const wanted =
        role === 'sphere'
          ? random.chance(0.9)
          : role === 'cylinder'
            ? random.chance(bounded ? 0.65 : 0.2)
            : role === 'addition'
              ? bounded && random.chance(0.7)
              : bounded && values.cylinder !== undefined
      if (wanted) values[filter.name] = this.#power(role, bounds)
    }
    return values
  }

  #numeric(kind: Kind, share: Readonly<Record<string, number>>): Record<string, number> {
    const random = this.#random
    const { names, tuples } = this.#catalogue.kinds[kind.path]?.numeric ?? { names: [], tuples: [] }
    if (tuples.length === 0) return {}
    const tuple = random.pick(tuples)
    const values: Record<string, number> = {}
    names.forEach((name, index) => {
      if (random.chance(share[name] ?? 0)) values[name] = tuple[index] as number
    })
    return values
  }

  #lensFilters(): { byPriceList: boolean; filters: Record<string, string | number> } {
    const random = this.#random
    const filters: Record<string, string | number> = {
      ...this.#numeric(lenses, { refractionIndex: 0.7, diameter: 0.55 }),
      ...this.#prescription(lenses),
    }
    if (random.chance(0.5)) {
      const field = weighted(random, [
        ['brand', 55],
        ['type', 25],
        ['manufacturer', 20],
      ] as const)
      const values = this.#values(lenses, field)
      if (values.length > 0) filters[field] = fragment(random, random.pick(values))
    }
    if (Object.keys(filters).length === 0) filters.sphere = this.#power('sphere', [null, null])
    return { byPriceList: random.chance(0.15), filters }
  }

  #lens(): ColdRequest {
    const { byPriceList, filters } = this.#lensFilters()
    return searchRequest('lenses', lenses, byPriceList, filters, this.#page(), 10, this.#sort(lenses))
  }

  #suggestions(): ColdRequest[] {
    const random = this.#random
    const fields: [Kind, string, number][] = [
      [glasses, 'brand', 30],
      [glasses, 'model', 20],
      [glasses, 'manufacturer', 8],
      [sunglasses, 'brand', 8],
      [lenses, 'brand', 14],
      [lenses, 'manufacturer', 8],
      [lenses, 'type', 4],
      [contactLenses, 'name', 5],
      [extras, 'frameBrand', 3],
    ]
    const usable = fields.filter(([kind, field]) => this.#values(kind, field).length > 0)
    if (usable.length === 0) return []
    const [kind, field] = weighted(
      random,
      usable.map(([k, f, w]) => [[k, f] as const, w] as const),
    )
    const value = random.pick(this.#values(kind, field))
    // Suggestions from the price list where the field is an entry's (frames: manufacturer, brand, model).
    const entryField = kind.itemFields.find((f) => f.name === field)?.entryColumn
    const byPriceList = !!entryField && random.chance(0.1)
    const limit = random.chance(0.2) ? 5 : 10
    const texts = random.chance(0.15)
      ? [typo(random, value)]
      : random.chance(0.5)
        ? growingPrefixes(value)
        : [fragment(random, value)]
    return texts.filter((q) => q.trim() !== '').map((q) => suggestRequest(kind, field, q, byPriceList, limit))
  }

  #listing(): ColdRequest {
    const random = this.#random
    const { text, prices, purchases } = this.#catalogue.priceList
    const filter: Record<string, string> = {}
    const typed = (name: 'manufacturer' | 'brand' | 'model') => {
      const values = text[name]
      if (values.length === 0) return
      const value = random.pick(values)
      filter[name] = name === 'model' && random.chance(0.3) ? value : fragment(random, value)
    }
    const choice = weighted(random, [
      ['model', 35],
      ['brand', 30],
      ['manufacturer', 15],
      ['brand and model', 10],
      ['none', 10],
    ] as const)
    if (choice === 'brand and model') {
      typed('brand')
      typed('model')
    } else if (choice !== 'none') {
      typed(choice)
    }
    const band = (values: readonly number[], from: string, to: string) => {
      if (values.length === 0) return
      const [a, b] = [random.pick(values), random.pick(values)].sort((x, y) => x - y) as [number, number]
      const which = random.int(0, 2)
      if (which !== 2) filter[from] = String(a)
      if (which !== 1) filter[to] = String(b)
    }
    if (choice === 'none' || random.chance(0.3)) band(prices, 'priceFrom', 'priceTo')
    if (random.chance(0.1)) band(purchases, 'purchaseFrom', 'purchaseTo')
    const sortColumn = random.pick(['ID', 'PARAMETERS', 'PRICE', 'PURCHASE'] as const)
    const sortDirection = random.pick(['ASC', 'DESC'] as const)
    return listingRequest(filter, sortColumn, sortDirection, this.#page(LISTING_PAGES))
  }

  #otherKind(): ColdRequest {
    const random = this.#random
    const kinds = [
      [contactLenses, 30],
      [extras, 30],
      [semifinishedLenses, 20],
      [accessories, 20],
    ] as const
    const kind = weighted(
      random,
      kinds.filter(([k]) => this.#has(k)),
    )
    const filters: Record<string, string | number> = {}
    const typed = (field: string, probability: number) => {
      const values = this.#values(kind, field)
      if (values.length > 0 && random.chance(probability)) filters[field] = fragment(random, random.pick(values))
    }
    if (kind === contactLenses) {
      typed(random.chance(0.6) ? 'name' : 'manufacturer', 0.6)
      Object.assign(filters, this.#numeric(kind, { diameter: 0.2, curvatureRadius: 0.15 }), this.#prescription(kind))
    } else if (kind === extras) {
      typed(random.pick(['frameBrand', 'frameModel', 'frameManufacturer']), 0.6)
      Object.assign(filters, this.#prescription(kind))
    } else if (kind === semifinishedLenses) {
      typed(random.chance(0.7) ? 'brand' : 'manufacturer', 0.5)
      Object.assign(filters, this.#numeric(kind, { refractionIndex: 0.6, diameter: 0.4 }))
    } else {
      typed(random.chance(0.4) ? 'category' : 'model', 1)
    }
    if (Object.keys(filters).length === 0) {
      const field = (TEXT_FIELDS[kind.path] ?? [])[0] as string
      filters[field] = fragment(random, random.pick(this.#values(kind, field)))
    }
    return searchRequest('otherKinds', kind, random.chance(0.1), filters, this.#page(), 10, this.#sort(kind))
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The scenarios

export interface ColdMixSetup {
  readonly db: Database
  /** Requests per measured run (default 20,000). */
  readonly requests: number
  /** Distinct requests sent before a side's first run, not measured (default a tenth, at most 1,000). */
  readonly warmup?: number
  readonly runs: number
  /** The concurrencies to measure it at (1 and the run's). */
  readonly connections: readonly number[]
  readonly seed?: number
}

/** The id of the cold mix at a concurrency (`--only cold` selects them all). */
export const coldMixId = (connections: number) => `cold-mix-${connections}-connection${connections === 1 ? '' : 's'}`

/**
 * The cold mix at each concurrency: one load scenario each, every request of every list distinct from every
 * other (the warm-ups' too), so no concurrency or run meets answers another left in the caches.
 */
export async function coldMixScenarios(setup: ColdMixSetup): Promise<LoadScenario[]> {
  const catalogue = await readColdCatalogue(setup.db.read as AnyDb)
  const generator = new ColdMixGenerator(catalogue, setup.seed)
  const warmup = setup.warmup ?? Math.min(1000, Math.ceil(setup.requests / 10))
  return [...new Set(setup.connections)].map((connections) => {
    const warmupList = warmup > 0 ? generator.take(warmup) : []
    const runs = Array.from({ length: setup.runs }, () => generator.take(setup.requests))
    return {
      type: 'load',
      id: coldMixId(connections),
      title:
        `Cold mix: ${setup.requests.toLocaleString('en-US')} distinct requests of an optician's day, each sent once, ` +
        `${connections} connection${connections === 1 ? '' : 's'}`,
      p99Target: 50,
      ratioTarget: 1,
      connections,
      requests: runs[0] ?? [],
      once: { warmup: warmupList, runs },
    } satisfies LoadScenario
  })
}
