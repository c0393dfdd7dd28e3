import {
  GLASS_PRICE_BAND_FIELDS,
  GLASS_PRICE_FILTER_PARAMETERS,
  GLASS_PRICE_FILTERS,
  type GLASS_PRICE_TEXT_FIELDS,
  GLASS_PRICE_TEXT_FILTERS,
  isBandParameter,
} from '../../../src/domain/glass-price-fields.js'
import type {
  ChangeAction,
  ChangeEntriesPage,
  ChangesPage,
  EntryBody,
  FilterName,
  HistoryPage,
  InputField,
  PriceEntry,
  PriceListPage,
  ProblemDetails,
  RevertConflict,
  RevertResult,
  SortColumn,
  SortDirection,
  TextFilterName,
} from '../api/types.js'
import { type Api, ApiError } from '../api.js'
import type { MessageKey } from '../i18n/index.js'

/*
 * The glass price list's endpoints as the desk calls them (`/api/v2/glasses/prices…`), through the app's Api for
 * its headers (language, Bearer token). A refusal is a PriceProblem carrying the problem's members the desk
 * explains: the field errors, the existing entry of a duplicate, a revert's conflicts.
 */

/** Where the glass price list's endpoints live. */
export const PRICES = '/api/v2/glasses/prices'

/** The listing's sort columns: the contract's four, and the service's others (one per column of the grid). */
const sortColumns: Readonly<Record<SortColumn, true>> = {
  ID: true,
  PARAMETERS: true,
  PRICE: true,
  PURCHASE: true,
  MANUFACTURER: true,
  BRAND: true,
  MODEL: true,
  UPDATED_ON: true,
  USER: true,
  MARKUP: true,
}
export const SORT_COLUMNS = Object.keys(sortColumns) as readonly SortColumn[]

/**
 * The listing's filters (query parameters), as the listing, the bulk change and the export read them: their one
 * description (src/domain/glass-price-fields.ts), which the service's query schema is built from too.
 */
export const FILTER_NAMES = GLASS_PRICE_FILTER_PARAMETERS satisfies readonly FilterName[]
/** The text filters: substrings, unless `exact` names them (a value picked from a list). */
export const TEXT_FILTER_NAMES = GLASS_PRICE_TEXT_FILTERS satisfies readonly TextFilterName[]
/** Whether a filter is one of the text filters. */
export const isTextFilter = (name: string): name is TextFilterName =>
  (TEXT_FILTER_NAMES as readonly string[]).includes(name)

/** The labels the description names, each a message of the catalogues (a type error names one that is not). */
type DescribedLabel =
  | (typeof GLASS_PRICE_TEXT_FIELDS)[number]['label' | 'formLabel']
  | (typeof GLASS_PRICE_BAND_FIELDS)[number]['from' | 'to']['label' | 'formLabel']
  | (typeof GLASS_PRICE_BAND_FIELDS)[number]['short']
const message = (key: DescribedLabel): MessageKey => key

/** A filter input as the desk draws it: its parameter, whether a decimal, its labels in the grid and the forms. */
export interface FilterInput {
  readonly name: FilterName
  readonly decimal: boolean
  readonly label: MessageKey
  readonly formLabel: MessageKey
  /** Read from the SKUs the entries price (their values are the catalogue's, not the price list's). */
  readonly fromSkus: boolean
}
/** Every filter's inputs, in the description's order: a text filter's one, a band's two (from, to). */
export const FILTER_INPUTS: readonly FilterInput[] = GLASS_PRICE_FILTERS.flatMap((field): FilterInput[] =>
  field.match === 'text'
    ? [
        {
          name: field.name,
          decimal: false,
          label: message(field.label),
          formLabel: message(field.formLabel),
          fromSkus: field.source.from === 'sku',
        },
      ]
    : [field.from, field.to].map((bound) => ({
        name: bound.parameter,
        decimal: true,
        label: message(bound.label),
        formLabel: message(bound.formLabel),
        fromSkus: false,
      })),
)
/** The labels of a filter input, by its name. */
export const filterInput = (name: FilterName): FilterInput =>
  FILTER_INPUTS.find((input) => input.name === name) as FilterInput
/** Each band's parameters and the short name of its value ("розница"), for a change's words. */
export const FILTER_BANDS: readonly {
  readonly from: FilterName
  readonly to: FilterName
  readonly short: MessageKey
}[] = GLASS_PRICE_BAND_FIELDS.map((field) => ({
  from: field.from.parameter,
  to: field.to.parameter,
  short: message(field.short),
}))
export type Filters = Readonly<Partial<Record<FilterName, string>>> & {
  /** The text filters compared whole (the API's `exact`), not as substrings. */
  readonly exact?: readonly TextFilterName[]
}

/** The query parameters of the filters: blank ones left out, `exact` for the set text filters it names. */
export function filterParams(filters: Filters, decimal: (value: string) => string = (value) => value): URLSearchParams {
  const params = new URLSearchParams()
  for (const name of FILTER_NAMES) {
    const value = filters[name]?.trim()
    if (value) params.set(name, isBandParameter(name) ? decimal(value) : value)
  }
  for (const name of filters.exact ?? []) if (filters[name]?.trim()) params.append('exact', name)
  return params
}

/** `filters` with `name` set to `value`, exact or (typed) a substring. */
export function withTextFilter(filters: Filters, name: TextFilterName, value: string, exact: boolean): Filters {
  const others = (filters.exact ?? []).filter((other) => other !== name)
  return { ...filters, [name]: value, exact: exact ? [...others, name] : others }
}

