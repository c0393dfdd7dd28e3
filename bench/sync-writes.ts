import { request } from 'node:http'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { openDatabase, type RawClient } from '../src/db/database.js'
import { coldMixScenarios } from './cold-mix.js'
import { percentile } from './load.js'
import type { BenchRequest } from './scenarios.js'
import { buildService, startService } from './service.js'

/*
 * npm run bench:sync-writes -- [--runs R]
 * How long the synchronous writes of the whole glass price list take, as a client waits for them, on the catalogue
 * already loaded in BENCH_DATABASE_URL (or the embedded database in --data-dir, default bench/.data): a bulk change
 * of every entry (retail = purchase × k, whole roubles), the revert of that change, and the upload of the whole
 * list (its own CSV export, prices changed) with `mode=upsert`. Each `--runs` times (default 3); prints each, then
 * the medians. The service runs as `npm start` runs it, with its deadlines off.
 *
 * On a server (BENCH_DATABASE_URL) each write also has its floor, the bare statements that do the same work without
 * checks or counts, run through the driver on the same data just before or after the service's write and rolled
 * back: the bulk change's `UPDATE`; the revert's `UPDATE … FROM` the change's rows; the upload's COPY of the same
 * rows into a staging table and its `UPDATE … FROM` it, matched on the entries' keys; each alone, and with the
 * bare `INSERT … SELECT` of the history rows the service writes for it (the ratio is to that).
 *
 * Meanwhile `--readers` clients (default 4) read as the counter does: the cold mix's varied requests (searches of
 * every kind, facets, suggestions, the glass listing; cold-mix.ts draws them from the catalogue), each sent once,
 * one after another per client, for `--before` seconds before each write (the baseline) and while it runs. Per
 * write: the reads' count, failures, p50, p99 and the slowest, before and during. The run exits 1 if a write is not
 * answered 200 or a read fails.
 */

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    'data-dir': { type: 'string', default: 'bench/.data' },
    readers: { type: 'string', default: '4' },
    before: { type: 'string', default: '3' },
  },
})
const runs = Number(values.runs)
const readerCount = Number(values.readers)
const beforeMs = Number(values.before) * 1000
const url = process.env.BENCH_DATABASE_URL || undefined

/** A request with no client-side deadline (fetch gives up after 300 s); resolves with status, headers and body. */
function send(
  target: string,
  method: string,
  body?: string,
  type = 'application/json',
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(
      target,
      {
        method,
        headers: body === undefined ? {} : { 'content-type': type, 'content-length': Buffer.byteLength(body) },
      },
      (response) => {
        let text = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          text += chunk
        })
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }))
        response.on('error', reject)
      },
    )
    sent.on('error', reject)
    sent.end(body)
  })
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now()
  const result = await work()
  return [result, (performance.now() - started) / 1000]
}

const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)] as number

/** Thrown to roll a floor's transaction back once timed: the seconds of its write alone and of all its statements. */
class RolledBack extends Error {
  constructor(readonly figures: Floor) {
    super('rolled back')
  }
}

interface Floor {
  /** The bare write statement alone. */
  readonly write: number
  /** With the bare statement that writes its history rows, as the service writes them. */
  readonly withHistory: number
}

const floorDb = url ? await openDatabase({ url, poolSize: 1, statementTimeoutMs: 0 }) : undefined

/**
 * Times a floor in a transaction of its own, then rolls it back (the data stay as they were): `prepare` (not
 * timed, bar `copy` inside it), the history statement and the write statement, given the history's change id.
 */
async function floor(parts: {
  readonly prepare?: (client: RawClient) => Promise<number>
  readonly history: string
  readonly write: string
  readonly parameters?: readonly unknown[]
}): Promise<Floor> {
  if (!floorDb) return { write: Number.NaN, withHistory: Number.NaN }
  try {
    await floorDb.rawTransaction(async (client) => {
      const copySeconds = (await parts.prepare?.(client)) ?? 0
      const [change] = await client.query<{ id: number }>(
        `INSERT INTO glass_price_change (action, created_by, parameters) VALUES ('IMPORT', 'floor', '{}') RETURNING id`,
      )
      const [, historySeconds] = await timed(() =>
        client.query(parts.history, [change?.id, ...(parts.parameters ?? [])]),
      )
      const [, writeSeconds] = await timed(() => client.query(parts.write, parts.parameters ?? []))
      throw new RolledBack({
        write: copySeconds + writeSeconds,
        withHistory: copySeconds + writeSeconds + historySeconds,
      })
    })
  } catch (error) {
    if (error instanceof RolledBack) return error.figures
    throw error
  }
  throw new Error('a floor was not rolled back')
}

