import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import fc from 'fast-check'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { sql } from 'kysely'
import { pricesPath } from '../../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../../test/harness.js'
import { seedCatalogue } from '../../demo/demo-catalogue.js'
import { GLASS_PRICE_FILTERS, GLASS_PRICE_TEXT_FILTERS } from '../../domain/glass-price-fields.js'
import { SORT_COLUMNS } from '../../glass-prices/glass-price-schemas.js'
import { insertSkus, refreshMatview, skuFieldColumns } from '../freshness/catalog-repository.js'
import type { Filter, Kind } from '../kinds/kind.js'
import { kinds } from '../kinds/kinds.js'
import { facetFields } from '../search/facet-fields.js'
import type { SearchIndexService } from './service-types.js'

/*
 * The in-memory search index (SEARCH_INDEX=on) must answer exactly as SQL does (SEARCH_INDEX=off): same status,
 * same body, byte for byte. On a small demo catalogue (some of its texts recased, padded or with ё, so that sorts
 * and `ignorecase` meet values equal once normalised), two applications share one database; each generated
 * sequence mixes reads — searches of every kind in both modes with filters drawn from the catalogue's own values
 * (substrings, exact values, case, ё/е, padding, %, _, numbers written several ways, prescriptions), paging and
 * sorting; facets; suggestions; the glass price listing — with writes made beside the index: glass price entries
 * created, updated,
 * deleted, changed in bulk, imported and reverted over HTTP, SKUs added or edited and prices changed in plain SQL,
 * matviews refreshed. After some writes the index is caught up, after others not (it must then answer from SQL or
 * catch up by itself). A fifth of the reads also go to a pair with the result caches on. `FUZZ_RUNS` raises the
 * number of sequences; the index must have answered some of the reads itself.
 */

/** Generated sequences per database; `FUZZ_RUNS` raises it for a longer hunt. */
const RUNS = Math.floor(Number(process.env.FUZZ_RUNS)) || 60
/** SKUs per kind of the demo catalogue. */
const SCALE = 200

/** The application's search index, as src/app.ts decorates it. */
const searchIndexOf = (app: FastifyInstance): SearchIndexService => app.searchIndex

const searchPath = (kind: Kind) => `/api/v2/good/nomenclature/search/${kind.path}`

type Request = InjectOptions & { method: 'GET' | 'POST'; url: string; payload?: string }

/** Live pools of values: read at setup, grown by the writes, drawn from when a sequence is generated. */
type Pool = string[]
type KindPools = Map<string, Pool>

const fallback: Pool = ['none']
/** Draws from a pool as it is when the value is generated (so later sequences see values written earlier). */
const livePick = (pool: Pool) =>
  fc.nat().map((index) => (pool.length > 0 ? pool : fallback)[index % (pool.length || 1)]!)
/** `arbitrary` once in `1 + absent` draws, else undefined. */
const sometimes = <T>(arbitrary: fc.Arbitrary<T>, absent = 2) =>
  fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary })

const swapYo = (text: string) =>
  text.replace(/[еЕёЁ]/g, (letter) => ({ е: 'ё', Е: 'Ё', ё: 'е', Ё: 'Е' })[letter] ?? letter)
const flipCase = (text: string) =>
  [...text].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase())).join('')
const casings: Record<string, (text: string) => string> = {
  keep: (text) => text,
  upper: (text) => text.toUpperCase(),
  lower: (text) => text.toLowerCase(),
  flip: flipCase,
}
const pads = ['', '', '', '', ' ', '  ', '\t', '\u00a0']
/** Text that is no catalogue value: empty and blank, LIKE metacharacters, Cyrillic, case traps, nothing at all. */
const oddTexts = [
  '',
  ' ',
  '   ',
  '%',
  '_',
  '%%',
  '_%_',
  '\\',
  "'",
  'ё',
  'Ё',
  'е',
  'ЧЁРНЫЙ',
  'чёрн',
  'ТЁМНО',
  'оправа',
  'футляр',
  'zzqx',
  'İ',
  'ß',
  'ΟΔΟΣ',
  'ǅ',
  '🙂',
  'e\u0301',
  'no such value at all',
]

/** A text filter or query: a piece of a catalogue value in another case, ё/е swapped, padded — or an odd text. */
function textFrom(pool: Pool): fc.Arbitrary<string> {
  const piece = fc
    .record({
      value: livePick(pool),
      whole: fc.boolean(),
      start: fc.nat(),
      length: fc.nat(),
      casing: fc.constantFrom(...Object.keys(casings)),
      yo: fc.boolean(),
      before: fc.constantFrom(...pads),
      after: fc.constantFrom(...pads),
      meta: fc.constantFrom('', '', '', '', '', '%', '_'),
    })
    .map(({ value, whole, start, length, casing, yo, before, after, meta }) => {
      const chars = [...value]
      const from = whole ? 0 : start % chars.length
      const text = whole ? value : chars.slice(from, from + 1 + (length % (chars.length - from))).join('')
      const cased = casings[casing]!(yo ? swapYo(text) : text)
      return `${before}${meta}${cased}${meta === '%' ? '' : meta}${after}`
    })
  return fc.oneof({ weight: 8, arbitrary: piece }, { weight: 1, arbitrary: fc.constantFrom(...oddTexts) })
}

