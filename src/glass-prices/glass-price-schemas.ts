import Type, { type Static, type TSchema } from 'typebox'
import {
  type FilterSortColumn,
  GLASS_PRICE_BAND_FIELDS,
  GLASS_PRICE_FILTER_SORTS,
  GLASS_PRICE_TEXT_FIELDS,
  GLASS_PRICE_TEXT_FILTERS,
  type GlassPriceFilterParameter,
} from '../domain/glass-price-fields.js'
import { MAX_PRICE, MAX_TEXT_LENGTH } from '../domain/limits.js'
import { ROUNDING_RULES, type RoundingRule } from '../domain/roundings.js'
import { pagingQueryProperties } from '../http/page.js'
import {
  DecimalInput,
  MAX_DECIMAL_TEXT,
  NullableDecimalInput,
  NullableInteger,
  NullableString,
} from '../http/schemas.js'
import { ExactFiltersSchema, StringEnum } from '../http/validation.js'

/*
 * The wire shapes of the glass price list: the contract's entry, listing item and bulk change, and the history
 * and preview shapes beyond it. Key order follows the contract. The examples (what Swagger UI's "Try it out"
 * sends) are the demo catalogue's frames: Ray-Ban by EssilorLuxottica, models RX…, 9 000–22 000 roubles.
 */

/** A new entry of the demo catalogue's frames: its keys are not in the demo price list, so creating it succeeds. */
const NEW_ENTRY_EXAMPLE = {
  manufacturer: 'EssilorLuxottica',
  brand: 'Ray-Ban',
  model: 'RB5154 Clubmaster',
  price: 14990,
  purchase: 6200,
}

const text = (description: string, example: string) =>
  Type.String({
    description:
      `${description}; a key: invisible characters removed, no-break spaces made spaces, NFKC, ` +
      `Latin/Cyrillic look-alikes in one script per word, trimmed, 1–${MAX_TEXT_LENGTH} characters; bidi controls and unpaired surrogates are refused`,
    examples: [example],
  })
const money = (description: string, example: number) =>
  DecimalInput({
    description: `${description}, roubles: 0 … ${MAX_PRICE}, at most 2 decimals (a number or a numeric string)`,
    examples: [example],
  })

/** The body of create and update. Unknown properties are ignored, as Spring does. */
export const GlassPriceInputSchema = Type.Object(
  {
    manufacturer: text('Manufacturer', NEW_ENTRY_EXAMPLE.manufacturer),
    brand: text('Brand', NEW_ENTRY_EXAMPLE.brand),
    model: text('Model', NEW_ENTRY_EXAMPLE.model),
    price: money('Retail price', NEW_ENTRY_EXAMPLE.price),
    purchase: money('Purchase price', NEW_ENTRY_EXAMPLE.purchase),
  },
  { title: 'Glass price entry input', additionalProperties: true, examples: [NEW_ENTRY_EXAMPLE] },
)
export type GlassPriceInputBody = Static<typeof GlassPriceInputSchema>

/** An entry as read, created and updated (the contract's shape: no date, no user). */
export const GlassPriceEntrySchema = Type.Object(
  {
    id: Type.Integer({ description: 'Identifier of the entry' }),
    manufacturer: Type.String(),
    brand: Type.String(),
    model: Type.String(),
    price: Type.Number({ description: 'Retail price, roubles' }),
    purchase: Type.Number({ description: 'Purchase price, roubles' }),
  },
  { title: 'Glass price entry' },
)
export type GlassPriceEntry = Static<typeof GlassPriceEntrySchema>

/** A listing item: the entry plus the date and the user of its last change. */
export const GlassPriceListItemSchema = Type.Object(
  {
    id: Type.Integer(),
    manufacturer: Type.String(),
    brand: Type.String(),
    model: Type.String(),
    lastUpdatedOn: Type.String({ format: 'date', description: 'Date of the last change, in BUSINESS_TIMEZONE' }),
    price: Type.Number(),
    purchase: Type.Number(),
    user: Type.String({ description: 'Who made the last change' }),
  },
  { title: 'Glass price list item' },
)
export type GlassPriceListItem = Static<typeof GlassPriceListItemSchema>