/** The change log's filters: who (a part of the name), the days from and to (inclusive), the kinds of change. */
export interface ChangeLogFilter {
  readonly user?: string
  readonly from?: string
  readonly to?: string
  readonly actions?: readonly ChangeAction[]
}

export interface ListQuery {
  readonly filters: Filters
  readonly page: number
  readonly size: number
  /** Absent: the listing's own order (by id). */
  readonly sort?: { readonly column: SortColumn; readonly direction: SortDirection }
}

/** The body of create and update: what was typed, prices as decimal text (never through a float). */
export type EntryInput = Readonly<Record<InputField, string>>
const inputFields: Readonly<Record<InputField, true>> = {
  manufacturer: true,
  brand: true,
  model: true,
  price: true,
  purchase: true,
}
export const INPUT_FIELDS = Object.keys(inputFields) as readonly InputField[]

/** The problem members the desk reads beside the detail. */
export interface ProblemBody extends Partial<Omit<ProblemDetails, 'conflicts'>> {
  /** A duplicate key (409 `duplicate-key`): the entry that has it. */
  readonly existingId?: number
  /** A revert whose every entry conflicts (409 `revert-conflicts`). */
  readonly conflictCount?: number
  readonly conflicts?: readonly RevertConflict[]
  /** A change reverted before (409 `already-reverted`). */
  readonly revertedBy?: number
}

/** A refusal of the price list's API: the status, the detail as `message`, and the problem's members. */
export class PriceProblem extends ApiError {
  constructor(
    status: number,
    readonly problem: ProblemBody,
  ) {
    super(status, problem.detail ?? problem.title ?? `HTTP ${status}`)
  }

  /** The message of each field the API refused, by field name. */
  fieldErrors(): Readonly<Record<string, string>> {
    return Object.fromEntries((this.problem.errors ?? []).map((error) => [error.field, error.message]))
  }
}

/** The entry with the ETag of its version, which a write sends back as `If-Match`. */
export interface TaggedEntry {
  readonly entry: PriceEntry
  readonly etag: string
}

/** A decimal as typed for the API: spaces dropped, a decimal comma read as a point. */
export const decimalText = (typed: string): string => typed.replace(/[\s\u00a0]/g, '').replace(',', '.')

export class PricesApi {
  constructor(private readonly api: Api) {}

  private async send(
    path: string,
    init: { method?: string; body?: unknown; ifMatch?: string; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const extra: Record<string, string> = {}
    if (init.body !== undefined) extra['content-type'] = 'application/json'
    if (init.ifMatch !== undefined) extra['if-match'] = init.ifMatch
    const response = await fetch(`${PRICES}${path}`, {
      method: init.method ?? 'GET',
      headers: this.api.headers(extra),
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      ...(init.signal ? { signal: init.signal } : {}),
    })
    if (!response.ok) {
      const problem = (await response.json().catch(() => ({}))) as ProblemBody
      throw new PriceProblem(response.status, problem)
    }
    return response
  }

  private async tagged(response: Response): Promise<TaggedEntry> {
    return { entry: (await response.json()) as PriceEntry, etag: response.headers.get('etag') ?? '' }
  }

  async list(query: ListQuery, signal: AbortSignal): Promise<PriceListPage> {
    const params = filterParams(query.filters, decimalText)
    params.set('page', String(query.page))
    params.set('size', String(query.size))
    if (query.sort) {
      params.set('sortColumn', query.sort.column)
      params.set('sortDirection', query.sort.direction)
    }
    return (await this.send(`/list?${params}`, { signal })).json() as Promise<PriceListPage>
  }

  async read(id: number, signal?: AbortSignal): Promise<TaggedEntry> {
    return this.tagged(await this.send(`/${id}`, signal ? { signal } : {}))
  }

  async create(input: EntryInput): Promise<TaggedEntry> {
    return this.tagged(await this.send('', { method: 'POST', body: bodyOf(input) }))
  }

  async update(id: number, input: EntryInput, etag: string): Promise<TaggedEntry> {
    return this.tagged(await this.send(`/${id}`, { method: 'PUT', body: bodyOf(input), ifMatch: etag }))
  }

  async remove(id: number, etag: string): Promise<void> {
    await this.send(`/${id}`, { method: 'DELETE', ifMatch: etag })
  }

  async history(id: number, page: number, signal: AbortSignal): Promise<HistoryPage> {
    return (await this.send(`/${id}/history?page=${page}&size=20`, { signal })).json() as Promise<HistoryPage>
  }

  async changes(page: number, size: number, signal: AbortSignal, filter: ChangeLogFilter = {}): Promise<ChangesPage> {
    const params = new URLSearchParams({ page: String(page), size: String(size) })
    for (const name of ['user', 'from', 'to'] as const) {
      const value = filter[name]?.trim()
      if (value) params.set(name, value)
    }
    for (const action of filter.actions ?? []) params.append('action', action)
    return (await this.send(`/changes?${params}`, { signal })).json() as Promise<ChangesPage>
  }

  async changeEntries(batch: number, page: number, signal: AbortSignal): Promise<ChangeEntriesPage> {
    const answer = await this.send(`/changes/${batch}/entries?page=${page}&size=20`, { signal })
    return answer.json() as Promise<ChangeEntriesPage>
  }

  async revert(batch: number): Promise<RevertResult> {
    return (await this.send(`/changes/${batch}/revert`, { method: 'POST' })).json() as Promise<RevertResult>
  }
}

function bodyOf(input: EntryInput): EntryBody {
  return {
    manufacturer: input.manufacturer,
    brand: input.brand,
    model: input.model,
    price: decimalText(input.price),
    purchase: decimalText(input.purchase),
  }
}
