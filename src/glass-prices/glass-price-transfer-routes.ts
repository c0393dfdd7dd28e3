import { open } from 'node:fs/promises'
import { PassThrough, type Readable } from 'node:stream'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import Type from 'typebox'
import { glasses } from '../catalog/kinds/kinds.js'
import { UPLOAD_TIMEOUT_MS } from '../config.js'
import { message } from '../domain/messages.js'
import {
  type KeyedWrite,
  keyedWrite,
  type RunSql,
  rawSql,
  replayOutcome,
  StoredOutcome,
  type WriteOutcome,
} from '../http/idempotency.js'
import { mediaTypeDetail } from '../http/media-types.js'
import { buildPage, PageSchema, pagingQueryProperties, parsePageRequest } from '../http/page.js'
import { principalName } from '../http/principal.js'
import { invalidField, ProblemError, unprocessable, unsupportedMediaType } from '../http/problem.js'
import { isAbandonment } from '../http/request-timeout.js'
import { problemResponses } from '../http/schemas.js'
import { SpooledUpload, UploadSpool } from '../http/upload-spool.js'
import { StringEnum } from '../http/validation.js'
import { type ConflictChoice, IMPORT_MODES } from '../transfer/csv-import.js'
import { type ExportRow, writeCsv, writeXlsx } from '../transfer/export-writer.js'
import { HEADER_LANGUAGES, transferColumns, VERSION_COLUMNS } from '../transfer/transfer-columns.js'
import { looksLikeXlsx } from '../transfer/xlsx.js'
import { futureEffectiveAt } from './bulk-price-change.js'
import { parseGlassPriceFilter } from './glass-price-filter.js'
import { type GlassPriceImportResult, importGlassPriceFile } from './glass-price-import.js'
import { glassPricePages } from './glass-price-repository.js'
import {
  glassPriceFilterQueryProperties,
  ScheduledChangeSchema,
  SORT_COLUMNS,
  SORT_DIRECTIONS,
} from './glass-price-schemas.js'
import { scheduleUpload, type UploadChoices } from './scheduled-changes.js'
import { prefersAsync, WriteJobSchema } from './write-jobs.js'

/*
 * The glass price list as files: `POST …/import` takes a CSV upload (the CLI import's rules, one history batch),
 * `GET …/export` gives the listing's selection as CSV or XLSX. Registered as a plugin of its own, so the CSV
 * body parser serves these routes only.
 */

const base = '/api/v2/glasses/prices'
const tags = ['glass price list']
const CSV_TYPES = ['text/csv', 'application/csv', 'text/plain', 'application/vnd.ms-excel'] as const
const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

const tooLarge = (limit: number) => new ProblemError(413, message('import.tooLarge', { limit }))

/** Each upload's spool, removed when its response closes (upload-spool.ts). */
const spools = new WeakMap<FastifyRequest, UploadSpool>()

/** Streams the request body into its request's spool, refusing it past `limit` bytes. */
async function spool(request: FastifyRequest, payload: NodeJS.ReadableStream, limit: number): Promise<SpooledUpload> {
  const declared = Number(request.headers['content-length'])
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(limit)
  const owned = spools.get(request)
  if (!owned) throw new Error('an upload outside the import route')
  return owned.write(payload, (bytes) => {
    if (bytes > limit) throw tooLarge(limit)
  })
}

/** Rows per page of each of the check's lists. */
const CHECK_PAGE_SIZE = 20

const money = (description: string) => Type.Number({ description })

const FieldChangeSchema = Type.Object({
  field: StringEnum(['price', 'purchase'] as const),
  oldValue: money('The stored entry’s value'),
  newValue: money('The file’s value'),
})