/** The bulk change's: every retail price = purchase × k in whole roubles, where that changes it. */
const changeFloor = (k: string) =>
  floor({
    history: `INSERT INTO glass_price_change_row (change_id, entry_id, field, old_value, new_value)
      SELECT $1, id, 'price', price::text, round(purchase * ${k}, 0)::text FROM glasses_price
      WHERE price IS DISTINCT FROM round(purchase * ${k}, 0)`,
    write: `UPDATE glasses_price SET price = round(purchase * ${k}, 0), updated_at = now(), updated_by = 'floor',
        version = version + 1
      WHERE price IS DISTINCT FROM round(purchase * ${k}, 0)`,
  })

/** The revert's: every entry of the change back to its recorded old price. */
const revertFloor = (batch: string) =>
  floor({
    history: `INSERT INTO glass_price_change_row (change_id, entry_id, field, old_value, new_value)
      SELECT $1, entry_id, field, new_value, old_value FROM glass_price_change_row WHERE change_id = $2`,
    write: `UPDATE glasses_price e SET price = r.old_value::numeric, updated_at = now(), updated_by = 'floor',
        version = e.version + 1
      FROM glass_price_change_row r WHERE r.change_id = $1 AND r.field = 'price' AND e.id = r.entry_id`,
    parameters: [batch],
  })

/** The rows of a CSV export (no comma in a key, as the demo's) as COPY text of the key columns and the prices. */
function copyText(lines: readonly string[], columns: readonly string[]): string {
  const at = ['manufacturer', 'brand', 'model', 'price', 'purchase'].map((name) => columns.indexOf(name))
  return lines.map((line) => `${at.map((index) => line.split(',')[index]).join('\t')}\n`).join('')
}

const matched = `optics_norm(t.manufacturer) = optics_norm(s.manufacturer) AND optics_norm(t.brand) = optics_norm(s.brand)
  AND optics_norm(t.model) = optics_norm(s.model)`

/** The upload's: the same rows copied into a staging table, and every entry they change updated from it. */
const uploadFloor = (rows: string) =>
  floor({
    async prepare(client) {
      await client.query(
        `CREATE TEMP TABLE floor_staging (manufacturer text, brand text, model text, price numeric(12,2),
           purchase numeric(12,2)) ON COMMIT DROP`,
      )
      const [, seconds] = await timed(() =>
        client.copyRows(
          'floor_staging',
          ['manufacturer', 'brand', 'model', 'price', 'purchase'],
          (async function* () {
            yield rows
          })(),
        ),
      )
      return seconds
    },
    history: `INSERT INTO glass_price_change_row (change_id, entry_id, field, old_value, new_value)
      SELECT $1, t.id, f.field, f.old_value, f.new_value
      FROM floor_staging s JOIN glasses_price t ON ${matched}
      CROSS JOIN LATERAL (VALUES ('price', t.price::text, s.price::text), ('purchase', t.purchase::text, s.purchase::text))
        AS f (field, old_value, new_value)
      WHERE f.old_value IS DISTINCT FROM f.new_value`,
    write: `UPDATE glasses_price t SET price = s.price, purchase = s.purchase, updated_at = now(), updated_by = 'floor',
        version = t.version + 1
      FROM floor_staging s
      WHERE ${matched} AND (t.price, t.purchase) IS DISTINCT FROM (s.price, s.purchase)`,
  })

/** What the readers saw in one phase. */
interface ReadFigures {
  readonly requests: number
  readonly failed: number
  readonly p50: number
  readonly p99: number
  readonly slowest: number
}

/** Requests drawn for the readers: enough for several minutes of reading; past the end they start again. */
const READ_REQUESTS = 50_000

/** The cold mix's requests, read from the catalogue before the service owns it (the embedded database's one user). */
async function readerRequests(): Promise<readonly BenchRequest[]> {
  if (readerCount <= 0) return []
  const db = await openDatabase(url ? { url, poolSize: 1 } : { dataDir: values['data-dir'], poolSize: 1 })
  try {
    const [scenario] = await coldMixScenarios({
      db,
      requests: READ_REQUESTS * runs,
      warmup: 0,
      runs: 1,
      connections: [1],
    })
    return scenario?.requests ?? []
  } finally {
    await db.close()
  }
}