/** What typing with a typo gives: a character dropped, doubled or replaced. */
function typoFrom(pool: Pool): fc.Arbitrary<string> {
  return fc.tuple(textFrom(pool), fc.nat(), fc.constantFrom('drop', 'double', 'replace')).map(([text, at, typo]) => {
    const chars = [...text]
    if (chars.length < 3) return text
    const index = at % chars.length
    if (typo === 'drop') chars.splice(index, 1)
    else if (typo === 'double') chars.splice(index, 0, chars[index]!)
    else chars[index] = 'x'
    return chars.join('')
  })
}

/** A decimal from the database's text ('1.600') written as the API accepts it, or a near or odd value. */
function writeNumber(text: string, how: string): string | number {
  const number = Number(text)
  switch (how) {
    case 'number':
      return number
    case 'plain':
      return String(number)
    case 'zeros':
      return text.includes('.') ? `${text}00` : `${text}.00`
    case 'padded':
      return ` ${text} `
    case 'plus':
      return number >= 0 ? `+${text}` : text
    case 'bare':
      return text.replace(/^(-?)0\./, '$1.')
    case 'tail':
      // Equal as a double, different as a numeric.
      return text.includes('.') ? `${text}0000000000000000001` : `${text}.0000000000000000001`
    case 'near':
      return number + 0.05
    default:
      return text
  }
}
const numberForms = ['number', 'number', 'plain', 'plain', 'text', 'zeros', 'padded', 'plus', 'bare', 'tail', 'near']
const oddNumbers: (string | number | null)[] = [0, -1, 99999, 1e21, 1e-7, '0', ' ', '', null, 'abc', '1e3', '.5', '5.']

function numberFrom(pool: Pool): fc.Arbitrary<string | number | null> {
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc.tuple(livePick(pool), fc.constantFrom(...numberForms)).map(([text, how]) => writeNumber(text, how)),
    },
    { weight: 1, arbitrary: fc.constantFrom(...oddNumbers) },
  )
}

/** A prescription value in quarter dioptres (or whole degrees), written several ways; sometimes invalid. */
function prescriptionValue(filter: Filter): fc.Arbitrary<string | number | null> {
  const role = filter.match === 'covers' ? filter.range.prescription : undefined
  const [low, high] =
    role === 'axis' ? [0, 180] : role === 'cylinder' ? [-24, 12] : role === 'addition' ? [0, 14] : [-48, 32]
  const step = role === 'axis' ? 1 : 4
  const odd: (string | number | null)[] =
    role === 'axis'
      ? [181, -1, 1.5, '90.0', ' 45 ', '+90', '', null, 'x']
      : [0.3, 31, -30.25, '-0', '+0.25', ' -1.50 ', '-2.7500000000000000001', '1/4', '', null]
  const forms = ['number', 'number', 'plain', 'zeros', 'padded', 'plus', 'bare']
  return fc.oneof(
    {
      weight: 8,
      arbitrary: fc
        .tuple(fc.integer({ min: low, max: high }), fc.constantFrom(...forms))
        .map(([value, how]) => writeNumber(String(value / step), how)),
    },
    { weight: 1, arbitrary: fc.constantFrom(...odd) },
  )
}

const poolKey = (filter: Filter) => (filter.match === 'covers' ? filter.range.name : filter.attribute.name)

function filterValue(filter: Filter, pools: KindPools): fc.Arbitrary<string | number | null> {
  if (filter.prescription) return prescriptionValue(filter)
  const pool = pools.get(poolKey(filter)) ?? []
  if (filter.match === 'substring') {
    return fc.oneof({ weight: 12, arbitrary: textFrom(pool) }, { weight: 1, arbitrary: fc.constant(null) })
  }
  return numberFrom(pool)
}

/**
 * `exact` (beyond the contract): some text filter names, often those a body sets; rarely a name that is no text
 * filter (a 400 from both).
 */
function exactNames(names: readonly string[]): fc.Arbitrary<readonly string[] | undefined> {
  return sometimes(
    fc.oneof(
      { weight: 12, arbitrary: fc.subarray([...names], { minLength: 1 }) },
      { weight: 1, arbitrary: fc.constantFrom(['nope'], [names[0] ?? 'x', 'retailPrice']) },
    ),
    1,
  )
}

/** A search body: `byPriceList` (rarely missing or wrong), up to three of the kind's filters, sometimes `exact`. */
function searchBody(kind: Kind, pools: KindPools): fc.Arbitrary<Record<string, unknown>> {
  const filters = fc.array(
    fc.oneof(...kind.filters.map((filter) => fc.tuple(fc.constant(filter.name), filterValue(filter, pools)))),
    { maxLength: 3 },
  )
  const byPriceList = fc.oneof(
    { weight: 30, arbitrary: fc.boolean() },
    { weight: 1, arbitrary: fc.constantFrom(undefined, null, 'true') },
  )
  const extra = sometimes(fc.constantFrom({ unknownField: 'x' }, { byPricelist: true }), 15)
  const textNames = kind.filters.filter((filter) => filter.match === 'substring').map((filter) => filter.name)
  return fc.tuple(byPriceList, filters, extra, exactNames(textNames)).map(([mode, pairs, more, exact]) => ({
    byPriceList: mode,
    ...Object.fromEntries(pairs),
    ...more,
    ...(exact ? { exact } : {}),
  }))
}

