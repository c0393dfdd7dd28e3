import type { components, operations } from './schema.js'

/*
 * The service's wire types, as the web app names them: every one is read from the types generated from the
 * service's OpenAPI document (schema.d.ts, `npm run api-types`), so a change of the contract shows here as a type
 * error rather than as a page that reads what is no longer sent.
 */

type Operation = keyof operations
type JsonOf<Content> = Content extends { readonly content: { readonly 'application/json': infer Body } } ? Body : never

/** The JSON answer of an operation with a status (200 unless named). */
export type Answer<O extends Operation, Status extends number = 200> = Status extends keyof operations[O]['responses']
  ? JsonOf<operations[O]['responses'][Status]>
  : never
/** An object's named members, without the index signature of its other (additional) properties. */
export type Known<T> = { [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K] }
/** The JSON body an operation reads: its named members (the service ignores others). */
export type RequestBody<O extends Operation> = Known<JsonOf<operations[O]['requestBody']>>
/** The query parameters of an operation. */
export type QueryOf<O extends Operation> = NonNullable<operations[O]['parameters']['query']>

/** The problem details of every refusal; what a refusal carries beyond them is typed where it is read. */
export type ProblemDetails = Known<components['schemas']['Problem']>
export type ProblemCode = ProblemDetails['code']

// The counter search (`/api/v2/good/nomenclature/…`).
export type KindForm = Answer<'nomenclatureKinds'>['kinds'][number]
export type FormField = KindForm['fields'][number]
export type Column = KindForm['columns'][number]
export type Label = KindForm['title']
export type Suggestion = Answer<'suggest'>['suggestions'][number]
export type KindStatus = Answer<'nomenclatureStatus'>['kinds'][number]
type SearchOperation = Extract<Operation, `search${string}`>
type FacetsOperation = Extract<Operation, `facets${string}`>
/** A kind's page of goods; the page reads its columns by name, whatever the kind. */
export type SearchPage = Answer<SearchOperation>
/** One facet's values (the most frequent first) and its number of distinct values. */
export type FacetValues = NonNullable<Answer<'facetsGlasses'>['text']['brand']>
export type FacetsAnswer = Answer<FacetsOperation>

// The glass price list (`/api/v2/glasses/prices…`).
export type PriceEntry = Answer<'getGlassPrice'>
export type PriceListPage = Answer<'listGlassPrices'>
export type PriceRow = PriceListPage['content'][number]
export type ListParameters = QueryOf<'listGlassPrices'>
export type SortColumn = NonNullable<ListParameters['sortColumn']>
export type SortDirection = NonNullable<ListParameters['sortDirection']>
/** The filters of the listing, the bulk change and the export: every query parameter but paging and order. */
export type FilterName = Exclude<keyof ListParameters, 'page' | 'size' | 'sortColumn' | 'sortDirection' | 'exact'>
export type TextFilterName = NonNullable<ListParameters['exact']>[number]
export type EntryBody = RequestBody<'createGlassPrice'>
export type InputField = Extract<keyof EntryBody, string>
export type HistoryPage = Answer<'glassPriceHistory'>
export type HistoryItem = HistoryPage['content'][number]
export type ChangesPage = Answer<'listGlassPriceChanges'>
export type PriceChange = ChangesPage['content'][number]
export type ChangeAction = PriceChange['action']
export type ChangeLogParameters = QueryOf<'listGlassPriceChanges'>
export type ChangeEntriesPage = Answer<'listGlassPriceChangeEntries'>
export type ChangeEntry = ChangeEntriesPage['content'][number]
export type RevertResult = Answer<'revertGlassPriceChange'>
export type RevertConflict = RevertResult['conflicts'][number]
export type ConflictReason = RevertConflict['reason']

// The price list's writes: the bulk change, jobs, schedules, the upload.
export type BulkChangeRequest = RequestBody<'changeGlassPrices'>
export type PriceType = BulkChangeRequest['priceTypeBase']
export type BulkChangePreview = Answer<'changeGlassPrices'>
export type PreviewRow = BulkChangePreview['changes'][number]
export type WriteJob = Answer<'getGlassPriceJob'>
export type ScheduledChange = Answer<'getScheduledGlassPriceChange'>
export type ScheduledPage = Answer<'listScheduledGlassPriceChanges'>
export type UploadParameters = QueryOf<'importGlassPrices'>
export type ImportMode = NonNullable<UploadParameters['mode']>
export type ImportResult = Answer<'importGlassPrices'>
export type ImportCheck = ImportResult['check']
export type CheckRow = ImportCheck['changed']['content'][number]
export type ConflictRow = ImportCheck['conflicts']['content'][number]
/** One page of a list of the check. */
export type CheckPage<Row> = Omit<ImportCheck['changed'], 'content'> & { readonly content: readonly Row[] }