/** Clients reading the list one request after another, in phases; every request of the list is sent once a pass. */
class Readers {
  #next = 0
  readonly #list: readonly BenchRequest[]
  readonly #base: string
  readonly failures: string[] = []
  constructor(list: readonly BenchRequest[], base: string) {
    this.#list = list
    this.#base = base
  }

  /** Reads while `work` runs (or for `ms`), then waits for the reads in flight; what they saw. */
  async during<T>(work: (() => Promise<T>) | number): Promise<[T | undefined, ReadFigures]> {
    const latencies: number[] = []
    let failed = 0
    let reading = true
    const client = async () => {
      while (reading && this.#list.length > 0) {
        const { http } = this.#list[this.#next++ % this.#list.length] as BenchRequest
        const started = performance.now()
        try {
          const answer = await send(
            `${this.#base}${http.path}`,
            http.method,
            http.body === undefined ? undefined : JSON.stringify(http.body),
          )
          if (answer.status < 200 || answer.status > 299) {
            failed++
            if (this.failures.length < 5)
              this.failures.push(`${http.method} ${http.path}: ${answer.status} ${answer.body.slice(0, 200)}`)
          }
        } catch (error) {
          failed++
          if (this.failures.length < 5) this.failures.push(`${http.method} ${http.path}: ${String(error)}`)
        }
        latencies.push(performance.now() - started)
      }
    }
    const clients = Array.from({ length: readerCount }, client)
    let result: T | undefined
    try {
      if (typeof work === 'number') await new Promise((resolve) => setTimeout(resolve, work))
      else result = await work()
    } finally {
      reading = false
      await Promise.all(clients)
    }
    latencies.sort((a, b) => a - b)
    return [
      result,
      {
        requests: latencies.length,
        failed,
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        slowest: latencies.at(-1) ?? 0,
      },
    ]
  }
}

const readsLine = (name: string, before: ReadFigures, during: ReadFigures) =>
  `  readers (${readerCount}) during the ${name}: ${during.requests} reads, ${during.failed} failed, p50 ` +
  `${during.p50.toFixed(1)} ms, p99 ${during.p99.toFixed(1)} ms, slowest ${during.slowest.toFixed(0)} ms; the ` +
  `${(beforeMs / 1000).toFixed(0)} s before it: ${before.requests} reads, ${before.failed} failed, p99 ` +
  `${before.p99.toFixed(1)} ms\n`

/** Runs a write with the readers: a baseline before it, then reads during it. */
async function withReaders<T>(readers: Readers, name: Write, work: () => Promise<T>): Promise<T> {
  if (readerCount <= 0) return work()
  const [, before] = await readers.during(beforeMs)
  const [result, during] = await readers.during(work)
  reads[name].push({ before, during })
  process.stdout.write(readsLine(name === 'change' ? 'bulk change' : name, before, during))
  return result as T
}