/** `page` and `size` as Spring reads them: small, zero, large, past the end, blank or not a number. */
const pageValue = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 3 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('50', '100000', '-1', '', 'x', '2147483648') },
)
const sizeValue = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: fc.constantFrom('0', '1', '2', '3', '5', '10', '20', '50') },
  { weight: 1, arbitrary: fc.constantFrom('2000', '5000', '', 'x', '-3') },
)

/** `sort=field[,field][,asc|desc][,ignorecase]`, up to two values; rarely a field the kind does not have. */
function sortValues(kind: Kind): fc.Arbitrary<string[]> {
  const names = kind.itemFields.map((field) => field.name)
  const field = fc.oneof(
    { weight: 30, arbitrary: fc.constantFrom(...names) },
    { weight: 1, arbitrary: fc.constant('id') },
  )
  const one = fc
    .record({
      fields: fc.array(field, { minLength: 1, maxLength: 2 }),
      direction: fc.constantFrom('', 'asc', 'desc', 'DESC'),
      ignoreCase: fc.boolean(),
    })
    .map(({ fields, direction, ignoreCase }) => [...fields, direction, ignoreCase ? 'ignorecase' : ''].filter(Boolean))
    .map((parts) => parts.join(','))
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant<string[]>([]) },
    { weight: 3, arbitrary: fc.array(one, { maxLength: 2 }) },
  )
}

function withQuery(path: string, pairs: readonly [string, string | undefined][]): string {
  const query = new URLSearchParams()
  for (const [name, value] of pairs) if (value !== undefined) query.append(name, value)
  const text = query.toString()
  return text ? `${path}?${text}` : path
}

const jsonPost = (url: string, body: unknown): Request => ({
  method: 'POST',
  url,
  headers: { 'content-type': 'application/json' },
  payload: JSON.stringify(body),
})

function searchRequest(kind: Kind, pools: KindPools): fc.Arbitrary<Request> {
  return fc
    .record({ body: searchBody(kind, pools), page: pageValue, size: sizeValue, sort: sortValues(kind) })
    .map(({ body, page, size, sort }) =>
      jsonPost(
        withQuery(searchPath(kind), [
          ['page', page],
          ['size', size],
          ...sort.map((value): [string, string] => ['sort', value]),
        ]),
        body,
      ),
    )
}

function facetsRequest(kind: Kind, pools: KindPools): fc.Arbitrary<Request> {
  return searchBody(kind, pools).map((body) => jsonPost(`${searchPath(kind)}/facets`, body))
}

function suggestRequest(kind: Kind, pools: KindPools): fc.Arbitrary<Request> {
  const fields = [...new Set([...facetFields(kind, false).text, ...facetFields(kind, true).text].map((f) => f.name))]
  const field = fc.oneof(
    { weight: 20, arbitrary: fc.constantFrom(...fields) },
    { weight: 1, arbitrary: fc.constantFrom('retailPrice', 'nope', '') },
  )
  return fc
    .record({
      field,
      byPriceList: fc.constantFrom(undefined, 'true', 'false', 'false'),
      limit: fc.oneof(
        { weight: 3, arbitrary: fc.constant(undefined) },
        { weight: 3, arbitrary: fc.integer({ min: 1, max: 10 }).map(String) },
        { weight: 1, arbitrary: fc.constantFrom('0', '11', 'x') },
      ),
      typo: fc.boolean(),
    })
    .chain(({ field, byPriceList, limit, typo }) => {
      const pool = pools.get(field) ?? []
      return (typo ? typoFrom(pool) : textFrom(pool)).map((q) => ({
        method: 'GET' as const,
        url: withQuery('/api/v2/good/nomenclature/suggest', [
          ['kind', kind.path],
          ['field', field],
          ['q', q],
          ['byPriceList', byPriceList],
          ['limit', limit],
        ]),
      }))
    })
}

/** The values of the glass price list's columns: the entries' own, and every column a listing filter reads. */
interface GlassPools {
  manufacturer: Pool
  brand: Pool
  model: Pool
  price: Pool
  purchase: Pool
  [column: string]: Pool
}
const glassColumns = [
  ...new Set([
    'manufacturer',
    'brand',
    'model',
    'price',
    'purchase',
    ...GLASS_PRICE_FILTERS.flatMap((field) => (field.source.from === 'entry' ? [field.source.column] : [])),
  ]),
]

/** A bound of the listing: a price of the list written as the API accepts it, blank, or not a number. */
function moneyFrom(pool: Pool): fc.Arbitrary<string> {
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(livePick(pool), fc.constantFrom('text', 'plain', 'padded', 'zeros', 'tail', 'near'))
        .map(([text, how]) => String(writeNumber(text, how))),
    },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '0', '99999999.99', 'abc', '.5') },
  )
}

/**
 * A listing request: each described filter (domain/glass-price-fields.ts) sometimes, from its column's values (one
 * read from the SKUs: from the frames' values of that filter).
 */
