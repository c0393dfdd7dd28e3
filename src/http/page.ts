import Type, { type TSchema } from 'typebox'

/*
 * Spring Data's paging, to the letter: the lenient `page`/`size`/`sort` resolver and the `PageImpl` envelope as
 * Jackson writes it. The rules: docs/api.md, "Paging".
 */

export interface SortOrder {
  readonly property: string
  readonly direction: 'asc' | 'desc'
  readonly ignoreCase: boolean
}

export interface PageRequest {
  readonly page: number
  readonly size: number
  readonly sort: readonly SortOrder[]
}

/** The first value of a query parameter (Spring reads the first of repeated values). */
function first(value: unknown): string | undefined {
  if (Array.isArray(value)) return first(value[0])
  return typeof value === 'string' ? value : undefined
}

const INT_MAX = 2_147_483_647

/** Java's `Integer.parseInt`: optional sign, ASCII digits, 32-bit range; anything else is not a number. */
function parseJavaInt(text: string): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined
  const value = Number(text)
  return value > INT_MAX || value < -INT_MAX - 1 ? undefined : value
}

/** Spring's `parseAndApplyBoundaries`: blank → absent; not a number → 0; negative → 0; above `upper` → `upper`. */
function parseBounded(raw: string | undefined, upper: number): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined
  const parsed = parseJavaInt(raw)
  if (parsed === undefined) return 0
  return parsed < 0 ? 0 : Math.min(parsed, upper)
}

/**
 * Reads `page`, `size` and `sort` the way Spring's `PageableHandlerMethodArgumentResolver` does: never an error.
 * Sort properties are returned as written; the caller checks them against what may be sorted.
 */
export function parsePageRequest(
  query: Record<string, unknown>,
  options: { readonly defaultSize: number; readonly maxSize: number },
): PageRequest {
  const page = parseBounded(first(query.page), INT_MAX) ?? 0
  let size = parseBounded(first(query.size), options.maxSize) ?? options.defaultSize
  if (size < 1) size = options.defaultSize
  if (size > options.maxSize) size = options.maxSize
  return { page, size, sort: parseSort(query.sort) }
}

/**
 * `prop[,prop…][,asc|desc][,ignorecase]`, repeatable; the direction applies to every property of its value. Parts
 * that are blank or only dots are dropped first, as Spring Data's `SortHandlerMethodArgumentResolver` drops them
 * (`sort=.` and `sort=.,asc` are no sort).
 */
export function parseSort(raw: unknown): SortOrder[] {
  const values = (Array.isArray(raw) ? raw : [raw]).filter((value): value is string => typeof value === 'string')
  const orders: SortOrder[] = []
  for (const value of values) {
    const parts = value.split(',').filter((part) => part.replaceAll('.', '').trim() !== '')
    let ignoreCase = false
    let direction: 'asc' | 'desc' = 'asc'
    if (parts.length > 0 && parts[parts.length - 1]?.trim().toLowerCase() === 'ignorecase') {
      ignoreCase = true
      parts.pop()
    }
    const last = parts[parts.length - 1]?.trim().toLowerCase()
    if (last === 'asc' || last === 'desc') {
      direction = last
      parts.pop()
    }
    for (const part of parts) {
      const property = part.trim()
      if (property !== '') orders.push({ property, direction, ignoreCase })
    }
  }
  return orders
}

/**
 * The total to report, counting only when the page cannot tell (Spring's `PageableExecutionUtils.getPage`):
 * a first page shorter than the size is everything; a non-empty last page ends at offset + its length.
 */
export async function resolveTotal(
  request: PageRequest,
  rowsOnPage: number,
  count: () => Promise<number>,
): Promise<number> {
  const offset = request.page * request.size
  if (offset === 0 && rowsOnPage < request.size) return rowsOnPage
  if (offset > 0 && rowsOnPage > 0 && rowsOnPage < request.size) return offset + rowsOnPage
  return count()
}

export interface Page<T> {
  content: T[]
  pageable: {
    pageNumber: number
    pageSize: number
    sort: SortState
    offset: number
    paged: true
    unpaged: false
  }
  totalPages: number
  totalElements: number
  last: boolean
  size: number
  number: number
  sort: SortState
  first: boolean
  numberOfElements: number
  empty: boolean
}

interface SortState {
  empty: boolean
  sorted: boolean
  unsorted: boolean
}

/** Builds Spring's `PageImpl` as Jackson writes it, including its correction of a total that the page contradicts. */
export function buildPage<T>(content: T[], request: PageRequest, totalElements: number): Page<T> {
  const offset = request.page * request.size
  const total = content.length > 0 && offset + request.size > totalElements ? offset + content.length : totalElements
  const totalPages = Math.ceil(total / request.size)
  const sorted = request.sort.length > 0
  const sort = (): SortState => ({ empty: !sorted, sorted, unsorted: !sorted })
  return {
    content,
    pageable: { pageNumber: request.page, pageSize: request.size, sort: sort(), offset, paged: true, unpaged: false },
    totalPages,
    totalElements: total,
    last: !(request.page + 1 < totalPages),
    size: request.size,
    number: request.page,
    sort: sort(),
    first: request.page === 0,
    numberOfElements: content.length,
    empty: content.length === 0,
  }
}

const SortStateSchema = Type.Object({ empty: Type.Boolean(), sorted: Type.Boolean(), unsorted: Type.Boolean() })

/** The envelope schema around an item schema; its key order is the order Jackson writes. */
export function PageSchema<T extends TSchema>(item: T, options: Record<string, unknown> = {}) {
  return Type.Object(
    {
      content: Type.Array(item),
      pageable: Type.Object({
        pageNumber: Type.Integer(),
        pageSize: Type.Integer(),
        sort: SortStateSchema,
        offset: Type.Integer(),
        paged: Type.Boolean(),
        unpaged: Type.Boolean(),
      }),
      totalPages: Type.Integer(),
      totalElements: Type.Integer(),
      last: Type.Boolean(),
      size: Type.Integer(),
      number: Type.Integer(),
      sort: SortStateSchema,
      first: Type.Boolean(),
      numberOfElements: Type.Integer(),
      empty: Type.Boolean(),
    },
    options,
  )
}

/** Query parameters of a paged route, documented as Spring reads them (lenient, so typed loosely). */
export const pagingQueryProperties = (defaultSize: number) => ({
  page: Type.Optional(
    Type.Unsafe<string | string[]>({
      type: ['string', 'array'],
      items: { type: 'string' },
      description: 'Zero-based page number (lenient, as Spring: not a number or negative → 0)',
      examples: ['0'],
    }),
  ),
  size: Type.Optional(
    Type.Unsafe<string | string[]>({
      type: ['string', 'array'],
      items: { type: 'string' },
      description: `Page size, default ${defaultSize}; below 1 → default, above MAX_PAGE_SIZE → MAX_PAGE_SIZE`,
      examples: [String(defaultSize)],
    }),
  ),
})