/** A decimal query value: blank means "no filter"; anything else must be a number. */
const QueryDecimal = (description: string, example: string) =>
  Type.String({
    format: 'decimal',
    pattern: '^\\s*([-+]?(\\d+(\\.\\d*)?|\\.\\d+))?\\s*$',
    maxLength: MAX_DECIMAL_TEXT,
    description,
    examples: [example],
  })

const textFilterDescription =
  'Case-insensitive substring, read as keys are written (invisible characters removed, no-break spaces made ' +
  'spaces, NFKC, Latin/Cyrillic look-alikes in one script per word); blank = no filter'

/** The listing's filters, shared by the listing, the bulk change and the export: built from their description. */
export const glassPriceFilterQueryProperties = Object.fromEntries([
  ...GLASS_PRICE_TEXT_FIELDS.map((field) => [
    field.name,
    Type.Optional(Type.String({ description: textFilterDescription, examples: [field.example] })),
  ]),
  [
    'exact',
    Type.Optional(ExactFiltersSchema(GLASS_PRICE_TEXT_FILTERS, 'exact=brand&exact=model', { examples: [['brand']] })),
  ],
  ...GLASS_PRICE_BAND_FIELDS.flatMap((field) => [
    [field.from.parameter, Type.Optional(QueryDecimal(`${field.description} ≥ this (inclusive)`, field.from.example))],
    [field.to.parameter, Type.Optional(QueryDecimal(`${field.description} ≤ this (inclusive)`, field.to.example))],
  ]),
]) as { [Name in GlassPriceFilterParameter]: Type.TOptional<Type.TString> } & {
  exact: Type.TOptional<ReturnType<typeof ExactFiltersSchema>>
}

/**
 * The sort columns: the contract's four (the id, the keys together, and the filters' sorts the contract names),
 * then (beyond the contract) one per other column of the listing, so the desk sorts by any of them while a client
 * that knows only the contract's four is answered as before.
 */
const filterSorts = (contract: boolean) =>
  GLASS_PRICE_FILTER_SORTS.flatMap((sort) => (sort.contract === contract ? [sort.key] : []))
export const SORT_COLUMNS = [
  'ID',
  'PARAMETERS',
  ...filterSorts(true),
  ...filterSorts(false),
  'UPDATED_ON',
  'USER',
  'MARKUP',
] as readonly ('ID' | 'PARAMETERS' | FilterSortColumn | 'UPDATED_ON' | 'USER' | 'MARKUP')[]
export type SortColumn = (typeof SORT_COLUMNS)[number]
export const SORT_DIRECTIONS = ['ASC', 'DESC'] as const
export type SortDirection = (typeof SORT_DIRECTIONS)[number]

export const LISTING_DEFAULT_SIZE = 20

export const GlassPriceListQuerySchema = Type.Object({
  ...pagingQueryProperties(LISTING_DEFAULT_SIZE),
  sortColumn: Type.Optional(
    StringEnum(SORT_COLUMNS, {
      description:
        `ID (default) | PARAMETERS (manufacturer, brand, model) | ${filterSorts(true).join(' | ')}; beyond the ` +
        `contract ${filterSorts(false).join(' | ')} (each alone, as PARAMETERS compares text) | UPDATED_ON ` +
        '(lastUpdatedOn) | USER | MARKUP ' +
        '((price − purchase) / purchase, exact; entries whose purchase is 0 last, first with DESC); ties by id',
      examples: ['PRICE'],
    }),
  ),
  sortDirection: Type.Optional(
    StringEnum(SORT_DIRECTIONS, { description: 'ASC (default) | DESC', examples: ['DESC'] }),
  ),
  ...glassPriceFilterQueryProperties,
})