function listingRequest(glass: GlassPools, frames: KindPools): fc.Arbitrary<Request> {
  const filters = (GLASS_PRICE_FILTERS as readonly (typeof GLASS_PRICE_FILTERS)[number][]).flatMap(
    (field): [string, fc.Arbitrary<string | undefined>][] => {
      if (field.match === 'text') {
        const { source } = field
        const pool = (source.from === 'entry' ? glass[source.column] : frames.get(source.filter)) ?? []
        return [[field.name, sometimes(textFrom(pool))]]
      }
      const pool = glass[field.source.column] ?? []
      return [
        [field.from.parameter, sometimes(moneyFrom(pool), 4)],
        [field.to.parameter, sometimes(moneyFrom(pool), 4)],
      ]
    },
  )
  return fc
    .record({
      ...Object.fromEntries(filters),
      sortColumn: sometimes(
        fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...SORT_COLUMNS) }, fc.constant('price')),
        1,
      ),
      sortDirection: sometimes(fc.constantFrom('ASC', 'DESC', 'DESC', 'desc'), 1),
      page: pageValue,
      size: sizeValue,
      exact: exactNames(GLASS_PRICE_TEXT_FILTERS),
    })
    .map(({ exact, ...query }) => ({
      method: 'GET' as const,
      url: withQuery(`${pricesPath}/list`, [
        ...(Object.entries(query) as [string, string | undefined][]),
        ...(exact ?? []).map((name): [string, string] => ['exact', name]),
      ]),
    }))
}

/** A write made beside the index. Picks (`pick`) are resolved against the data when the write runs. */
type Write =
  | { op: 'create'; manufacturer: string; brand: string; model: string; price: number | string; purchase: number }
  | { op: 'createForSku'; pick: number; price: number }
  | { op: 'update'; pick: number; price: number | string; rename: string | undefined }
  | { op: 'delete'; pick: number }
  | { op: 'bulk'; query: [string, string | undefined][]; body: Record<string, unknown> }
  | { op: 'import'; rows: { brand: string; model: string; price: string }[]; semicolon: boolean }
  | { op: 'revert'; pick: number }
  | { op: 'sku'; kind: string; pick: number; attribute: number; value: string | undefined }
  | { op: 'skuEdit'; kind: string; pick: number; attribute: number; value: string }
  | { op: 'sqlPrice'; kind: string; pick: number; delta: number }
  | { op: 'refresh'; kind: string | undefined; concurrently: boolean }

/** Values the writes bring in: Cyrillic with ё, case traps, LIKE metacharacters, padding. */
const newTexts = [
  'Ёжик',
  'ЧЁРНЫЙ матовый',
  'зелёный',
  'Special_50%',
  'x%y_z',
  'Straße',
  'Café',
  'İstanbul',
  'ΟΔΟΣ',
  '  padded  ',
  'Tab\tinside',
  'back\\slash',
  'new\nline',
  '🙂 smile',
  'ﬁne ligature',
]

const money = fc.integer({ min: 100, max: 60_000 })

function writeArbitrary(glass: GlassPools): fc.Arbitrary<Write> {
  const kindPath = fc.constantFrom(...kinds.map((kind) => kind.path))
  const text = fc.oneof({ weight: 3, arbitrary: livePick(glass.brand) }, fc.constantFrom(...newTexts))
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant('create' as const),
        manufacturer: fc.oneof({ weight: 3, arbitrary: livePick(glass.manufacturer) }, fc.constantFrom(...newTexts)),
        brand: text,
        model: fc.constantFrom('Тест', 'Ёж', 'QA_50%', 'Model', 'ЁЛКА'),
        price: fc.oneof(
          money,
          money.map((value) => `${value}.50`),
        ),
        purchase: money.map((value) => Math.floor(value / 3)),
      }),
    },
    { weight: 2, arbitrary: fc.record({ op: fc.constant('createForSku' as const), pick: fc.nat(), price: money }) },
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant('update' as const),
        pick: fc.nat(),
        price: fc.oneof(
          money,
          money.map((value) => `${value}.99`),
        ),
        rename: sometimes(fc.constantFrom(...newTexts), 3),
      }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('delete' as const), pick: fc.nat() }) },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('bulk' as const),
        query: fc
          .record({
            manufacturer: sometimes(textFrom(glass.manufacturer)),
            brand: sometimes(textFrom(glass.brand), 1),
            priceFrom: sometimes(moneyFrom(glass.price), 3),
            exact: sometimes(fc.constantFrom('brand', 'manufacturer'), 1),
          })
          .map((query) => Object.entries(query) as [string, string | undefined][]),
        body: fc.record({
          priceTypeBase: fc.constantFrom('RETAIL', 'PURCHASE'),
          priceTypeChange: fc.constantFrom('RETAIL', 'RETAIL', 'PURCHASE'),
          coefficient: fc.constantFrom(null, 0.9, 1.05, 1.15, 2.5),
          difference: fc.constantFrom(null, -10, 0, 25),
          round: fc.constantFrom('WHOLE', 'TENS', 'HUNDREDS', 'TO_INT'),
        }),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('import' as const),
        rows: fc.array(
          fc.record({ brand: text, model: fc.constantFrom('Imp', 'Импорт', 'IMP_%'), price: money.map(String) }),
          { minLength: 1, maxLength: 3 },
        ),
        semicolon: fc.boolean(),
      }),
    },
    { weight: 3, arbitrary: fc.record({ op: fc.constant('revert' as const), pick: fc.nat() }) },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('sku' as const),
        kind: kindPath,
        pick: fc.nat(),
        attribute: fc.nat(),
        value: sometimes(fc.constantFrom(...newTexts), 1),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('skuEdit' as const),
        kind: kindPath,
        pick: fc.nat(),
        attribute: fc.nat(),
        value: fc.constantFrom(...newTexts),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('sqlPrice' as const),
        kind: kindPath,
        pick: fc.nat(),
        delta: fc.constantFrom(-1000, -10, 10, 990),
      }),
    },
    {
      weight: 4,
      arbitrary: fc.record({
        op: fc.constant('refresh' as const),
        kind: sometimes(kindPath, 1),
        concurrently: fc.boolean(),
      }),
    },
  )
}