const checkRowProperties = {
  line: Type.Union([Type.Integer(), Type.Null()], {
    description: 'The row’s line in the file (the header is line 1); null for an entry a replace deletes',
  }),
  id: Type.Union([Type.Integer(), Type.Null()], { description: 'The entry the row meets; null when it creates one' }),
  manufacturer: Type.String(),
  brand: Type.String(),
  model: Type.String(),
  price: money('The retail price after the upload (for a deleted entry: its price)'),
  purchase: money('The purchase price after the upload (for a deleted entry: its price)'),
  changes: Type.Array(FieldChangeSchema, { description: 'Old → new per price that changes' }),
}

const CheckRowSchema = Type.Object(checkRowProperties, { title: 'Upload check row' })

const ConflictRowSchema = Type.Object(
  {
    ...checkRowProperties,
    fileVersion: Type.Integer({ description: 'The entry’s version the file was exported at' }),
    storedVersion: Type.Integer({ description: 'The entry’s version now (its ETag)' }),
    changedBy: Type.String({ description: 'Who changed the entry last' }),
    changedAt: Type.String({ format: 'date-time', description: 'When the entry was changed last' }),
    storedPrice: money('The retail price stored now'),
    storedPurchase: money('The purchase price stored now'),
  },
  { title: 'Upload conflict' },
)

const ImportCheckSchema = Type.Object(
  {
    changed: PageSchema(CheckRowSchema, { description: 'Rows that change an entry’s prices, by line' }),
    created: PageSchema(CheckRowSchema, { description: 'Rows that add an entry, by line' }),
    deleted: PageSchema(CheckRowSchema, { description: 'mode=replace: entries the file no longer has, by id' }),
    conflicts: PageSchema(ConflictRowSchema, {
      description: 'mode=upsert: rows whose entry was changed since the file’s version, by line',
    }),
  },
  {
    description:
      'What the file does, row by row: the page `page`/`size` of each list (the counts are their totalElements)',
  },
)

const ImportQuerySchema = Type.Object({
  mode: Type.Optional(
    StringEnum(IMPORT_MODES, {
      description:
        'append (default): add the rows, a key already in the list is a problem; upsert: update the prices of ' +
        'the entries whose manufacturer, brand and model are in the list (same ids, history kept), add the ' +
        'others, delete nothing; replace: the file replaces the whole price list',
      examples: ['upsert'],
    }),
  ),
  replace: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'true: the same as mode=replace (kept for older clients)',
      examples: [false],
    }),
  ),
  confirmDeletes: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        'mode=replace from a file whose rows all share a brand or manufacturer that other entries lack (a ' +
        'filtered export): the number of entries it deletes, as the 409 without it says',
      examples: [0],
    }),
  ),
  dryRun: Type.Optional(
    Type.Boolean({ default: false, description: 'true: check the file, write nothing', examples: [true] }),
  ),
  effectiveAt: Type.Optional(
    Type.String({
      description:
        'When the upload takes effect, ISO 8601 with an offset (2026-12-01T09:00:00+03:00). In the future: the file ' +
        'is checked now as by dryRun (problems and conflicts refuse it at once), stored, and applied then with the ' +
        'mode and conflict choices given here (202 with the scheduled change, `Location` naming it; cancel it with ' +
        'DELETE …/scheduled/{id}); conflicts are judged again then, and a file that no longer fits fails, nothing ' +
        'written. Absent, empty or past: applied now. Ignored by dryRun',
      examples: ['2026-12-01T09:00:00+03:00'],
    }),
  ),
  fileName: Type.Optional(
    Type.String({
      maxLength: 255,
      description: 'The file’s name, shown with a scheduled upload',
      examples: ['glass-prices.csv'],
    }),
  ),
  overwriteConflicts: Type.Optional(
    Type.Integer({
      minimum: 0,
      description:
        'mode=upsert from a file with versions (an export): write the file’s prices over the entries changed ' +
        'since the export too, when there are exactly this many of them (the check’s `conflicts`); another number ' +
        '→ 409, nothing written',
      examples: [0],
    }),
  ),
  skipConflicts: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'mode=upsert: leave the entries changed since the export as they are and write the other rows',
      examples: [false],
    }),
  ),
  ...pagingQueryProperties(CHECK_PAGE_SIZE),
})