export const BulkChangeQuerySchema = Type.Object({
  ...glassPriceFilterQueryProperties,
  dryRun: Type.Optional(
    Type.Boolean({
      description: 'true: answer what would change (counts and first rows) and write nothing',
      examples: [true],
    }),
  ),
})

const PRICE_TYPES = ['PURCHASE', 'RETAIL'] as const
export type PriceType = (typeof PRICE_TYPES)[number]
export { ROUNDING_DIRECTIONS, ROUNDINGS, type Rounding, type RoundingDirection } from '../domain/roundings.js'

const roundingNames = (rules: readonly RoundingRule[]) => rules.map((rule) => rule.name).join(' | ')
/** The roundings in words (domain/roundings.ts): the contract's steps, then the steps and endings beyond it. */
const roundingKinds = () => {
  const rules: readonly RoundingRule[] = ROUNDING_RULES
  const steps = rules.filter((rule) => rule.ending === undefined)
  return {
    contract: steps.filter((rule) => rule.contract),
    beyond: steps.filter((rule) => !rule.contract),
    endings: rules.filter((rule) => rule.ending !== undefined),
  }
}

/** What the roundings beyond the contract are, in a few words: "the endings ENDS_90 | ENDS_99 | ENDS_00". */
export function roundingsBeyondContract(): string {
  const { beyond, endings } = roundingKinds()
  return [
    ...(beyond.length > 0 ? [`the steps ${roundingNames(beyond)}`] : []),
    ...(endings.length > 0 ? [`the endings ${roundingNames(endings)}`] : []),
  ].join(', ')
}

/** `round` in words, with what each rounding makes of 1234 roubles where that tells them apart. */
function roundingDescription(): string {
  const { contract, beyond, endings } = roundingKinds()
  // Whole roubles, so the example's arithmetic is exact in a JS number.
  const example = (rule: RoundingRule, up: boolean) => {
    const ending = rule.ending ?? 0
    const steps = (1234 - ending) / rule.step
    return (up ? Math.ceil(steps) : Math.floor(steps + 0.5)) * rule.step + ending
  }
  const beyondParts = [
    ...(beyond.length > 0
      ? [`the steps ${roundingNames(beyond)} (${beyond.map((rule) => rule.step).join(', ')} roubles)`]
      : []),
    ...(endings.length > 0
      ? [
          `the price endings ${roundingNames(endings)} (` +
            `${endings.map((rule) => `…${String(rule.ending).padStart(2, '0')}`).join(', ')} roubles: 1234 → ` +
            `${endings.map((rule) => example(rule, true)).join(' | ')} upwards, ` +
            `${endings.map((rule) => example(rule, false)).join(' | ')} to the nearest)`,
        ]
      : []),
  ]
  return (
    `Required: ${roundingNames(contract)} (steps of ${contract.map((rule) => rule.step).join(', ')} roubles); ` +
    `TO_INT = WHOLE.${beyondParts.length > 0 ? ` Beyond the contract, ${beyondParts.join(' and ')}` : ''}`
  )
}