/**
 * Requests at the edges, sent first by every run: an axis written with decimals ('90.0' passes the prescription
 * check), numbers equal as doubles but not as decimals, case and ё/е in Cyrillic, Greek final sigma, LIKE
 * metacharacters.
 */
function edgeCases(): Step[] {
  const search = (kind: string, body: Record<string, unknown>, query = '') =>
    jsonPost(`/api/v2/good/nomenclature/search/${kind}${query}`, body)
  const requests: Request[] = [
    search('contact-lenses', { byPriceList: false, axis: '90.0' }),
    search('contact-lenses', { byPriceList: false, axis: 90, cylinder: '+0.75', dioptre: -3 }),
    search('lenses', { byPriceList: false, sphere: '-2.7500000000000000001' }),
    search('lenses', { byPriceList: false, refractionIndex: '1.6000000000000000001' }),
    search('lenses', { byPriceList: true, refractionIndex: ' 1.60 ', diameter: 70 }),
    search('glasses', { byPriceList: false, color: 'ЧЁРНЫЙ' }, '?sort=color,desc,ignorecase&size=50'),
    search('sunglasses', { byPriceList: true, brand: '%' }, '?sort=brand,model,ignorecase&sort=retailPrice,desc'),
    { method: 'GET', url: '/api/v2/good/nomenclature/suggest?kind=glasses&field=color&q=%CE%9F%CE%94%CE%9F%CE%A3' },
    { method: 'GET', url: `${pricesPath}/list?model=_&sortColumn=PARAMETERS&sortDirection=DESC&size=5` },
    jsonPost('/api/v2/good/nomenclature/search/lenses/facets', { byPriceList: true, manufacturer: 'ESSILOR ' }),
  ]
  return requests.map((request) => ({ type: 'read', request, cached: true }))
}

type Step =
  | { type: 'read'; request: Request; cached: boolean }
  | { type: 'write'; write: Write; via: 'sql' | 'index'; catchUp: boolean }

const describeRequest = (request: Request) =>
  `${request.method} ${request.url}${request.payload ? ` ${request.payload}` : ''}`

/** Where two bodies part, with some context. */
function firstDifference(a: string, b: string): string {
  let at = 0
  while (at < a.length && at < b.length && a[at] === b[at]) at++
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, at - 120), at + 120))
  return `first difference at character ${at}:\n  index: …${around(a)}…\n  sql:   …${around(b)}…`
}

/** A body without the moment a problem was answered (`timestamp`), the one member two answers may differ in. */
function withoutTimestamp(body: string): string {
  return body.replace(/"timestamp":"[^"]*"/, '"timestamp":""')
}

