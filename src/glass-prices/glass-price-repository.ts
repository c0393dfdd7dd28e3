import { type Expression, type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely'
import { dataVersionSql, type KindReads, readDataVersion } from '../catalog/freshness/catalog-state.js'
import { glasses } from '../catalog/kinds/kinds.js'
import { DATA_VERSION } from '../catalog/search/search-query.js'
import { MARKUP_SORT_SQL } from '../catalog/search-index/glass-listing-reader.js'
import type { ListingIndexAnswers } from '../catalog/search-index/service-types.js'
import { bigintId, type Tables } from '../db/tables.js'
import { inTransaction } from '../db/transaction.js'
import { checkDecimal } from '../domain/decimal.js'
import { GLASS_PRICE_FILTER_SORTS, readsSkus } from '../domain/glass-price-fields.js'
import { canonicalText, keyTextProblem } from '../domain/key-text.js'
import { MAX_PRICE, MAX_TEXT_LENGTH } from '../domain/limits.js'
import { isMessage, type Message, message } from '../domain/messages.js'
import type { Page, PageRequest } from '../http/page.js'
import {
  badRequest,
  conflict,
  entryNotFound,
  type FieldError,
  invalidField,
  listFieldErrors,
  preconditionFailed,
} from '../http/problem.js'
import { type PageCaches, readCountedPage } from '../paged-reads/counted-page.js'
import { changedAtText } from '../transfer/transfer-columns.js'
import { type GlassPriceFilter, glassPriceFilterConditions } from './glass-price-filter.js'
import type {
  GlassPriceEntry,
  GlassPriceInputBody,
  GlassPriceListItem,
  SortColumn,
  SortDirection,
} from './glass-price-schemas.js'
import { type EntryRow, entryChangeRows, recordChange } from './price-history.js'

/*
 * The glass price list (the `glasses` kind's price list, `glasses_price`): listing, and create / update / delete,
 * each with its history in the same transaction. Ids travel as decimal text validated as a positive bigint, so
 * no id is ever rounded through a float.
 */

/** A validated entry: text trimmed, money as canonical decimal text. */
export interface GlassPriceInput {
  readonly manufacturer: string
  readonly brand: string
  readonly model: string
  readonly price: string
  readonly purchase: string
}

const BIGINT_MAX = 9_223_372_036_854_775_807n

/**
 * Reads a path id as Spring converts a `Long` (surrounding blanks and a leading `+` allowed); anything that is
 * not an integer from 1 to 2^63−1 is a 400 naming `field`. Returns canonical decimal text.
 */
export function parseId(raw: unknown, field = 'id'): string {
  const text = typeof raw === 'string' ? raw.trim() : ''
  if (/^\+?\d+$/.test(text)) {
    const value = BigInt(text)
    if (value >= 1n && value <= BIGINT_MAX) return value.toString()
  }
  throw invalidField(field, message('validation.positiveInteger'))
}

/**
 * Validates a create/update body (types are already checked by the schema); every problem is one field error.
 * Keys are brought to their one form (domain/key-text.ts) and trimmed before the duplicate check: a key of
 * nothing but invisible characters is blank, and one with a bidi control or invalid text is refused.
 */
export function validateGlassPriceInput(body: GlassPriceInputBody): GlassPriceInput {
  const errors: FieldError[] = []
  const texts: Record<string, string> = {}
  for (const field of ['manufacturer', 'brand', 'model'] as const) {
    const value = canonicalText(body[field]).trim()
    const length = [...value].length
    const problem = keyTextProblem(value)
    if (length === 0) errors.push({ field, message: message('validation.blank') })
    else if (problem) errors.push({ field, message: problem })
    else if (length > MAX_TEXT_LENGTH)
      errors.push({ field, message: message('validation.maxLength', { limit: MAX_TEXT_LENGTH }) })
    texts[field] = value
  }
  const prices: Record<string, string> = {}
  for (const field of ['price', 'purchase'] as const) {
    const checked = checkDecimal(body[field], { min: '0', max: MAX_PRICE, scale: 2 })
    if (isMessage(checked)) errors.push({ field, message: checked })
    else prices[field] = checked.text
  }
  if (errors.length > 0) {
    throw badRequest(message('validation.invalidEntry', { errors: listFieldErrors(errors) }), errors)
  }
  return {
    manufacturer: texts.manufacturer!,
    brand: texts.brand!,
    model: texts.model!,
    price: prices.price!,
    purchase: prices.purchase!,
  }
}

/** The contract's entry shape of a row (prices as JSON numbers: display only). */
export function toEntry(row: EntryRow): GlassPriceEntry {
  return {
    id: Number(row.id),
    manufacturer: row.manufacturer,
    brand: row.brand,
    model: row.model,
    price: Number(row.price),
    purchase: Number(row.purchase),
  }
}

/** The strong ETag of an entry's version. */
export const entryTag = (row: EntryRow) => `"${row.version}"`

/**
 * Whether an `If-Match` header allows writing `row`: absent (last write wins), `*`, or a list holding the row's
 * tag. A weak tag (`W/"3"`) counts as its strong form, since proxies that compress weaken tags on the way.
 */
/**
 * The 412's detail: an older tag means the entry was changed since the client read it; a tag the entry never had
 * (a newer version, or not a version at all) is said to be one, rather than blamed on a change.
 */
function staleTagDetail(id: string, header: string, row: EntryRow): Message {
  const current = entryTag(row)
  const versions = header
    .split(',')
    .map((tag) => /^"(\d+)"$/.exec(tag.trim().replace(/^W\//, ''))?.[1])
    .filter((version): version is string => version !== undefined)
    .map(Number)
  if (versions.length > 0 && versions.every((version) => version < Number(row.version))) {
    return message('entry.changedSince', { id, tag: header.trim(), current })
  }
  return message('entry.neverHadVersion', { id, tag: header.trim(), current })
}

function ifMatchAllows(header: string | undefined, row: EntryRow): boolean {
  if (header === undefined) return true
  const current = entryTag(row)
  return header
    .split(',')
    .map((tag) => tag.trim().replace(/^W\//, ''))
    .some((tag) => tag === '*' || tag === current)
}

export interface ListingRequest {
  readonly filter: GlassPriceFilter
  readonly page: PageRequest
  readonly sortColumn: SortColumn
  readonly sortDirection: SortDirection
  /** The zone of `lastUpdatedOn` (config.businessTimezone). */
  readonly timezone: string
}

function orderExpressions(column: SortColumn, timezone: string): RawBuilder<unknown>[] {
  // Ties end on the id, so pages never overlap or skip; text compares normalised (keys) or as it is (the user)
  // byte-wise: the same order on every server, and the search index's (glass-listing.ts, listingTable). Every key is
  // non-null, so an export's keyset pages compare them as rows.
  const norm = (name: string) => sql`optics_norm(${sql.ref(`e.${name}`)}) COLLATE "C"`
  // A filter's sort: its value alone, text normalised as the keys.
  const sort = GLASS_PRICE_FILTER_SORTS.find((described) => described.key === column)
  if (sort) return [sort.text ? norm(sort.column) : sql.ref(`e.${sort.column}`), sql.ref('e.id')]
  switch (column) {
    case 'PARAMETERS':
      return [norm('manufacturer'), norm('brand'), norm('model'), sql.ref('e.id')]
    case 'UPDATED_ON':
      return [sql`${lastUpdatedOnSql(timezone)} COLLATE "C"`, sql.ref('e.id')]
    case 'USER':
      return [sql`e.updated_by COLLATE "C"`, sql.ref('e.id')]
    case 'MARKUP':
      return [sql.raw(MARKUP_SORT_SQL), sql.ref('e.id')]
    default:
      return [sql.ref('e.id')]
  }
}

/** Whether an order has an index to walk: the contract's columns (the id, price, purchase, the normalised keys). */
const indexedOrder = (column: SortColumn) => ['ID', 'PARAMETERS', 'PRICE', 'PURCHASE'].includes(column)

/** The business day of an entry's last change (`lastUpdatedOn`), as text. */
const lastUpdatedOnSql = (timezone: string) => sql<string>`to_char(e.updated_at AT TIME ZONE ${timezone}, 'YYYY-MM-DD')`

/**
 * What a listing reads: the glass price list, and the catalogue's matview too when a filter reads the SKUs'
 * attributes (so a remembered total is dropped when either changes).
 */
const listingReads = (filter: GlassPriceFilter): KindReads => (readsSkus(filter) ? 'both' : 'tables')

/** The data version a listing reads, selected beside its rows and count. */
const listingVersion = (filter: GlassPriceFilter) => dataVersionSql(glasses, listingReads(filter)).as(DATA_VERSION)

const listingCountKey = (filter: GlassPriceFilter) => JSON.stringify(['glass-price-listing', filter])

/**
 * The two queries of a listing page: its rows (filtered, sorted, with the business-day date and the user of the
 * last change) and their total, each with the data version it was read at.
 */
export function buildListingQueries(
  db: Kysely<Tables>,
  request: ListingRequest,
  options: { readonly fenced?: boolean; readonly walk?: number } = {},
) {
  const conditions = glassPriceFilterConditions(request.filter)
  const where = <Q extends { where(condition: Expression<SqlBool>): Q }>(query: Q): Q =>
    conditions.reduce((q, condition) => q.where(condition), query)
  const ordered = <Q extends { orderBy(expression: Expression<unknown>): Q }>(query: Q): Q =>
    orderExpressions(request.sortColumn, request.timezone).reduce(
      (q, expression) => q.orderBy(request.sortDirection === 'DESC' ? sql`${expression} DESC` : expression),
      query,
    )
  const { page, size } = request.page
  // Fenced: the matches are selected whole, then sorted; walk: the filters look at no more than that many rows,
  // the first in the listing's order (see `fenced` and `walk` of buildSearchQuery).
  const source = options.fenced
    ? db.selectFrom(where(db.selectFrom('glasses_price as e').selectAll('e')).offset(0).as('e'))
    : options.walk !== undefined
      ? where(
          db.selectFrom(
            ordered(db.selectFrom('glasses_price as e').selectAll('e')).limit(Math.max(1, options.walk)).as('e'),
          ),
        )
      : where(db.selectFrom('glasses_price as e'))

  const query = ordered(
    source.select([
      'e.id',
      'e.manufacturer',
      'e.brand',
      'e.model',
      lastUpdatedOnSql(request.timezone).as('lastUpdatedOn'),
      'e.price',
      'e.purchase',
      'e.updated_by as user',
    ]),
  )
  return {
    page: query
      .select(listingVersion(request.filter))
      .limit(size)
      .offset(page * size),
    count: where(
      db
        .selectFrom('glasses_price as e')
        .select([sql<number | string>`count(*)`.as('count'), listingVersion(request.filter)]),
    ),
  }
}

/** One page of the listing and its exact total, read as a search's (`readCountedPage`: fenced, cached per version). */
export async function listGlassPrices(
  db: Kysely<Tables>,
  request: ListingRequest,
  caches: PageCaches = {},
  index?: ListingIndexAnswers,
): Promise<Page<GlassPriceListItem>> {
  const indexed = await index?.listing(request)
  if (indexed) return indexed
  const countKey = listingCountKey(request.filter)
  const { page, size, sort } = request.page
  return readCountedPage(
    {
      filtered: glassPriceFilterConditions(request.filter).length > 0,
      countKey,
      pageKey: JSON.stringify([countKey, request.sortColumn, request.sortDirection, page, size, sort]),
      page: request.page,
      async count() {
        // Built only when a count runs (most requests find their total remembered).
        const result = await buildListingQueries(db, request).count.executeTakeFirstOrThrow()
        return { value: Number(result.count), version: result[DATA_VERSION] }
      },
      currentVersion: () => readDataVersion(db, glasses, listingReads(request.filter)),
      walkable: indexedOrder(request.sortColumn),
      async readRows(fenced, walk) {
        const rows = await buildListingQueries(db, request, { fenced, walk }).page.execute()
        const content = rows.map((row) => ({
          id: Number(row.id),
          manufacturer: row.manufacturer,
          brand: row.brand,
          model: row.model,
          lastUpdatedOn: row.lastUpdatedOn,
          price: Number(row.price),
          purchase: Number(row.purchase),
          user: row.user,
        }))
        return { rows: content, version: rows[0]?.[DATA_VERSION] }
      },
    },
    caches,
  )
}

/** What an export of the listing selects: its filters and order, without paging. */
export type ListingSelection = Pick<ListingRequest, 'filter' | 'sortColumn' | 'sortDirection' | 'timezone'>

/**
 * Every entry a listing selects, in the listing's order, as keyset pages: each page continues after the last
 * row's sort key (`(keys…, id) > (last…)`), one index range scan per page, so memory stays constant and no row
 * is skipped or repeated whatever the size. Rows carry the SQL columns (prices as exact text), with the entry's
 * version and its change time as the export writes them.
 */
export async function* glassPricePages(
  db: Kysely<Tables>,
  selection: ListingSelection,
  pageSize = 5000,
): AsyncGenerator<Record<string, unknown>[]> {
  const conditions = glassPriceFilterConditions(selection.filter)
  const keys = orderExpressions(selection.sortColumn, selection.timezone)
  const descending = selection.sortDirection === 'DESC'
  let last: unknown[] | undefined
  for (;;) {
    let query = db
      .selectFrom('glasses_price as e')
      .select(['e.id', 'e.manufacturer', 'e.brand', 'e.model', 'e.price', 'e.purchase', 'e.version'])
      .select(sql.raw<string>(changedAtText('e')).as('updated_at'))
      .select(keys.map((key, index) => key.as(`_key${index}`)))
    for (const condition of conditions) query = query.where(condition)
    if (last) {
      const after = sql<SqlBool>`(${sql.join(keys)}) ${sql.raw(descending ? '<' : '>')} (${sql.join(last)})`
      query = query.where(after)
    }
    for (const key of keys) query = query.orderBy(descending ? sql`${key} DESC` : key)
    const rows = (await query.limit(pageSize).execute()) as Record<string, unknown>[]
    if (rows.length === 0) return
    const tail = rows[rows.length - 1] as Record<string, unknown>
    last = keys.map((_key, index) => tail[`_key${index}`])
    yield rows
    if (rows.length < pageSize) return
  }
}

/** The entry with this id (decimal text), or undefined. */
export async function findGlassPrice(db: Kysely<Tables>, id: string): Promise<EntryRow | undefined> {
  return db.selectFrom('glasses_price').selectAll().where('id', '=', bigintId(id)).executeTakeFirst()
}

async function lockEntry(db: Kysely<Tables>, id: string): Promise<EntryRow> {
  const row = await db
    .selectFrom('glasses_price')
    .selectAll()
    .where('id', '=', bigintId(id))
    .forUpdate()
    .executeTakeFirst()
  if (!row) throw entryNotFound(message('entry.notFound', { id }))
  return row
}

/** 409 when another entry has the same manufacturer, brand and model (case-insensitively, trimmed). */
async function rejectDuplicate(db: Kysely<Tables>, input: GlassPriceInput, exceptId?: string): Promise<void> {
  let query = db
    .selectFrom('glasses_price')
    .select('id')
    .where(sql<SqlBool>`optics_norm(manufacturer) = optics_norm(${input.manufacturer})`)
    .where(sql<SqlBool>`optics_norm(brand) = optics_norm(${input.brand})`)
    .where(sql<SqlBool>`optics_norm(model) = optics_norm(${input.model})`)
  if (exceptId !== undefined) query = query.where('id', '<>', bigintId(exceptId))
  const existing = await query.limit(1).executeTakeFirst()
  if (existing) {
    throw conflict('duplicate-key', message('entry.duplicate', { ...input, id: String(existing.id) }), {
      existingId: Number(existing.id),
    })
  }
}

/** Creates an entry and records it; 409 on a duplicate key. Opens its own transaction unless `db` is one. */
export async function createGlassPrice(db: Kysely<Tables>, input: GlassPriceInput, user: string): Promise<EntryRow> {
  return inTransaction(db, async (trx) => {
    await rejectDuplicate(trx, input)
    const row = await trx
      .insertInto('glasses_price')
      .values({ ...input, updated_by: user })
      .returningAll()
      .executeTakeFirstOrThrow()
    await recordChange(
      trx,
      { action: 'CREATE', user, parameters: { id: Number(row.id) } },
      entryChangeRows(undefined, row),
    )
    return row
  })
}

/**
 * Replaces an entry's values and records what changed. 404 when missing, 412 when `ifMatch` names another
 * version, 409 on a duplicate key. Writing the values it already holds changes nothing (no new version, date or
 * history). Opens its own transaction unless `db` is one.
 */
export async function updateGlassPrice(
  db: Kysely<Tables>,
  id: string,
  input: GlassPriceInput,
  user: string,
  ifMatch?: string,
): Promise<EntryRow> {
  return inTransaction(db, async (trx) => {
    const before = await lockEntry(trx, id)
    if (!ifMatchAllows(ifMatch, before)) throw preconditionFailed(staleTagDetail(id, ifMatch ?? '', before))
    await rejectDuplicate(trx, input, id)
    const after = await trx
      .updateTable('glasses_price')
      .set({
        ...input,
        updated_at: sql<Date>`now()`,
        updated_by: user,
        version: sql<number>`version + 1`,
      })
      .where('id', '=', bigintId(id))
      .where(
        sql<SqlBool>`(manufacturer, brand, model, price, purchase) IS DISTINCT FROM
          (${input.manufacturer}, ${input.brand}, ${input.model}, ${input.price}::numeric, ${input.purchase}::numeric)`,
      )
      .returningAll()
      .executeTakeFirst()
    if (!after) return before
    await recordChange(trx, { action: 'UPDATE', user, parameters: { id: Number(id) } }, entryChangeRows(before, after))
    return after
  })
}

/** Deletes an entry and records its last values. 404 when missing, 412 when `ifMatch` names another version. */
export async function deleteGlassPrice(db: Kysely<Tables>, id: string, user: string, ifMatch?: string): Promise<void> {
  await inTransaction(db, async (trx) => {
    const before = await lockEntry(trx, id)
    if (!ifMatchAllows(ifMatch, before)) throw preconditionFailed(staleTagDetail(id, ifMatch ?? '', before))
    await trx.deleteFrom('glasses_price').where('id', '=', bigintId(id)).execute()
    await recordChange(
      trx,
      { action: 'DELETE', user, parameters: { id: Number(id) } },
      entryChangeRows(before, undefined),
    )
  })
}