export const BulkChangeBodySchema = Type.Object(
  {
    priceFrom: Type.Optional(NullableDecimalInput({ description: 'Selects entries whose BASE price is ≥ this' })),
    priceTo: Type.Optional(NullableDecimalInput({ description: 'Selects entries whose BASE price is ≤ this' })),
    priceTypeBase: StringEnum(PRICE_TYPES, { description: 'The price the new value is computed from' }),
    priceTypeChange: StringEnum(PRICE_TYPES, { description: 'The price that is written' }),
    coefficient: Type.Optional(NullableDecimalInput({ description: 'Multiplier, > 0 (null = 1)', examples: [1.15] })),
    percent: Type.Optional(
      NullableDecimalInput({
        description:
          'Beyond the contract, instead of the coefficient: a markup (+) or discount (−) in percent, exactly ' +
          '1 + percent/100 as the multiplier (10 ≡ 1.1, −15 ≡ 0.85); > −100, ≤ 99900, at most 4 decimals',
        examples: [10],
      }),
    ),
    difference: Type.Optional(
      NullableDecimalInput({ description: 'Roubles added after multiplying (null = 0); may be negative' }),
    ),
    round: Type.Optional(
      NullableString({
        description: roundingDescription(),
        examples: ['TENS'],
      }),
    ),
    direction: Type.Optional(
      NullableString({
        description:
          'Beyond the contract: NEAREST (null; halves up) | UP (to the next step or ending at or above the value)',
        examples: ['UP'],
      }),
    ),
    effectiveAt: Type.Optional(
      NullableString({
        description:
          'Beyond the contract: when the change takes effect, ISO 8601 with an offset (2026-12-01T09:00:00+03:00). ' +
          'In the future: the change is scheduled (202 with the scheduled change, `Location` naming it) and applied ' +
          'then, to the entries the filters select at that time; absent, null or past: applied now. Ignored by dryRun',
        examples: ['2026-12-01T09:00:00+03:00'],
      }),
    ),
  },
  {
    title: 'Bulk price change',
    additionalProperties: true,
    examples: [
      { priceTypeBase: 'PURCHASE', priceTypeChange: 'RETAIL', coefficient: 2.2, round: 'ENDS_90', direction: 'UP' },
    ],
  },
)
export type BulkChangeBody = Static<typeof BulkChangeBodySchema>

const PreviewRowSchema = Type.Object({
  id: Type.Integer(),
  manufacturer: Type.String(),
  brand: Type.String(),
  model: Type.String(),
  base: Type.Number({ description: 'The base price' }),
  oldValue: Type.Number({ description: 'The changed price now' }),
  newValue: Type.Number({ description: 'The changed price after the change' }),
})
export type PreviewRow = Static<typeof PreviewRowSchema>

const ExactDecimal = (description: string) =>
  Type.String({ description: `${description}: an exact decimal, as text`, examples: ['125990.00'] })
const BeforeAfter = (description: string, value: (description: string) => TSchema) =>
  Type.Object({ old: value(`${description} now`), new: value(`${description} after the change`) }, { description })

/** The selection's sums and average markup before and after, exact. */
const PreviewTotalsSchema = Type.Object(
  {
    retail: BeforeAfter("The sum of the selected entries' retail prices", ExactDecimal),
    purchase: BeforeAfter("The sum of the selected entries' purchase prices", ExactDecimal),
    averageMarkup: BeforeAfter(
      'The average markup of the selection, in %: (Σ retail − Σ purchase) / Σ purchase × 100, to 2 decimals (null when Σ purchase is 0)',
      (description) => Type.Union([ExactDecimal(description), Type.Null()]),
    ),
  },
  { description: 'Beyond the contract: the totals of the selection (rejected entries included)' },
)
export type PreviewTotals = Static<typeof PreviewTotalsSchema>

const PREVIEW_REASONS = ['bulk-change-rejected', 'nothing-selected', 'nothing-changes'] as const

export const BulkChangePreviewSchema = Type.Object(
  {
    selectedCount: Type.Integer({ description: 'Entries the filters and the band select' }),
    changedCount: Type.Integer({ description: 'Selected entries whose value would change' }),
    unchangedCount: Type.Integer({ description: 'Selected entries whose value would stay' }),
    rejectedCount: Type.Integer({ description: 'Entries that would get a value ≤ 0 or above the maximum' }),
    changes: Type.Array(PreviewRowSchema, { description: 'The first changed entries, by id' }),
    rejected: Type.Array(PreviewRowSchema, { description: 'The first rejected entries, by id' }),
    totals: PreviewTotalsSchema,
    wouldApply: Type.Boolean({
      description:
        'Whether the same call without dryRun would write: false when it would be refused (422) or change nothing',
    }),
    reasons: Type.Array(
      Type.Object({
        code: StringEnum(PREVIEW_REASONS, {
          description:
            'bulk-change-rejected: some entry would get a value ≤ 0 or above the maximum (the real call is a 422, ' +
            'nothing written); nothing-selected: the filters and the band select no entry; nothing-changes: every ' +
            'selected entry already holds its new value',
        }),
        message: Type.String(),
      }),
      { description: 'Why wouldApply is false (empty when it is true)' },
    ),
  },
  { title: 'Bulk price change preview' },
)
export type BulkChangePreview = Static<typeof BulkChangePreviewSchema>

