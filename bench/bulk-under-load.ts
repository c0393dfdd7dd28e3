import { sql } from 'kysely'
import type { Database } from '../src/db/database.js'
import type { HttpRequestSpec } from './load.js'
import type { OneShotScenario, ScenarioDetails } from './scenarios.js'

/*
 * (k) A bulk change while others read and write: retail = purchase × k over the (up to) 112,000 entries of the
 * lowest purchase prices, sent while READERS clients search the nomenclature and list the glass price list one request
 * after another, and, once the change holds its rows, PUTS price edits of entries it changes (half with the
 * `If-Match` of the entry's version before the change). Measured: the reads' latencies during the change against
 * the same reads just before it, each PUT's status and how long it waited, and the change's own duration. The
 * floor is the bare UPDATE of the same entries, alone.
 */

const BAND_ENTRIES = 112_000
const READERS = 4
/** Reads before the change: unmeasured first (the previous run's writes are caught up with), then measured. */
const READ_WARMUP_MS = 3_000
const READ_BEFORE_MS = 3_000
const PUTS = 24
/** The PUTs go once the change has had this long to take its rows. */
const PUT_DELAY_MS = 500

interface RunFigures {
  readonly changeSeconds: number
  readonly changed: number
  readonly before: readonly number[]
  readonly during: readonly number[]
  readonly readErrors: number
  readonly puts: readonly { readonly status: number; readonly waitMs: number; readonly ifMatch: boolean }[]
}

const percentile = (values: readonly number[], share: number) => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)] as number
}
const median = (values: readonly number[]) => percentile(values, 0.5)
const ms = (value: number) => (Number.isFinite(value) ? value.toFixed(1) : '—')

/** Readers sending `requests` in turn until `stop` says so; each answer's latency goes to `into()`'s list. */
function startReaders(
  baseUrl: string,
  requests: readonly HttpRequestSpec[],
  into: () => number[],
  stop: () => boolean,
  errors: { count: number },
): Promise<unknown> {
  let next = Math.floor(Math.random() * requests.length)
  const reader = async () => {
    while (!stop()) {
      const request = requests[next++ % requests.length] as HttpRequestSpec
      const started = performance.now()
      try {
        const response = await fetch(`${baseUrl}${request.path}`, {
          method: request.method,
          ...(request.body === undefined
            ? {}
            : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(request.body) }),
        })
        await response.arrayBuffer()
        if (!response.ok) errors.count++
      } catch {
        errors.count++
      }
      into().push(performance.now() - started)
    }
  }
  return Promise.all(Array.from({ length: READERS }, reader))
}

/**
 * The bulk change the benchmark's scenarios (f) and (k) send: the retail price of the entries whose purchase price
 * is 1–`upper` becomes purchase × `k`, in whole roubles.
 */
export function sendPurchaseTimesK(baseUrl: string, upper: string, k: string): Promise<Response> {
  return fetch(`${baseUrl}/api/v2/glasses/prices/list`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      priceFrom: 1,
      priceTo: upper,
      priceTypeBase: 'PURCHASE',
      priceTypeChange: 'RETAIL',
      coefficient: k,
      round: 'WHOLE',
    }),
  })
}
/** The floor of that bulk change: the bare UPDATE of the same entries; returns the rows it changed. */
export async function purchaseTimesKFloor(db: Database, upper: string, k: string): Promise<number> {
  const result = await sql`
    UPDATE glasses_price SET price = round(purchase * ${k}::numeric, 0), updated_at = now(), version = version + 1
    WHERE purchase BETWEEN 1 AND ${upper}::numeric AND price IS DISTINCT FROM round(purchase * ${k}::numeric, 0)`.execute(
    db.primary,
  )
  return Number(result.numAffectedRows ?? 0)
}