const readList = await readerRequests()
buildService()
const service = await startService({
  ...(url ? { url } : { dataDir: values['data-dir'] }),
  poolSize: 4,
  readySeconds: 600,
})
const base = `${service.baseUrl}/api/v2/glasses/prices`
type Write = 'change' | 'revert' | 'upload'
const figures: Record<Write, number[]> = { change: [], revert: [], upload: [] }
const reads: Record<Write, { before: ReadFigures; during: ReadFigures }[]> = { change: [], revert: [], upload: [] }
const readers = new Readers(readList, service.baseUrl)
const floors: Record<Write, Floor[]> = { change: [], revert: [], upload: [] }
try {
  for (let run = 0; run < runs; run++) {
    const [change, changeSeconds] = await withReaders(readers, 'change', () =>
      timed(() =>
        send(
          `${base}/list`,
          'POST',
          JSON.stringify({
            priceTypeBase: 'PURCHASE',
            priceTypeChange: 'RETAIL',
            coefficient: run % 2 === 0 ? '2.1' : '2.2',
            round: 'WHOLE',
          }),
        ),
      ),
    )
    if (change.status !== 200) throw new Error(`bulk change: ${change.status} ${change.body}`)
    const batch = String(change.headers['x-price-change-batch'])
    const changed = Number(change.headers['x-changed-count'])
    // The floors run where the service's write ran: the revert's with the change applied, the change's after it.
    floors.revert.push(await revertFloor(batch))
    const [revert, revertSeconds] = await withReaders(readers, 'revert', () =>
      timed(() => send(`${base}/changes/${batch}/revert`, 'POST')),
    )
    if (revert.status !== 200) throw new Error(`revert: ${revert.status} ${revert.body}`)
    floors.change.push(await changeFloor(run % 2 === 0 ? '2.1' : '2.2'))
    // The list's own export, every price one rouble higher: an upsert that updates every entry.
    const exported = await send(`${base}/export`, 'GET')
    const lines = exported.body.trimEnd().split('\n')
    const header = lines[0] as string
    const columns = header.split(',')
    const priceAt = columns.indexOf('price')
    const csv = [
      header,
      ...lines.slice(1).map((line) => {
        // The export quotes only what needs quoting; the demo's keys never hold a comma, so split is safe here.
        const fields = line.split(',')
        fields[priceAt] = (Number(fields[priceAt]) + 1).toFixed(2)
        return fields.join(',')
      }),
    ].join('\n')
    floors.upload.push(await uploadFloor(copyText(csv.split('\n').slice(1), columns)))
    const [upload, uploadSeconds] = await withReaders(readers, 'upload', () =>
      timed(() => send(`${base}/import?mode=upsert`, 'POST', csv, 'text/csv')),
    )
    if (upload.status !== 200) throw new Error(`upload: ${upload.status} ${upload.body.slice(0, 500)}`)
    const counts = JSON.parse(upload.body) as { rows: number; updated: number }
    figures.change.push(changeSeconds)
    figures.revert.push(revertSeconds)
    figures.upload.push(uploadSeconds)
    process.stdout.write(
      `run ${run + 1}: bulk change of ${changed.toLocaleString('en-US')} entries ${changeSeconds.toFixed(2)} s; ` +
        `its revert ${revertSeconds.toFixed(2)} s; upsert upload of ${counts.rows.toLocaleString('en-US')} rows ` +
        `(${counts.updated.toLocaleString('en-US')} updated) ${uploadSeconds.toFixed(2)} s` +
        (floorDb
          ? `; floors (write, with history) ${(['change', 'revert', 'upload'] as const)
              .map((write) => {
                const last = floors[write].at(-1)
                return `${last?.write.toFixed(2)}, ${last?.withHistory.toFixed(2)}`
              })
              .join(' / ')} s`
          : '') +
        '\n',
    )
  }
} finally {
  await service.stop()
  await floorDb?.close()
}
const summary = (write: Write, name: string) => {
  const service = median(figures[write])
  if (!floorDb) return `${name} ${service.toFixed(2)} s`
  const bare = median(floors[write].map((figure) => figure.write))
  const withHistory = median(floors[write].map((figure) => figure.withHistory))
  return (
    `${name} ${service.toFixed(2)} s (floor ${bare.toFixed(2)} s, ${withHistory.toFixed(2)} s with its history: ` +
    `${(service / withHistory).toFixed(2)} ×)`
  )
}
const readSummary = (write: Write) => {
  const during = reads[write].map((figure) => figure.during)
  if (during.length === 0) return ''
  const worst = (pick: (figure: ReadFigures) => number) => Math.max(...during.map(pick))
  return (
    `${write}: p99 ${median(during.map((figure) => figure.p99)).toFixed(1)} ms (worst run ${worst((f) => f.p99).toFixed(1)}), ` +
    `slowest ${worst((f) => f.slowest).toFixed(0)} ms, ${during.reduce((sum, f) => sum + f.failed, 0)} failed`
  )
}
if (readerCount > 0) {
  process.stdout.write(
    `readers during the writes (median p99 of ${runs}): ${(['change', 'revert', 'upload'] as const).map(readSummary).join('; ')}\n`,
  )
  for (const failure of readers.failures) process.stdout.write(`  !! ${failure}\n`)
}
process.stdout.write(
  `medians of ${runs}: ${summary('change', 'bulk change')}, ${summary('revert', 'revert')}, ` +
    `${summary('upload', 'upload')}; load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}\n`,
)
if (readers.failures.length > 0) process.exitCode = 1