eachDatabase('the search index answers exactly as SQL does', (ctx) => {
  const pools = new Map<string, KindPools>()
  const glass: GlassPools = Object.assign(
    { manufacturer: [], brand: [], model: [], price: [], purchase: [] },
    Object.fromEntries(glassColumns.map((column) => [column, []])),
  )

  const distinct = async (query: ReturnType<typeof sql<{ value: string }>>): Promise<string[]> =>
    (await query.execute(ctx.db.primary)).rows.map((row) => String(row.value))

  /**
   * Writes some of each text value in another case, with a leading space or with ё: keys still match (they compare
   * normalised), while sorts, `ignorecase` and ties get values that differ only in what normalising removes.
   */
  async function varyTexts(kind: Kind): Promise<void> {
    for (const [table, attributes] of [
      [kind.skuTable, kind.attributes],
      [kind.priceTable, kind.attributes.filter((attribute) => attribute.entry !== 'none')],
    ] as const) {
      for (const attribute of attributes.filter((a) => a.type === 'text')) {
        const column = sql.ref(attribute.column)
        await sql`UPDATE ${sql.table(table)} SET ${column} = CASE id % 11
            WHEN 0 THEN lower(${column}) WHEN 1 THEN upper(${column}) WHEN 2 THEN ' ' || ${column}
            WHEN 3 THEN translate(${column}, 'еЕ', 'ёЁ') ELSE ${column} END
          WHERE id % 11 < 4`.execute(ctx.db.primary)
      }
    }
  }

  before(async () => {
    await seedCatalogue(ctx.db, { scale: SCALE })
    for (const kind of kinds) {
      await varyTexts(kind)
      await refreshMatview(ctx.db.primary, kind)
      const kindPools: KindPools = new Map()
      const mv = sql.table(kind.matview)
      const price = sql.table(kind.priceTable)
      for (const attribute of kind.attributes) {
        const column = sql.ref(attribute.column)
        const fromEntries = attribute.entry === 'none' ? sql`` : sql`UNION SELECT ${column} FROM ${price}`
        kindPools.set(
          attribute.name,
          await distinct(sql`SELECT value::text AS value FROM (SELECT ${column} AS value FROM ${mv} ${fromEntries}) v
            WHERE value IS NOT NULL ORDER BY 1 LIMIT 400`),
        )
      }
      for (const range of kind.ranges) {
        const point = range.sku === 'none' ? sql`` : sql`SELECT ${sql.ref(range.column)} FROM ${mv} UNION`
        const [from, to] = [sql.ref(`${range.column}_from`), sql.ref(`${range.column}_to`)]
        kindPools.set(
          range.name,
          await distinct(sql`SELECT value::text AS value FROM (${point} SELECT ${from} FROM ${price}
            UNION SELECT ${to} FROM ${price}) v (value) WHERE value IS NOT NULL ORDER BY 1 LIMIT 400`),
        )
      }
      pools.set(kind.path, kindPools)
    }
    for (const column of glassColumns) {
      glass[column]?.push(
        ...(await distinct(sql`SELECT DISTINCT ${sql.ref(column)}::text AS value FROM glasses_price ORDER BY 1`)),
      )
    }
  })
  const sqlApp = useTestApp(ctx, { env: { SEARCH_INDEX: 'off', RESULT_CACHE: 'off' } })
  // Two search threads here (the index's own and one beside it, replica.ts), one with the cache: both engines.
  const indexApp = useTestApp(ctx, { env: { SEARCH_INDEX: 'on', RESULT_CACHE: 'off', SEARCH_THREADS: '2' } })
  const cachedSqlApp = useTestApp(ctx, { env: { SEARCH_INDEX: 'off', RESULT_CACHE: 'on' } })
  const cachedIndexApp = useTestApp(ctx, { env: { SEARCH_INDEX: 'on', RESULT_CACHE: 'on', SEARCH_THREADS: '1' } })

  /** Grows the pools with the texts a write brought in, so later reads look for them. */
  function remember(kindPath: string, name: string, value: string): void {
    const pool = pools.get(kindPath)?.get(name)
    if (pool && !pool.includes(value)) pool.push(value)
    const glassPool = kindPath === 'glasses' ? glass[name] : undefined
    if (glassPool && !glassPool.includes(value)) glassPool.push(value)
  }

  let counter = 0
  const statusOf = (response: LightMyRequestResponse) => `${response.statusCode}`

  /** The row `pick` of a table in id order (modulo its size), or undefined when it is empty. */
  async function pickId(table: string, pick: number): Promise<number | undefined> {
    const { rows } = await sql<{ id: number }>`SELECT id FROM ${sql.table(table)} ORDER BY id
      OFFSET ${pick} % greatest(1, (SELECT count(*) FROM ${sql.table(table)})) LIMIT 1`.execute(ctx.db.primary)
    return rows[0]?.id
  }

  /** Runs one write; returns what it did, for the failure message. */
  async function runWrite(write: Write, app: FastifyInstance): Promise<string> {
    const kind = kinds.find((k) => k.path === (write as { kind?: string }).kind)
    switch (write.op) {
      case 'create': {
        const body = { ...write, op: undefined, model: `${write.model} ${++counter}` }
        const response = await app.inject(jsonPost(pricesPath, body))
        if (response.statusCode === 200) {
          for (const name of ['manufacturer', 'brand', 'model'] as const) remember('glasses', name, body[name].trim())
        }
        return `create ${JSON.stringify(body)} → ${statusOf(response)}`
      }
      case 'createForSku': {
        // An entry for a frame's keys: prices it if it was unpriced (else a 409, a duplicate).
        const id = await pickId('glasses_sku', write.pick)
        const { rows } = await sql<{ manufacturer: string; brand: string; model: string }>`
          SELECT manufacturer, brand, model FROM glasses_sku WHERE id = ${id ?? 0}`.execute(ctx.db.primary)
        if (!rows[0]) return 'createForSku: no SKU'
        const body = { ...rows[0], price: write.price, purchase: Math.floor(write.price / 2) }
        const response = await app.inject(jsonPost(pricesPath, body))
        return `createForSku ${JSON.stringify(body)} → ${statusOf(response)}`
      }
      case 'update': {
        const id = await pickId('glasses_price', write.pick)
        if (id === undefined) return 'update: no entry'
        const current = (await app.inject({ method: 'GET', url: `${pricesPath}/${id}` })).json()
        const body = { ...current, price: write.price, ...(write.rename ? { model: write.rename } : {}) }
        const response = await app.inject({ ...jsonPost(`${pricesPath}/${id}`, body), method: 'PUT' })
        if (response.statusCode === 200 && write.rename) remember('glasses', 'model', write.rename.trim())
        return `update ${id} ${JSON.stringify(body)} → ${statusOf(response)}`
      }
      case 'delete': {
        const id = await pickId('glasses_price', write.pick)
        if (id === undefined) return 'delete: no entry'
        const response = await app.inject({ method: 'DELETE', url: `${pricesPath}/${id}` })
        return `delete ${id} → ${statusOf(response)}`
      }
      case 'bulk': {
        const response = await app.inject(jsonPost(withQuery(`${pricesPath}/list`, write.query), write.body))
        const changed = response.headers['x-changed-count']
        return `bulk ${withQuery('', write.query)} ${JSON.stringify(write.body)} → ${statusOf(response)} (${changed})`
      }
      case 'import': {
        const separator = write.semicolon ? ';' : ','
        const quote = (value: string) => `"${value.replace(/"/g, '""')}"`
        const lines = [
          ['manufacturer', 'brand', 'model', 'price', 'purchase'].join(separator),
          ...write.rows.map((row) =>
            ['Импорт', row.brand, `${row.model} ${++counter}`, row.price, String(Math.floor(Number(row.price) / 2))]
              .map(quote)
              .join(separator),
          ),
        ]
        const response = await app.inject({
          method: 'POST',
          url: `${pricesPath}/import`,
          headers: { 'content-type': 'text/csv' },
          payload: `${lines.join('\n')}\n`,
        })
        if (response.statusCode === 200) {
          remember('glasses', 'manufacturer', 'Импорт')
          for (const row of write.rows) remember('glasses', 'brand', row.brand.trim())
        }
        return `import ${JSON.stringify(lines)} → ${statusOf(response)} ${response.body.slice(0, 120)}`
      }
      case 'revert': {
        const changes = (await app.inject({ method: 'GET', url: `${pricesPath}/changes?size=30` })).json().content as {
          id: number
        }[]
        if (changes.length === 0) return 'revert: no change'
        const batch = changes[write.pick % changes.length]!.id
        const response = await app.inject({ method: 'POST', url: `${pricesPath}/changes/${batch}/revert` })
        return `revert ${batch} → ${statusOf(response)}`
      }
      case 'sku': {
        const target = kind!
        const id = await pickId(target.skuTable, write.pick)
        if (id === undefined) return 'sku: no SKU to copy'
        const fields = skuFieldColumns(target)
        const { rows } = await sql<Record<string, string | null>>`SELECT ${sql.join(
          fields.map(([name, column]) => sql`${sql.ref(column)} AS ${sql.ref(name)}`),
        )} FROM ${sql.table(target.skuTable)} WHERE id = ${id}`.execute(ctx.db.primary)
        const sku: Record<string, string | null> = { ...rows[0], barcode: `EQ-${++counter}` }
        const texts = target.attributes.filter((attribute) => attribute.type === 'text')
        const changed = texts[write.attribute % texts.length]!
        if (write.value !== undefined) {
          sku[changed.name] = write.value
          remember(target.path, changed.name, write.value)
        }
        await insertSkus(ctx.db.primary, target, [sku])
        return `sku ${target.path} copy of ${id} ${JSON.stringify(sku)}`
      }
      case 'skuEdit': {
        const target = kind!
        const id = await pickId(target.skuTable, write.pick)
        if (id === undefined) return 'skuEdit: no SKU'
        const texts = target.attributes.filter((attribute) => attribute.type === 'text')
        const changed = texts[write.attribute % texts.length]!
        await sql`UPDATE ${sql.table(target.skuTable)} SET ${sql.ref(changed.column)} = ${write.value}
          WHERE id = ${id}`.execute(ctx.db.primary)
        remember(target.path, changed.name, write.value)
        return `skuEdit ${target.path} ${id} ${changed.name} = ${JSON.stringify(write.value)}`
      }
      case 'sqlPrice': {
        const target = kind!
        const id = await pickId(target.priceTable, write.pick)
        if (id === undefined) return 'sqlPrice: no entry'
        await sql`UPDATE ${sql.table(target.priceTable)}
          SET price = least(99999999.99, greatest(0, price + ${write.delta})), updated_at = now()
          WHERE id = ${id}`.execute(ctx.db.primary)
        return `sqlPrice ${target.path} ${id} ${write.delta}`
      }
      case 'refresh': {
        for (const target of kind ? [kind] : kinds) {
          await refreshMatview(ctx.db.primary, target, { concurrently: write.concurrently })
        }
        return `refresh ${kind?.path ?? 'all'}${write.concurrently ? ' concurrently' : ''}`
      }
    }
  }

  test('random reads between writes get the same status and body from the index as from SQL', async (t) => {
    await searchIndexOf(indexApp()).catchUp()
    await searchIndexOf(cachedIndexApp()).catchUp()

    const read = fc.oneof(
      ...kinds.map((kind) => {
        const kindPools = pools.get(kind.path)!
        return fc.oneof(
          { weight: 6, arbitrary: searchRequest(kind, kindPools) },
          { weight: 2, arbitrary: facetsRequest(kind, kindPools) },
          { weight: 2, arbitrary: suggestRequest(kind, kindPools) },
        )
      }),
      listingRequest(glass, pools.get('glasses') ?? new Map()),
    )
    const step: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          type: fc.constant('read' as const),
          request: read,
          cached: fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          type: fc.constant('write' as const),
          write: writeArbitrary(glass),
          via: fc.constantFrom('sql' as const, 'sql' as const, 'index' as const),
          catchUp: fc.boolean(),
        }),
      },
    )

    const counts = { reads: 0, ok: 0, nonEmpty: 0, exactNonEmpty: 0, writes: 0, statuses: new Map<number, number>() }
    const asksExact = (request: Request) => /[?&]exact=/.test(request.url) || /"exact":\[/.test(request.payload ?? '')
    const details = await fc.check(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 12 }), async (steps) => {
        const done: string[] = []
        for (const current of steps) {
          if (current.type === 'write') {
            counts.writes++
            const said = await runWrite(current.write, current.via === 'sql' ? sqlApp() : indexApp())
            done.push(`write via ${current.via} app: ${said}${current.catchUp ? ', then catch-up' : ''}`)
            assert.doesNotMatch(said, /→ 5\d\d/, `a write failed: ${said}`)
            if (current.catchUp) {
              await searchIndexOf(indexApp()).catchUp()
              await searchIndexOf(cachedIndexApp()).catchUp()
            }
            continue
          }
          const { request } = current
          counts.reads++
          const reference = await sqlApp().inject(request)
          assert.ok(
            reference.statusCode < 500,
            `SQL (SEARCH_INDEX=off) itself failed: ${describeRequest(request)}\n` +
              `→ ${reference.statusCode} ${reference.body}`,
          )
          counts.statuses.set(reference.statusCode, (counts.statuses.get(reference.statusCode) ?? 0) + 1)
          if (reference.statusCode === 200) {
            counts.ok++
            if (!/^\{"(content|suggestions|values)":\[\]/.test(reference.body) && !/"total":0,/.test(reference.body)) {
              counts.nonEmpty++
              if (asksExact(request)) counts.exactNonEmpty++
            }
          }
          const pairs: [string, FastifyInstance][] = [['SEARCH_INDEX=on', indexApp()]]
          if (current.cached) {
            pairs.push(['SEARCH_INDEX=on, RESULT_CACHE=on', cachedIndexApp()])
            pairs.push(['SEARCH_INDEX=off, RESULT_CACHE=on', cachedSqlApp()])
          }
          for (const [label, app] of pairs) {
            const response = await app.inject(request)
            const same =
              response.statusCode === reference.statusCode &&
              response.headers['content-type'] === reference.headers['content-type'] &&
              withoutTimestamp(response.body) === withoutTimestamp(reference.body)
            if (!same) {
              assert.fail(
                [
                  `${label} answered otherwise than SQL (SEARCH_INDEX=off, RESULT_CACHE=off) to`,
                  `  ${describeRequest(request)}`,
                  `status ${response.statusCode} vs ${reference.statusCode}; content-type ` +
                    `${response.headers['content-type']} vs ${reference.headers['content-type']}`,
                  firstDifference(withoutTimestamp(response.body), withoutTimestamp(reference.body)),
                  'steps of this sequence before it:',
                  ...done.map((line) => `  ${line.slice(0, 600)}`),
                ].join('\n'),
              )
            }
          }
          done.push(`read: ${describeRequest(request).slice(0, 400)} → ${reference.statusCode}`)
        }
      }),
      // The database is not reset between sequences, so shrinking would replay them on other data: none.
      { numRuns: RUNS, endOnFailure: true, examples: [[edgeCases()]] },
    )
    if (details.failed) {
      const error = details.errorInstance
      const said = error instanceof assert.AssertionError ? error.message : ((error as Error)?.stack ?? String(error))
      assert.fail(`${said}\n(fast-check seed ${details.seed}, sequence ${details.numRuns} of ${RUNS})`)
    }

    const served = searchIndexOf(indexApp()).served
    t.diagnostic(
      `reads ${counts.reads} (200: ${counts.ok}, with results: ${counts.nonEmpty}, exact with results: ` +
        `${counts.exactNonEmpty}), writes ${counts.writes}, ` +
        `statuses ${JSON.stringify(Object.fromEntries(counts.statuses))}, ` +
        `index answered ${served.index} (its search thread ${served.threads}), SQL ${served.sql}`,
    )
    // The generator reaches answers with results, not only refusals and empty pages.
    assert.ok(counts.ok > counts.reads / 2, `only ${counts.ok} of ${counts.reads} reads answered 200`)
    assert.ok(counts.nonEmpty > counts.ok / 3, `only ${counts.nonEmpty} of ${counts.ok} answers had results`)
    assert.ok(counts.exactNonEmpty > 0, 'no read with exact filters had results')
    // The index really answered: the equality above was not SQL against SQL throughout.
    assert.ok(served.index > 0, `the index answered no request (SQL answered ${served.sql})`)
    // Both threads answered: the search thread's tables, brought forward by publications after writes, and the
    // index's own where the search thread was behind.
    assert.ok(served.threads > 0, 'the search thread answered no request')
    assert.ok(served.index > served.threads, "the index's own thread answered no request")
  })
})