const ImportResultSchema = Type.Object(
  {
    rows: Type.Integer({ description: 'Data rows in the file' }),
    written: Type.Integer({ description: 'Entries added or updated (0 on a dry run)' }),
    deleted: Type.Integer({
      description: 'Entries the file replaced (mode=replace; on a dry run: that it would delete)',
    }),
    mode: StringEnum(IMPORT_MODES),
    created: Type.Integer({ description: 'Entries added (on a dry run: that would be)' }),
    updated: Type.Integer({ description: 'mode=upsert: entries whose prices changed (on a dry run: would change)' }),
    unchanged: Type.Integer({
      description: 'mode=upsert: entries already holding the file’s prices, left as they were',
    }),
    dryRun: Type.Boolean(),
    format: StringEnum(['csv', 'xlsx'] as const, { description: 'What the file was read as' }),
    delimiter: Type.Union([StringEnum([',', ';'] as const), Type.Null()], {
      description: 'The separator the CSV file uses (null for XLSX)',
    }),
    batch: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'The history change (batch) of the import: revert it with POST …/changes/{batch}/revert; null on a dry run ' +
        'and when the file changed nothing (written and deleted 0: every row already as stored), which records no change',
    }),
    conflicts: Type.Integer({
      description:
        'mode=upsert: rows whose entry was changed since the file’s version (its `version` column) and whose ' +
        'prices differ from it; not in `updated` unless overwritten',
    }),
    overwritten: Type.Integer({ description: 'Conflicts written over (overwriteConflicts), counted in `updated` too' }),
    skipped: Type.Integer({ description: 'Conflicts left as they were (skipConflicts)' }),
    check: ImportCheckSchema,
  },
  { title: 'Glass price import result' },
)

const ExportQuerySchema = Type.Object({
  sortColumn: Type.Optional(
    StringEnum(SORT_COLUMNS, {
      description: 'As the listing: ID (default) | PARAMETERS | …',
      examples: ['PARAMETERS'],
    }),
  ),
  sortDirection: Type.Optional(StringEnum(SORT_DIRECTIONS, { description: 'ASC (default) | DESC', examples: ['ASC'] })),
  ...glassPriceFilterQueryProperties,
  format: Type.Optional(
    StringEnum(['csv', 'xlsx'] as const, { default: 'csv', description: 'csv (default) or xlsx', examples: ['csv'] }),
  ),
  excel: Type.Optional(
    Type.Boolean({
      default: false,
      description: 'CSV for Excel with Russian settings: `;`, decimal comma and a BOM (ignored for xlsx)',
      examples: [false],
    }),
  ),
  headers: Type.Optional(
    StringEnum(HEADER_LANGUAGES, {
      default: 'en',
      description:
        'The header’s language: `en` (default) the API names (`manufacturer`, `price`), `ru` the Russian ones ' +
        '(`Производитель`, `Цена`); the upload reads both',
      examples: ['en'],
    }),
  ),
})

/**
 * The file name of an export made today, as the business day counts, naming its text filters and dialect, so
 * two different downloads do not take one name (`glass-prices-ray-2026-03-02-excel.csv`). ASCII only: a filter
 * in another script is left out of the name.
 */
function exportFileName(timezone: string, extension: string, filters: readonly unknown[], excel: boolean): string {
  const day = new Intl.DateTimeFormat('en-CA', { timeZone: timezone }).format(new Date())
  const words = filters
    .map((value) =>
      typeof value === 'string'
        ? value
            .toLowerCase()
            .replace(/[^a-z0-9]+/g, '-')
            .replace(/^-+|-+$/g, '')
            .slice(0, 40)
        : '',
    )
    .filter((word) => word !== '')
  return ['glass-prices', ...words, day, ...(excel ? ['excel'] : [])].join('-') + `.${extension}`
}