export const CHANGE_ACTIONS = ['CREATE', 'UPDATE', 'DELETE', 'BULK_CHANGE', 'IMPORT', 'REVERT'] as const
export type ChangeAction = (typeof CHANGE_ACTIONS)[number]
export const CHANGE_FIELDS = ['manufacturer', 'brand', 'model', 'price', 'purchase'] as const
export type ChangeField = (typeof CHANGE_FIELDS)[number]

const FieldValue = (description: string): TSchema =>
  Type.Unsafe<string | number | null>({
    type: ['string', 'number', 'null'],
    description: `${description}: a number for prices, text otherwise; null where the entry did not exist`,
  })

const FieldChangeSchema = Type.Object({
  field: StringEnum(CHANGE_FIELDS),
  oldValue: FieldValue('Before'),
  newValue: FieldValue('After'),
})

/** One change of one entry: a history item. */
export const EntryHistoryItemSchema = Type.Object(
  {
    batch: Type.Integer({ description: 'The change (batch) id; revert it with POST …/changes/{batch}/revert' }),
    action: StringEnum(CHANGE_ACTIONS),
    changedAt: Type.String({ format: 'date-time' }),
    user: Type.String(),
    changes: Type.Array(FieldChangeSchema),
  },
  { title: 'Glass price entry history item' },
)
export type EntryHistoryItem = Static<typeof EntryHistoryItemSchema>

/** A change (batch) of the glass price list. */
export const PriceChangeSchema = Type.Object(
  {
    id: Type.Integer(),
    action: StringEnum(CHANGE_ACTIONS),
    createdAt: Type.String({ format: 'date-time' }),
    user: Type.String(),
    changedCount: Type.Integer({ description: 'Entries this change wrote' }),
    parameters: Type.Object({}, { additionalProperties: true, description: 'What was asked, normalised' }),
    reverts: NullableInteger({ description: 'The change this one reverted' }),
    revertedBy: NullableInteger({ description: 'The change that reverted this one' }),
  },
  { title: 'Glass price change' },
)
export type PriceChange = Static<typeof PriceChangeSchema>

/** The change log's filters (beyond the contract), each optional, all of them together. */
export const ChangeLogQuerySchema = Type.Object({
  ...pagingQueryProperties(LISTING_DEFAULT_SIZE),
  user: Type.Optional(
    Type.String({
      description: 'Who made the change: a case-insensitive substring of the user name; blank = anyone',
      examples: ['anna'],
    }),
  ),
  from: Type.Optional(
    Type.String({
      description: 'Changes made on this day or later: YYYY-MM-DD, a day of BUSINESS_TIMEZONE; blank = no bound',
      examples: ['2026-11-01'],
    }),
  ),
  to: Type.Optional(
    Type.String({
      description: 'Changes made on this day or earlier (inclusive): YYYY-MM-DD, a day of BUSINESS_TIMEZONE',
      examples: ['2026-11-30'],
    }),
  ),
  action: Type.Optional(
    Type.Array(StringEnum(CHANGE_ACTIONS), {
      description:
        'The kinds of change, repeated for several (action=IMPORT&action=BULK_CHANGE); absent = every kind. ' +
        'CREATE, UPDATE and DELETE: an entry created, edited or deleted one at a time; BULK_CHANGE: a bulk price ' +
        'change; IMPORT: an uploaded file; REVERT: the undoing of another change',
      examples: [['BULK_CHANGE', 'IMPORT']],
    }),
  ),
})

