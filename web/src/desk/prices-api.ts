import { type Api, ApiError } from '../api.js'

/*
 * The glass price list's endpoints as the desk calls them (`/api/v2/glasses/prices…`), through the app's Api for
 * its headers (language, Bearer token). A refusal is a PriceProblem carrying the problem's members the desk
 * explains: the field errors, the existing entry of a duplicate, a revert's conflicts.
 */

/** Where the glass price list's endpoints live. */
export const PRICES = '/api/v2/glasses/prices'

/** An entry as read, created and updated; prices are JSON numbers of at most 2 decimals. */
export interface PriceEntry {
  readonly id: number
  readonly manufacturer: string
  readonly brand: string
  readonly model: string
  readonly price: number
  readonly purchase: number
}

/** A listing row: the entry with the day and the user of its last change. */
export interface PriceRow extends PriceEntry {
  readonly lastUpdatedOn: string
  readonly user: string
}

export interface PageOf<T> {
  readonly content: readonly T[]
  readonly totalElements: number
  readonly totalPages: number
  readonly number: number
  readonly size: number
}

export const SORT_COLUMNS = ['ID', 'PARAMETERS', 'PRICE', 'PURCHASE'] as const
export type SortColumn = (typeof SORT_COLUMNS)[number]
export type SortDirection = 'ASC' | 'DESC'

/** The listing's filters (query parameters), as the listing, the bulk change and the export read them. */
export const FILTER_NAMES = [
  'manufacturer',
  'brand',
  'model',
  'priceFrom',
  'priceTo',
  'purchaseFrom',
  'purchaseTo',
] as const
export type FilterName = (typeof FILTER_NAMES)[number]
/** The text filters: substrings, unless `exact` names them (a value picked from a list). */
export const TEXT_FILTER_NAMES = ['manufacturer', 'brand', 'model'] as const
export type TextFilterName = (typeof TEXT_FILTER_NAMES)[number]
export type Filters = Readonly<Partial<Record<FilterName, string>>> & {
  /** The text filters compared whole (the API's `exact`), not as substrings. */
  readonly exact?: readonly TextFilterName[]
}

/** The query parameters of the filters: blank ones left out, `exact` for the set text filters it names. */
export function filterParams(filters: Filters, decimal: (value: string) => string = (value) => value): URLSearchParams {
  const params = new URLSearchParams()
  for (const name of FILTER_NAMES) {
    const value = filters[name]?.trim()
    if (value) params.set(name, name.endsWith('From') || name.endsWith('To') ? decimal(value) : value)
  }
  for (const name of filters.exact ?? []) if (filters[name]?.trim()) params.append('exact', name)
  return params
}

/** `filters` with `name` set to `value`, exact or (typed) a substring. */
export function withTextFilter(filters: Filters, name: TextFilterName, value: string, exact: boolean): Filters {
  const others = (filters.exact ?? []).filter((other) => other !== name)
  return { ...filters, [name]: value, exact: exact ? [...others, name] : others }
}

export interface ListQuery {
  readonly filters: Filters
  readonly page: number
  readonly size: number
  /** Absent: the listing's own order (by id). */
  readonly sort?: { readonly column: SortColumn; readonly direction: SortDirection }
}

/** The body of create and update: what was typed, prices as decimal text (never through a float). */
export interface EntryInput {
  readonly manufacturer: string
  readonly brand: string
  readonly model: string
  readonly price: string
  readonly purchase: string
}
export const INPUT_FIELDS = ['manufacturer', 'brand', 'model', 'price', 'purchase'] as const
export type InputField = (typeof INPUT_FIELDS)[number]

export type ChangeAction = 'CREATE' | 'UPDATE' | 'DELETE' | 'BULK_CHANGE' | 'IMPORT' | 'REVERT'

export interface HistoryItem {
  readonly batch: number
  readonly action: ChangeAction
  readonly changedAt: string
  readonly user: string
  readonly changes: readonly { field: InputField; oldValue: string | number | null; newValue: string | number | null }[]
}

export interface PriceChange {
  readonly id: number
  readonly action: ChangeAction
  readonly createdAt: string
  readonly user: string
  readonly changedCount: number
  readonly parameters: Readonly<Record<string, unknown>>
  readonly reverts: number | null
  readonly revertedBy: number | null
}

export type ConflictReason = 'CHANGED' | 'DELETED' | 'EXISTS' | 'DUPLICATE'
export interface RevertConflict {
  readonly entryId: number
  readonly reason: ConflictReason
}

export interface RevertResult {
  readonly batch: number
  readonly reverted: number
  readonly restoredCount: number
  readonly conflictCount: number
  readonly conflicts: readonly RevertConflict[]
}

/** The problem members the desk reads beside the detail. */
export interface ProblemBody {
  readonly detail?: string
  readonly title?: string
  readonly code?: string
  readonly errors?: readonly { field: string; message: string }[]
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

  async list(query: ListQuery, signal: AbortSignal): Promise<PageOf<PriceRow>> {
    const params = filterParams(query.filters, decimalText)
    params.set('page', String(query.page))
    params.set('size', String(query.size))
    if (query.sort) {
      params.set('sortColumn', query.sort.column)
      params.set('sortDirection', query.sort.direction)
    }
    return (await this.send(`/list?${params}`, { signal })).json() as Promise<PageOf<PriceRow>>
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

  async history(id: number, page: number, signal: AbortSignal): Promise<PageOf<HistoryItem>> {
    return (await this.send(`/${id}/history?page=${page}&size=20`, { signal })).json() as Promise<PageOf<HistoryItem>>
  }

  async changes(page: number, size: number, signal: AbortSignal): Promise<PageOf<PriceChange>> {
    return (await this.send(`/changes?page=${page}&size=${size}`, { signal })).json() as Promise<PageOf<PriceChange>>
  }

  async revert(batch: number): Promise<RevertResult> {
    return (await this.send(`/changes/${batch}/revert`, { method: 'POST' })).json() as Promise<RevertResult>
  }
}

function bodyOf(input: EntryInput): Record<InputField, string> {
  return {
    manufacturer: input.manufacturer,
    brand: input.brand,
    model: input.model,
    price: decimalText(input.price),
    purchase: decimalText(input.purchase),
  }
}
