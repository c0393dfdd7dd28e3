import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { finished, pipeline } from 'node:stream/promises'
import { parseArgs } from 'node:util'
import { openDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { buildService, startService } from './service.js'

/*
 * npm run bench:upload -- [--mb N] [--runs R] [--modes dry,real]
 * The glass price list uploaded over HTTP as a CSV file of about N MB (default 100) of distinct entries, to the
 * service in its own process (compiled, as `npm start` runs it): once as a dry run, once for real (`append` into
 * an empty list, so every row is written with its history), each `--runs` times (default 3) on a fresh list.
 * Measured: the service's resident memory (sampled every 50 ms from /proc) before the upload and at its peak,
 * how long the answer took, and its status. On BENCH_DATABASE_URL when set (its glass price list is emptied),
 * else on an embedded database in a temporary directory. Prints one line per upload, then the medians.
 * The service inherits this environment: EMBEDDED_SHARED_BUFFERS_MB=N measures the embedded database with that
 * buffer cache.
 */

const { values } = parseArgs({
  options: {
    mb: { type: 'string', default: '100' },
    runs: { type: 'string', default: '3' },
    modes: { type: 'string', default: 'dry,real' },
  },
})
const megabytes = Number(values.mb)
const runs = Number(values.runs)
const modes = values.modes.split(',').map((mode) => mode.trim())
if (!(megabytes > 0) || !Number.isInteger(runs) || runs < 1 || modes.some((m) => m !== 'dry' && m !== 'real')) {
  process.stderr.write('bench:upload: --mb must be positive, --runs a positive integer, --modes dry and/or real\n')
  process.exit(2)
}

const url = process.env.BENCH_DATABASE_URL || undefined
const work = mkdtempSync(join(tmpdir(), 'optics-upload-bench-'))
const csv = join(work, 'glass-prices.csv')

/** Distinct entries, as a price manager's file looks: a maker, a brand, a model code, two prices. */
async function writeCsv(bytes: number): Promise<number> {
  const makers = ['Luxottica', 'Safilo', 'Kering Eyewear', 'Marcolin', 'Marchon', 'De Rigo', 'Charmant', 'Silhouette']
  const out = createWriteStream(csv)
  out.write('manufacturer,brand,model,price,purchase\n')
  let written = 0
  let rows = 0
  while (written < bytes) {
    let chunk = ''
    for (let i = 0; i < 5000; i++, rows++) {
      const maker = makers[rows % makers.length]
      const price = 1000 + ((rows * 37) % 90000)
      chunk += `${maker},Brand ${rows % 997},MD-${rows.toString(36).toUpperCase()}-${rows % 89},${price}.50,${Math.floor(price / 2)}.00\n`
    }
    written += Buffer.byteLength(chunk)
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', () => resolve()))
  }
  out.end()
  await finished(out)
  return rows
}

/** POSTs the file as text/csv; resolves with the answer's status and body. */
function upload(url: string, size: number): Promise<{ status: number; ok: boolean; body: string }> {
  return new Promise((resolve, reject) => {
    const sent = request(
      url,
      { method: 'POST', headers: { 'content-type': 'text/csv', 'content-length': String(size) } },
      (response) => {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk: string) => {
          body += chunk
        })
        response.on('end', () => {
          const status = response.statusCode ?? 0
          resolve({ status, ok: status >= 200 && status < 300, body })
        })
        response.on('error', reject)
      },
    )
    sent.on('error', reject)
    pipeline(createReadStream(csv), sent).catch(reject)
  })
}

function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) / 1024
}

const median = (numbers: number[]) => {
  const sorted = [...numbers].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

const dataDir = url ? undefined : join(work, 'data')
{
  const db = await openDatabase(url ? { url } : { dataDir: dataDir as string })
  await migrateToLatest(db.primary)
  await db.close()
}
/** Empties the glass price list and its history between uploads (the service is stopped meanwhile). */
async function emptyList(): Promise<void> {
  const db = await openDatabase(url ? { url } : { dataDir: dataDir as string })
  await db.rawTransaction(async (client) => {
    await client.query('TRUNCATE glasses_price, glass_price_change, glass_price_change_row CASCADE')
  })
  if (db.driver === 'pglite') await db.rawTransaction((client) => client.query('CHECKPOINT'))
  await db.close()
}

const rows = await writeCsv(megabytes * 1_000_000)
const size = statSync(csv).size
process.stdout.write(
  `${(size / 1024 / 1024).toFixed(1)} MiB, ${rows.toLocaleString('en-US')} entries, on ${url ? 'PostgreSQL' : 'the embedded database'}\n`,
)
buildService()

interface Measured {
  readonly mode: string
  readonly status: number
  readonly seconds: number
  readonly baseMiB: number
  readonly peakMiB: number
  readonly growthMiB: number
}
const measured: Measured[] = []
try {
  for (let run = 0; run < runs; run++) {
    for (const mode of modes) {
      await emptyList()
      const service = await startService({
        ...(url ? { url } : { dataDir: dataDir as string }),
        poolSize: 4,
        readySeconds: 600,
      })
      const pid = service.pid as number
      try {
        // Settle: the start's own garbage collected, so the baseline is what an idle service holds.
        await new Promise((resolve) => setTimeout(resolve, 2000))
        const baseMiB = rssMiB(pid, 'VmRSS')
        let peakMiB = baseMiB
        const sampler = setInterval(() => {
          try {
            peakMiB = Math.max(peakMiB, rssMiB(pid, 'VmRSS'))
          } catch {}
        }, 50)
        const started = performance.now()
        // node:http, not fetch: fetch gives up on an answer after 300 s, and a large file may take longer.
        const response = await upload(
          `${service.baseUrl}/api/v2/glasses/prices/import?mode=append${mode === 'dry' ? '&dryRun=true' : ''}`,
          size,
        )
        const body = response.body
        const seconds = (performance.now() - started) / 1000
        clearInterval(sampler)
        peakMiB = Math.max(peakMiB, rssMiB(pid, 'VmRSS'))
        const result: Measured = {
          mode,
          status: response.status,
          seconds,
          baseMiB,
          peakMiB,
          growthMiB: peakMiB - baseMiB,
        }
        measured.push(result)
        process.stdout.write(
          `${mode}: ${response.status} in ${seconds.toFixed(1)} s; RSS ${baseMiB.toFixed(0)} → peak ${peakMiB.toFixed(0)} MiB (+${result.growthMiB.toFixed(0)})` +
            `${response.ok ? '' : `: ${body.slice(0, 300)}`}\n`,
        )
      } finally {
        await service.stop()
      }
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
for (const mode of modes) {
  const of = measured.filter((m) => m.mode === mode)
  process.stdout.write(
    `median ${mode} (${of.length}): ${median(of.map((m) => m.seconds)).toFixed(1)} s, ` +
      `growth +${median(of.map((m) => m.growthMiB)).toFixed(0)} MiB, peak ${median(of.map((m) => m.peakMiB)).toFixed(0)} MiB, ` +
      `statuses ${of.map((m) => m.status).join(' ')}\n`,
  )
}
if (measured.some((m) => m.status !== 200)) process.exitCode = 1
