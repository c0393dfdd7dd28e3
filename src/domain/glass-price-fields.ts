/*
 * The glass price listing's filters, described once. The listing, the bulk change and the export select with them;
 * the API's query schema (and so OpenAPI), the SQL conditions, the search index's listing, the equality test's
 * generator and the desk's filter form are all built from this list, so a filter is added here (with its labels'
 * translations) and nowhere else. It lives in domain/ because both the service's layers (the price list and the
 * search index below it) and the web app read it.
 *
 * Each filter has:
 * - `name`: for a text filter the query parameter itself; a band's parameters are `from` and `to`;
 * - `source`: where its value is read: a column of the price list's entries (`glasses_price` and the index's price
 *   table name it alike), or an attribute of the SKUs an entry prices, as the catalogue shows them (the frames
 *   kind's filter of that name in price-list mode: an entry is selected when at least one of its SKUs matches);
 * - `match`: `text`, a substring of the value as keys are compared (case, ё/е, spacing), or the whole value when
 *   the query's `exact` names the filter; `band`, an inclusive range of a decimal (either bound may be absent);
 * - `sort`: the listing's sort column ordering by this value alone, `contract` when the contract names it;
 * - what the OpenAPI document and the desk say of it: an example per parameter, the web app's label message keys.
 */

/** Where a filter's value is read: a column of the entry (the same name in SQL and in the index). */
export interface EntryColumnSource {
  readonly from: 'entry'
  readonly column: string
}
/**
 * Where a filter's value is read: an attribute the entries do not carry, of the SKUs each entry prices (the frames
 * kind's filter `filter`, as its price-list mode reads it: through the catalogue's matview).
 */
export interface SkuAttributeSource {
  readonly from: 'sku'
  readonly filter: string
}
export type GlassPriceFilterSource = EntryColumnSource | SkuAttributeSource

/** A sort column ordering by the filter's value alone. */
export interface FilterSort {
  readonly key: string
  /** Named by the contract (its sort columns come first, in this list's order). */
  readonly contract?: boolean
}

export interface TextFilterField {
  readonly name: string
  readonly source: GlassPriceFilterSource
  readonly match: 'text'
  readonly sort?: FilterSort
  /** The OpenAPI example. */
  readonly example: string
  /** The desk's message keys (web/src/i18n) of its label in the grid's filter bar and in the other forms. */
  readonly label: string
  readonly formLabel: string
}

export interface BandBound {
  readonly parameter: string
  readonly example: string
  /** The desk's message keys of its label in the grid's filter bar and in the other forms (bulk change, download). */
  readonly label: string
  readonly formLabel: string
}

export interface BandFilterField {
  readonly name: string
  readonly source: GlassPriceFilterSource
  readonly match: 'band'
  readonly sort?: FilterSort
  /** What is compared, for the OpenAPI document ("Retail price ≥ this (inclusive)"). */
  readonly description: string
  readonly from: BandBound
  readonly to: BandBound
  /** The desk's message key of the value's short name in a change's words ("розница от 3000 до 5000"). */
  readonly short: string
}

export type GlassPriceFilterField = TextFilterField | BandFilterField

export const GLASS_PRICE_FILTERS = [
  {
    name: 'manufacturer',
    source: { from: 'entry', column: 'manufacturer' },
    match: 'text',
    sort: { key: 'MANUFACTURER' },
    example: 'EssilorLuxottica',
    label: 'deskManufacturer',
    formLabel: 'manufacturer',
  },
  {
    name: 'brand',
    source: { from: 'entry', column: 'brand' },
    match: 'text',
    sort: { key: 'BRAND' },
    example: 'Ray-Ban',
    label: 'deskBrand',
    formLabel: 'brand',
  },
  {
    name: 'model',
    source: { from: 'entry', column: 'model' },
    match: 'text',
    sort: { key: 'MODEL' },
    example: 'RX',
    label: 'deskModel',
    formLabel: 'model',
  },
  {
    name: 'color',
    source: { from: 'sku', filter: 'color' },
    match: 'text',
    example: 'чёрный',
    label: 'deskColor',
    formLabel: 'color',
  },
  {
    name: 'price',
    source: { from: 'entry', column: 'price' },
    match: 'band',
    sort: { key: 'PRICE', contract: true },
    description: 'Retail price',
    from: { parameter: 'priceFrom', example: '5000', label: 'deskPriceFrom', formLabel: 'retailFrom' },
    to: { parameter: 'priceTo', example: '30000', label: 'deskPriceTo', formLabel: 'retailTo' },
    short: 'retailShort',
  },
  {
    name: 'purchase',
    source: { from: 'entry', column: 'purchase' },
    match: 'band',
    sort: { key: 'PURCHASE', contract: true },
    description: 'Purchase price',
    from: { parameter: 'purchaseFrom', example: '1000', label: 'deskPurchaseFrom', formLabel: 'purchaseFrom' },
    to: { parameter: 'purchaseTo', example: '20000', label: 'deskPurchaseTo', formLabel: 'purchaseTo' },
    short: 'purchaseShort',
  },
] as const satisfies readonly GlassPriceFilterField[]