/** One entry a change touched: its key and, field by field, its values before and after that change. */
export const ChangeEntrySchema = Type.Object(
  {
    entryId: Type.Integer(),
    manufacturer: Type.String({ description: "The entry's key as it is now, or as last recorded once deleted" }),
    brand: Type.String(),
    model: Type.String(),
    exists: Type.Boolean({ description: 'Whether the entry is in the price list now' }),
    changes: Type.Array(FieldChangeSchema, { description: 'What this change wrote: old → new per field' }),
  },
  { title: 'Glass price change entry' },
)
export type ChangeEntry = Static<typeof ChangeEntrySchema>

const REVERT_CONFLICTS = ['CHANGED', 'DELETED', 'EXISTS', 'DUPLICATE'] as const

const RevertConflictSchema = Type.Object({
  entryId: Type.Integer(),
  reason: StringEnum(REVERT_CONFLICTS, {
    description:
      'CHANGED: edited since; DELETED: deleted since; EXISTS: the deleted entry is back; ' +
      'DUPLICATE: another entry now has its manufacturer, brand and model',
  }),
})
export type RevertConflict = Static<typeof RevertConflictSchema>

export const RevertResultSchema = Type.Object(
  {
    batch: Type.Integer({ description: 'The new change (batch) that performed the revert' }),
    reverted: Type.Integer({ description: 'The change (batch) that was reverted' }),
    restoredCount: Type.Integer({ description: 'Entries restored' }),
    conflictCount: Type.Integer({ description: 'Entries left alone' }),
    conflicts: Type.Array(RevertConflictSchema, { description: 'The first entries left alone, by id' }),
  },
  { title: 'Revert result' },
)
export type RevertResult = Static<typeof RevertResultSchema>

export const EntryIdParamsSchema = Type.Object({
  id: Type.String({ description: 'Entry id: a positive integer', examples: ['42'] }),
})
export const BatchIdParamsSchema = Type.Object({
  batch: Type.String({ description: 'Change (batch) id: a positive integer', examples: ['7'] }),
})

const SCHEDULED_STATES = ['pending', 'applied', 'cancelled', 'failed'] as const
export type ScheduledState = (typeof SCHEDULED_STATES)[number]

/** A bulk change or an upload scheduled for its effective date-time (beyond the contract). */
export const ScheduledChangeSchema = Type.Object(
  {
    id: Type.Integer(),
    operation: StringEnum(['bulk-change', 'upload'] as const, {
      description: 'bulk-change: POST …/prices/list; upload: POST …/prices/import',
    }),
    state: StringEnum(SCHEDULED_STATES, {
      description:
        'pending: waits for effectiveAt; applied: written (`batch`); cancelled; failed: refused when it fell due ' +
        '(`problem`; nothing written)',
    }),
    effectiveAt: Type.String({ format: 'date-time' }),
    parameters: Type.Object(
      {},
      {
        additionalProperties: true,
        description:
          'bulk-change: the filter and the rule, normalised; upload: fileName, size (bytes), format, mode, ' +
          'confirmDeletes and conflicts (refuse, skip or {overwrite: count})',
      },
    ),
    createdBy: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When it was applied, cancelled or refused',
    }),
    cancelledBy: NullableString({ description: 'Who cancelled it' }),
    batch: NullableInteger({ description: 'The change (batch) it wrote; revert it as any other' }),
    problem: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], {
      description: 'failed: the problem details the change was refused with',
    }),
  },
  { title: 'Scheduled glass price change' },
)
export type ScheduledChange = Static<typeof ScheduledChangeSchema>

export const ScheduledIdParamsSchema = Type.Object({
  id: Type.String({ description: 'Scheduled change id: a positive integer', examples: ['3'] }),
})