export async function bulkUnderLoadScenario(db: Database, reads: readonly HttpRequestSpec[]): Promise<OneShotScenario> {
  const { rows } = await sql<{ count: number; upper: string | null }>`
    SELECT count(*) AS count, max(purchase)::text AS upper FROM (
      SELECT purchase FROM glasses_price WHERE purchase >= 1 ORDER BY purchase
      LIMIT ${BAND_ENTRIES}) band`.execute(db.primary)
  const upper = rows[0]?.upper ?? '1'
  const { rows: entries } = await sql<{
    id: number
    manufacturer: string
    brand: string
    model: string
    purchase: string
  }>`SELECT id, manufacturer, brand, model, purchase::text AS purchase FROM glasses_price
     WHERE purchase BETWEEN 1 AND ${upper}::numeric ORDER BY md5(id::text) LIMIT ${PUTS * 4}`.execute(db.primary)
  // Each execution, of either side, sets a coefficient other than the previous one's (and other than (f)'s).
  let executions = 0
  const coefficient = () => (executions++ % 2 === 0 ? '1.7' : '1.8')
  const runs: RunFigures[] = []

  const details = (): ScenarioDetails => {
    const before = runs.map((run) => ({ p50: median(run.before), p99: percentile(run.before, 0.99) }))
    const during = runs.map((run) => ({ p50: median(run.during), p99: percentile(run.during, 0.99) }))
    const puts = runs.flatMap((run) => run.puts)
    const statuses: Record<string, number> = {}
    for (const put of puts) statuses[put.status] = (statuses[put.status] ?? 0) + 1
    const waits = puts.map((put) => put.waitMs)
    const readErrors = runs.reduce((sum, run) => sum + run.readErrors, 0)
    const figures = {
      runs: runs.length,
      changed: median(runs.map((run) => run.changed)),
      changeSeconds: median(runs.map((run) => run.changeSeconds)),
      // A run whose reads before the change all waited past the window (the previous run's change still being
      // taken in) has no figures of its own: the median is of the runs that have.
      readsBefore: {
        p50: median(before.map((b) => b.p50).filter(Number.isFinite)),
        p99: median(before.map((b) => b.p99).filter(Number.isFinite)),
      },
      runsWithoutReadsBefore: runs.filter((run) => run.before.length === 0).length,
      readsDuring: { p50: median(during.map((d) => d.p50)), p99: median(during.map((d) => d.p99)) },
      readsPerRun: {
        before: median(runs.map((r) => r.before.length)),
        during: median(runs.map((r) => r.during.length)),
      },
      readErrors,
      putStatuses: statuses,
      putWaitMs: { p50: median(waits), max: Math.max(0, ...waits) },
    }
    const statusText = Object.entries(statuses)
      .map(([status, count]) => `${status} ×${count}`)
      .join(', ')
    const met =
      runs.length > 0 &&
      figures.readsDuring.p99 <= 100 &&
      readErrors === 0 &&
      puts.every((put) => put.status === 200 || put.status === 412 || put.status === 409)
    return {
      lines: [
        `the change of ${figures.changed.toLocaleString('en-US')} entries took ${figures.changeSeconds.toFixed(2)} s ` +
          `while ${READERS} clients read (searches and the price listing, one request after another)`,
        `reads before it: p50 ${ms(figures.readsBefore.p50)} ms, p99 ${ms(figures.readsBefore.p99)} ms ` +
          `(${figures.readsPerRun.before} in ${READ_BEFORE_MS / 1000} s, after ${READ_WARMUP_MS / 1000} s unmeasured` +
          `${figures.runsWithoutReadsBefore > 0 ? `; none answered in that window in ${figures.runsWithoutReadsBefore} run(s)` : ''}); during it: p50 ${ms(figures.readsDuring.p50)} ms, ` +
          `p99 ${ms(figures.readsDuring.p99)} ms (${figures.readsPerRun.during}); failed reads: ${readErrors}`,
        `${puts.length} PUTs on entries it changes, sent ${PUT_DELAY_MS} ms into it (half with the If-Match of the ` +
          `version before): ${statusText || 'none'}; waited p50 ${ms(figures.putWaitMs.p50)} ms, ` +
          `at most ${ms(figures.putWaitMs.max)} ms`,
      ],
      figures,
      targets: 'reads p99 ≤ 100 ms during the change, PUTs 200, 412 or 409',
      met,
    }
  }

  return {
    type: 'once',
    id: 'k-bulk-under-load',
    title: `(k) bulk price change of the entries with purchase 1–${upper} while clients read and edit prices`,
    ratioTarget: 1.5,
    side: 'http',
    details,
    async service({ baseUrl }) {
      const url = baseUrl as string
      const before: number[] = []
      const during: number[] = []
      const errors = { count: 0 }
      let phase: 'warmup' | 'before' | 'during' | 'done' = 'warmup'
      const warmup: number[] = []
      const readers = startReaders(
        url,
        reads,
        () => (phase === 'warmup' ? warmup : phase === 'before' ? before : during),
        () => phase === 'done',
        errors,
      )
      await new Promise((resolve) => setTimeout(resolve, READ_WARMUP_MS))
      phase = 'before'
      await new Promise((resolve) => setTimeout(resolve, READ_BEFORE_MS))
      const chosen = entries
        .slice((runs.length * PUTS) % entries.length)
        .concat(entries)
        .slice(0, PUTS)
      // The versions before the change, for the If-Match of half the PUTs.
      const tags = await Promise.all(
        chosen.map(async (entry) => (await fetch(`${url}/api/v2/glasses/prices/${entry.id}`)).headers.get('etag')),
      )
      phase = 'during'
      const started = performance.now()
      const change = sendPurchaseTimesK(url, upper, coefficient()).then(async (response) => {
        const seconds = (performance.now() - started) / 1000
        const body = await response.text()
        if (response.status !== 200) throw new Error(`bulk change answered ${response.status}: ${body}`)
        return { seconds, changed: Number(response.headers.get('x-changed-count')) }
      })
      await new Promise((resolve) => setTimeout(resolve, PUT_DELAY_MS))
      const puts = chosen.map(async (entry, index) => {
        const ifMatch = index % 2 === 0 && tags[index] ? { 'if-match': tags[index] as string } : undefined
        const sent = performance.now()
        const response = await fetch(`${url}/api/v2/glasses/prices/${entry.id}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json', ...ifMatch },
          body: JSON.stringify({
            manufacturer: entry.manufacturer,
            brand: entry.brand,
            model: entry.model,
            price: (Math.round(Number(entry.purchase) * 2) + 3 + runs.length).toFixed(2),
            purchase: entry.purchase,
          }),
        })
        await response.arrayBuffer()
        return { status: response.status, waitMs: performance.now() - sent, ifMatch: ifMatch !== undefined }
      })
      const done = await change
      phase = 'done'
      const putResults = await Promise.all(puts)
      await readers
      runs.push({
        changeSeconds: done.seconds,
        changed: done.changed,
        before,
        during,
        readErrors: errors.count,
        puts: putResults,
      })
      return { rows: done.changed, seconds: done.seconds }
    },
    floor: (database) => purchaseTimesKFloor(database, upper, coefficient()),
  }
}