const emptyCheck = () => {
  const page = buildPage<never>([], { page: 0, size: CHECK_PAGE_SIZE, sort: [] }, 0)
  return { changed: page, created: page, deleted: page, conflicts: page }
}

/** The answer to an import: its counts, its batch and its check. */
function importAnswer(result: GlassPriceImportResult) {
  return {
    rows: result.rows,
    written: result.written,
    deleted: result.deleted,
    mode: result.mode,
    created: result.created,
    updated: result.updated,
    unchanged: result.unchanged,
    dryRun: result.dryRun,
    format: result.format,
    delimiter: result.delimiter,
    batch: result.batch,
    conflicts: result.conflicts,
    overwritten: result.overwritten,
    skipped: result.skipped,
    check: result.check ?? emptyCheck(),
  }
}

export async function glassPriceTransferRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const limit = app.config.importBodyLimit
  app.addContentTypeParser([...CSV_TYPES, XLSX_TYPE], (request, payload, done) => {
    spool(request, payload, limit).then(
      (upload) => done(null, upload),
      (error: Error) => done(error),
    )
  })
  // Whatever ends the request (an answer, a refusal, a timeout, the client leaving), its spool goes with it.
  const ownSpool = async (request: FastifyRequest, reply: FastifyReply) => {
    const owned = new UploadSpool()
    spools.set(request, owned)
    reply.raw.once('close', () => {
      owned.remove().catch((error: unknown) => request.log.warn({ err: error }, 'could not remove an upload spool'))
    })
  }

  app.post(
    `${base}/import`,
    {
      config: {
        writesCatalog: true,
        previewsWithDryRun: true,
        bodyTypes: ['text/csv', XLSX_TYPE],
        timeoutMs: UPLOAD_TIMEOUT_MS,
      },
      bodyLimit: limit,
      onRequest: ownSpool,
      schema: {
        tags,
        operationId: 'importGlassPrices',
        summary: 'Upload a price list (CSV or XLSX)',
        description:
          'A CSV file (`text/csv`), UTF-8 with or without a BOM, `,` or `;` (with `;` a decimal comma is accepted), ' +
          'or an XLSX workbook (its first sheet), ' +
          'whose header names the columns `manufacturer`, `brand`, `model`, `price`, `purchase` (or in Russian ' +
          '`Производитель`, `Бренд`, `Модель`, `Цена`, `Закупка`) in any order, and optionally `version` and ' +
          '`changedAt` (`Версия`, `Изменено`) as the export writes them: with `mode=upsert` a row whose entry ' +
          'changed since that version is a conflict, and the file is refused (409 `upload-conflicts`) unless ' +
          '`overwriteConflicts` or `skipConflicts` says what to do; a file without them is compared by value. ' +
          'Every answer has `check`: a page (`page`, `size`) of the rows that change, add, delete and conflict. ' +
          'Every row is checked first: any problem → 422 listing the first 100 with line and column, and nothing ' +
          'is written. A valid file is added (`mode=append`), updates the prices of the entries it names and adds ' +
          'the others (`mode=upsert`), or replaces the price list (`mode=replace`; a file that looks like a ' +
          'filtered export needs `confirmDeletes`, else 409), in one transaction, as one history batch that can ' +
          'be reverted. At most IMPORT_BODY_LIMIT bytes.',
        querystring: ImportQuerySchema,
        body: {
          content: {
            'text/csv': {
              schema: {
                description: 'CSV text with a header row',
                examples: [
                  'manufacturer;brand;model;price;purchase\nEssilorLuxottica;Ray-Ban;RB5154 Clubmaster;14990,00;6200,00\n',
                ],
              },
            },
            [XLSX_TYPE]: {
              // No type: the body reaches the handler as its spool, which a string schema would refuse.
              schema: { description: 'An XLSX workbook (binary); its first sheet is read' },
            },
          },
        },
        response: {
          200: ImportResultSchema,
          202: Type.Union([WriteJobSchema, ScheduledChangeSchema], {
            description:
              'Prefer: respond-async: the job, which Location names; a future effectiveAt: the scheduled change',
          }),
          ...problemResponses(400, 409, 413, 415, 422, 503),
        },
      },
    },
    async (request, reply) => {
      const upload = request.body
      if (!(upload instanceof SpooledUpload)) {
        const declared = request.headers['content-type']
        if (upload === undefined && [...CSV_TYPES, XLSX_TYPE].some((type) => declared?.startsWith(type))) {
          throw unprocessable('import-rejected', message('import.emptyFile'), {
            problemCount: 1,
            problems: [{ line: 1, column: null, message: message('import.fileEmpty') }],
          })
        }
        throw unsupportedMediaType(mediaTypeDetail(request), ['text/csv', XLSX_TYPE])
      }
      const query = request.query
      if (query.replace && query.mode !== undefined && query.mode !== 'replace') {
        throw invalidField('replace', message('validation.replaceContradicts', { mode: query.mode }))
      }
      const mode = query.mode ?? (query.replace ? 'replace' : 'append')
      if (query.overwriteConflicts !== undefined && query.skipConflicts) {
        throw invalidField('skipConflicts', message('import.conflictChoice'))
      }
      const conflicts: ConflictChoice =
        query.overwriteConflicts !== undefined
          ? { overwrite: query.overwriteConflicts }
          : query.skipConflicts
            ? 'skip'
            : 'refuse'
      const importChoices: UploadChoices = {
        mode,
        ...(query.confirmDeletes === undefined ? {} : { confirmDeletes: query.confirmDeletes }),
        conflicts,
      }
      const effectiveAt = futureEffectiveAt('effectiveAt', query.effectiveAt)
      const checkPage = parsePageRequest(query, { defaultSize: CHECK_PAGE_SIZE, maxSize: app.config.maxPageSize })
      // Opened now, the file stays readable when the spool is removed under it (the client gone mid-import).
      const file = await open(upload.path).catch(() => {
        throw new ProblemError(400, message('import.uploadEnded'))
      })
      // A workbook by its type, or by its bytes (a zip) when a client sent it as CSV or as Excel's older type.
      const head = new Uint8Array(4)
      await file.read(head, 0, 4, 0)
      const format = request.headers['content-type']?.startsWith(XLSX_TYPE) || looksLikeXlsx(head) ? 'xlsx' : 'csv'
      /** Imports the file; `recording` records its answer in its transaction; problems are thrown as problems. */
      const importFile = async (
        recording?: (run: RunSql, outcome: WriteOutcome) => Promise<void>,
        claim?: KeyedWrite,
      ) => {
        const result = await importGlassPriceFile(app.db, file.createReadStream({ autoClose: false, start: 0 }), {
          user: principalName(request),
          format,
          sourceBytes: upload.bytes,
          ...importChoices,
          dryRun: (query.dryRun ?? false) || effectiveAt !== undefined,
          checkPage,
          ...(claim ? { atStart: (client) => claim.claim(rawSql(client)) } : {}),
          ...(recording
            ? {
                beforeCommit: (client, done) =>
                  recording(rawSql(client), { status: 200, headers: {}, body: importAnswer(done) }),
              }
            : {}),
        })
        return importAnswer(result)
      }
      if (effectiveAt !== undefined && !query.dryRun) {
        // Checked now as a dry run (a file with problems is refused at once), then stored to apply when due.
        try {
          await importFile()
          const scheduled = await scheduleUpload(
            app.db.primary,
            await file.readFile(),
            { ...importChoices, fileName: query.fileName ?? null, size: (await file.stat()).size, format },
            effectiveAt,
            principalName(request),
          )
          return reply.code(202).header('location', `${base}/scheduled/${scheduled.id}`).send(scheduled)
        } finally {
          await file.close()
        }
      }
      const keyed = keyedWrite(request)
      if (prefersAsync(request) && !query.dryRun) {
        // The job reads the open file after the answer (its spool goes with the request) and closes it.
        let started = false
        try {
          return await app.writeJobs.start(request, reply, 'import', (complete) => {
            started = true
            return importFile(complete)
              .then(() => undefined)
              .finally(() => file.close())
          })
        } finally {
          if (!started) await file.close()
        }
      }
      // With an Idempotency-Key, the answer is recorded in the import's transaction (http/idempotency.ts).
      try {
        return await importFile(keyed ? (run, outcome) => keyed.save(run, outcome) : undefined, keyed)
      } catch (error) {
        if (error instanceof StoredOutcome && keyed) return replayOutcome(reply, keyed.fingerprint, error.row)
        throw error
      } finally {
        keyed?.settle()
        await file.close()
      }
    },
  )

  app.get(
    `${base}/export`,
    {
      config: { readsPurchasePrices: true },
      schema: {
        tags,
        operationId: 'exportGlassPrices',
        summary: 'Download the price list (the listing’s selection) as CSV or XLSX',
        description:
          'The entries the listing would show with the same filters, in its order, every one (no paging), with ' +
          'the import’s columns and then each entry’s `version` and `changedAt` (UTC), so the file uploads back ' +
          'unchanged and an upload of it finds the entries changed since. Streamed: memory stays constant whatever the ' +
          'size. `excel=true` writes `;`, decimal commas and a BOM; `format=xlsx` a workbook; `headers=ru` heads the ' +
          'columns in Russian (`Производитель;Бренд;Модель;Цена;Закупка;Версия;Изменено`), which the upload reads ' +
          'as well.',
        querystring: ExportQuerySchema,
        response: {
          // A stream of the file, not a value to serialise.
          200: Type.Unsafe<Readable>({
            description: 'The file (Content-Disposition: attachment)',
            content: {
              'text/csv': { schema: { type: 'string' } },
              [XLSX_TYPE]: { schema: { type: 'string', format: 'binary' } },
            },
          }),
          ...problemResponses(400, 503),
        },
      },
    },
    async (request, reply) => {
      const query = request.query
      const pages = glassPricePages(app.db.read, {
        filter: parseGlassPriceFilter(query),
        sortColumn: query.sortColumn ?? 'ID',
        sortDirection: query.sortDirection ?? 'ASC',
        timezone: app.config.businessTimezone,
      })
      // The first page is read before answering, so a failing database is a problem response, not a cut file.
      const first = await pages.next()
      const batches = (async function* (): AsyncGenerator<ExportRow[]> {
        if (first.done) return
        yield first.value
        yield* pages
      })()
      const columns = [...transferColumns(glasses, 'prices'), ...VERSION_COLUMNS]
      const out = new PassThrough()
      const xlsx = query.format === 'xlsx'
      const written = xlsx
        ? writeXlsx(batches, columns, out, { sheetName: 'glass prices', headers: query.headers })
        : writeCsv(batches, columns, out, { excel: query.excel ?? false, headers: query.headers })
      written.catch((error: unknown) => {
        // A client that leaves mid-file cancels the rest of the export: no fault of the service.
        if (isAbandonment(error)) request.log.info('export abandoned by its client')
        else request.log.error({ err: error }, 'export failed while streaming')
        out.destroy(error as Error)
      })
      const name = exportFileName(
        app.config.businessTimezone,
        xlsx ? 'xlsx' : 'csv',
        [query.manufacturer, query.brand, query.model],
        !xlsx && (query.excel ?? false),
      )
      return reply
        .type(xlsx ? XLSX_TYPE : 'text/csv; charset=utf-8; header=present')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'no-store')
        .send(out)
    },
  )
}
