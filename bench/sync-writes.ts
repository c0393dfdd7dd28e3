import { request } from 'node:http'
import { loadavg } from 'node:os'
import { parseArgs } from 'node:util'
import { openDatabase, type RawClient } from '../src/db/database.js'
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
 * history, checks or counts, run through the driver on the same data just before or after the service's write and
 * rolled back: the bulk change's `UPDATE`; the revert's `UPDATE … FROM` the change's rows; the upload's COPY of the
 * same rows into a staging table and its `UPDATE … FROM` it, matched on the entries' keys.
 */

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, 'data-dir': { type: 'string', default: 'bench/.data' } },
})
const runs = Number(values.runs)
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

/** Thrown to roll a floor's transaction back once timed. */
class RolledBack extends Error {
  constructor(readonly seconds: number) {
    super('rolled back')
  }
}

const floorDb = url ? await openDatabase({ url, poolSize: 1, statementTimeoutMs: 0 }) : undefined

/** The seconds `work` takes in a transaction of its own, which is then rolled back (the data stay as they were). */
async function floor(work: (client: RawClient) => Promise<unknown>): Promise<number> {
  if (!floorDb) return Number.NaN
  try {
    await floorDb.rawTransaction(async (client) => {
      const [, seconds] = await timed(() => work(client))
      throw new RolledBack(seconds)
    })
  } catch (error) {
    if (error instanceof RolledBack) return error.seconds
    throw error
  }
  return Number.NaN
}

const changeFloor = (k: string) =>
  floor((client) =>
    client.query(
      `UPDATE glasses_price SET price = round(purchase * ${k}, 0), updated_at = now(), updated_by = 'floor',
         version = version + 1
       WHERE price IS DISTINCT FROM round(purchase * ${k}, 0)`,
    ),
  )

const revertFloor = (batch: string) =>
  floor((client) =>
    client.query(
      `UPDATE glasses_price e SET price = r.old_value::numeric, updated_at = now(), updated_by = 'floor',
         version = e.version + 1
       FROM glass_price_change_row r WHERE r.change_id = $1 AND r.field = 'price' AND e.id = r.entry_id`,
      [batch],
    ),
  )

/** The rows of a CSV export (no comma in a key, as the demo's) as COPY text of the key columns and the prices. */
function copyText(lines: readonly string[], columns: readonly string[]): string {
  const at = ['manufacturer', 'brand', 'model', 'price', 'purchase'].map((name) => columns.indexOf(name))
  return lines.map((line) => `${at.map((index) => line.split(',')[index]).join('\t')}\n`).join('')
}

const uploadFloor = (rows: string) =>
  floor(async (client) => {
    await client.query(
      `CREATE TEMP TABLE floor_staging (manufacturer text, brand text, model text, price numeric(12,2),
         purchase numeric(12,2)) ON COMMIT DROP`,
    )
    await client.copyRows(
      'floor_staging',
      ['manufacturer', 'brand', 'model', 'price', 'purchase'],
      (async function* () {
        yield rows
      })(),
    )
    await client.query(
      `UPDATE glasses_price t SET price = s.price, purchase = s.purchase, updated_at = now(), updated_by = 'floor',
         version = t.version + 1
       FROM floor_staging s
       WHERE optics_norm(t.manufacturer) = optics_norm(s.manufacturer) AND optics_norm(t.brand) = optics_norm(s.brand)
         AND optics_norm(t.model) = optics_norm(s.model) AND (t.price, t.purchase) IS DISTINCT FROM (s.price, s.purchase)`,
    )
  })

buildService()
const service = await startService({
  ...(url ? { url } : { dataDir: values['data-dir'] }),
  poolSize: 4,
  readySeconds: 600,
})
const base = `${service.baseUrl}/api/v2/glasses/prices`
type Write = 'change' | 'revert' | 'upload'
const figures: Record<Write, number[]> = { change: [], revert: [], upload: [] }
const floors: Record<Write, number[]> = { change: [], revert: [], upload: [] }
try {
  for (let run = 0; run < runs; run++) {
    const [change, changeSeconds] = await timed(() =>
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
    )
    if (change.status !== 200) throw new Error(`bulk change: ${change.status} ${change.body}`)
    const batch = String(change.headers['x-price-change-batch'])
    const changed = Number(change.headers['x-changed-count'])
    // The floors run where the service's write ran: the revert's with the change applied, the change's after it.
    floors.revert.push(await revertFloor(batch))
    const [revert, revertSeconds] = await timed(() => send(`${base}/changes/${batch}/revert`, 'POST'))
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
    const [upload, uploadSeconds] = await timed(() => send(`${base}/import?mode=upsert`, 'POST', csv, 'text/csv'))
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
          ? `; floors ${floors.change.at(-1)?.toFixed(2)} / ${floors.revert.at(-1)?.toFixed(2)} / ` +
            `${floors.upload.at(-1)?.toFixed(2)} s`
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
  const bare = median(floors[write])
  return `${name} ${service.toFixed(2)} s (floor ${bare.toFixed(2)} s, ${(service / bare).toFixed(2)} ×)`
}
process.stdout.write(
  `medians of ${runs}: ${summary('change', 'bulk change')}, ${summary('revert', 'revert')}, ` +
    `${summary('upload', 'upload')}; load average ${loadavg()
      .map((load) => load.toFixed(2))
      .join(' ')}\n`,
)
