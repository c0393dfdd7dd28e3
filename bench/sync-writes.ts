import { request } from 'node:http'
import { parseArgs } from 'node:util'
import { buildService, startService } from './service.js'

/*
 * npm run bench:sync-writes -- [--runs R]
 * How long the synchronous writes of the whole glass price list take, as a client waits for them, on the catalogue
 * already loaded in BENCH_DATABASE_URL (or the embedded database in --data-dir, default bench/.data): a bulk change
 * of every entry (retail = purchase × k, whole roubles), the revert of that change, and the upload of the whole
 * list (its own CSV export, prices changed) with `mode=upsert`. Each `--runs` times (default 3); prints each, then
 * the medians. The service runs as `npm start` runs it, with its deadlines off.
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

buildService()
const service = await startService({
  ...(url ? { url } : { dataDir: values['data-dir'] }),
  poolSize: 4,
  readySeconds: 600,
})
const base = `${service.baseUrl}/api/v2/glasses/prices`
const figures: Record<'change' | 'revert' | 'upload', number[]> = { change: [], revert: [], upload: [] }
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
    const [revert, revertSeconds] = await timed(() => send(`${base}/changes/${batch}/revert`, 'POST'))
    if (revert.status !== 200) throw new Error(`revert: ${revert.status} ${revert.body}`)
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
    const [upload, uploadSeconds] = await timed(() => send(`${base}/import?mode=upsert`, 'POST', csv, 'text/csv'))
    if (upload.status !== 200) throw new Error(`upload: ${upload.status} ${upload.body.slice(0, 500)}`)
    const counts = JSON.parse(upload.body) as { rows: number; updated: number }
    figures.change.push(changeSeconds)
    figures.revert.push(revertSeconds)
    figures.upload.push(uploadSeconds)
    process.stdout.write(
      `run ${run + 1}: bulk change of ${changed.toLocaleString('en-US')} entries ${changeSeconds.toFixed(2)} s; ` +
        `its revert ${revertSeconds.toFixed(2)} s; upsert upload of ${counts.rows.toLocaleString('en-US')} rows ` +
        `(${counts.updated.toLocaleString('en-US')} updated) ${uploadSeconds.toFixed(2)} s\n`,
    )
  }
} finally {
  await service.stop()
}
process.stdout.write(
  `medians of ${runs}: bulk change ${median(figures.change).toFixed(2)} s, revert ${median(figures.revert).toFixed(2)} s, ` +
    `upload ${median(figures.upload).toFixed(2)} s\n`,
)