type Described = (typeof GLASS_PRICE_FILTERS)[number]
type TextRow = Extract<Described, { readonly match: 'text' }>
type BandRow = Extract<Described, { readonly match: 'band' }>

/** The text filters' names (also their query parameters), in the description's order. */
export type GlassPriceTextFilter = TextRow['name']
/** The bands' query parameters. */
export type GlassPriceBandParameter = BandRow['from']['parameter'] | BandRow['to']['parameter']
/** Every query parameter of the filters but `exact`. */
export type GlassPriceFilterParameter = GlassPriceTextFilter | GlassPriceBandParameter
/** The sort columns the filters name. */
export type FilterSortColumn = Extract<Described, { readonly sort: FilterSort }>['sort']['key']

const isText = (field: Described): field is TextRow => field.match === 'text'
const isBand = (field: Described): field is BandRow => field.match === 'band'

/** The text filters, in the description's order. */
export const GLASS_PRICE_TEXT_FIELDS: readonly TextRow[] = GLASS_PRICE_FILTERS.filter(isText)
/** The bands, in the description's order. */
export const GLASS_PRICE_BAND_FIELDS: readonly BandRow[] = GLASS_PRICE_FILTERS.filter(isBand)

/** The text filters' names: what `exact` may name. */
export const GLASS_PRICE_TEXT_FILTERS: readonly GlassPriceTextFilter[] = GLASS_PRICE_TEXT_FIELDS.map(
  (field) => field.name,
)

/** Every query parameter of the filters but `exact`: the text filters, then each band's bounds. */
export const GLASS_PRICE_FILTER_PARAMETERS: readonly GlassPriceFilterParameter[] = [
  ...GLASS_PRICE_TEXT_FILTERS,
  ...GLASS_PRICE_BAND_FIELDS.flatMap((field) => [field.from.parameter, field.to.parameter]),
]

/**
 * A filter's sort: the listing ordered by the filter's entry column alone (text normalised as the keys). A filter
 * read from the SKUs sorts nothing: an entry prices many SKUs.
 */
export interface FilterSortOrder {
  readonly key: FilterSortColumn
  readonly column: string
  /** Named by the contract. */
  readonly contract: boolean
  /** A text column, compared normalised; else a number. */
  readonly text: boolean
}
/** The filters' sorts, in the description's order. */
export const GLASS_PRICE_FILTER_SORTS: readonly FilterSortOrder[] = (
  GLASS_PRICE_FILTERS as readonly GlassPriceFilterField[]
).flatMap((field) =>
  field.sort && field.source.from === 'entry'
    ? [
        {
          key: field.sort.key as FilterSortColumn,
          column: field.source.column,
          contract: field.sort.contract ?? false,
          text: field.match === 'text',
        },
      ]
    : [],
)

/** The text filters read from the SKUs an entry prices (through the catalogue's matview), not from the entry. */
export const GLASS_PRICE_SKU_FILTERS: readonly GlassPriceTextFilter[] = GLASS_PRICE_TEXT_FIELDS.filter(
  (field) => field.source.from === 'sku',
).map((field) => field.name)

/** Whether a filter parameter is a band's bound (a decimal). */
export const isBandParameter = (name: string): name is GlassPriceBandParameter =>
  GLASS_PRICE_BAND_FIELDS.some((field) => field.from.parameter === name || field.to.parameter === name)

/**
 * Active filters: text trimmed and non-empty, bounds as canonical decimal text; absent = no filter. `exact`: the
 * set text filters compared whole (equal normal forms), in the description's order; absent when none is.
 */
export interface GlassPriceFilter extends Readonly<Partial<Record<GlassPriceFilterParameter, string>>> {
  readonly exact?: readonly GlassPriceTextFilter[]
}

/** Whether a filter reads the SKUs' attributes (so the catalogue's matview), besides the entries. */
export const readsSkus = (filter: GlassPriceFilter): boolean =>
  GLASS_PRICE_SKU_FILTERS.some((name) => filter[name] !== undefined)
