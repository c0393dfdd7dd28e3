import autocannon from 'autocannon'
import type { CpuPerRequest } from './cpu.js'

/*
 * The two load generators of a scenario, driven the same way: a fixed number of concurrent workers taking their
 * requests from one prepared list. Either for a fixed time, cycling through the list (`seconds`), or through the
 * list once, each request sent exactly once, ending when it is exhausted (`once`: the cold mix). The HTTP side is
 * autocannon against the service; the floor is the same SQL through the driver, with no HTTP and no service code
 * in between. Latencies are each request's own, in milliseconds, on both sides.
 */

export interface LoadResult {
  readonly requests: number
  /** Requests that failed: on the HTTP side connection errors, timeouts and answers other than 2xx. */
  readonly errors: number
  readonly durationSeconds: number
  readonly throughput: number
  readonly p50: number
  readonly p99: number
  /** HTTP side: answers other than 2xx, by status (absent when there were none). */
  readonly statuses?: Readonly<Record<string, number>>
  /** Up to a few failed requests, each with its answer or error, to say what went wrong. */
  readonly failures?: readonly string[]
  /** Processor time per request of the service, the database server and the load generator or driver. */
  readonly cpuPerRequestUs?: CpuPerRequest
  /** Once through a list of requests of several kinds (the cold mix): latencies per kind of request. */
  readonly byCategory?: Readonly<Record<string, CategoryFigures>>
  /** Once through a list: its slowest requests, slowest first, to find the shapes that cost most. */
  readonly slowest?: readonly SlowRequest[]
}

export interface SlowRequest {
  readonly ms: number
  readonly category?: string
  readonly request: string
}

export interface CategoryFigures {
  readonly requests: number
  readonly p50: number
  readonly p99: number
}

export interface HttpRequestSpec {
  readonly method: 'GET' | 'POST'
  readonly path: string
  readonly body?: unknown
}

/** Once through a list: each request's latency in ms, by its index in the list (NaN where it failed). */
export interface PerRequest {
  readonly perRequestMs?: Float64Array
}

/** For a time, cycling through the list; or through the list once (each request exactly once). */
export type LoadShape =
  | { readonly connections: number; readonly seconds: number }
  | { readonly connections: number; readonly once: true }

/** How many failed requests a result describes. */
const FAILURE_SAMPLES = 5

/** Seconds to wait for one answer before autocannon counts a timeout (a cold request may take long). */
const ONCE_TIMEOUT_SECONDS = 600

/** The percentile of sorted latencies, as the floor and the service side both compute it. */
export function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
}

/**
 * Drives the service with `connections` connections, each request the next of `requests`: for `seconds`
 * (cycling), or until every request of the list has been sent once (`once`).
 */
export async function runHttp(
  baseUrl: string,
  requests: readonly HttpRequestSpec[],
  shape: LoadShape,
): Promise<LoadResult & PerRequest> {
  const once = 'once' in shape
  const connections = once ? Math.min(shape.connections, requests.length) : shape.connections
  if (requests.length === 0 || connections < 1) throw new Error('runHttp: no requests to send')
  let next = 0
  const prepared = requests.map((request) => ({
    method: request.method,
    path: request.path,
    headers: request.body === undefined ? {} : { 'content-type': 'application/json' },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  }))
  const latencies: number[] = []
  const failures: string[] = []
  const perRequestMs = once ? new Float64Array(requests.length).fill(Number.NaN) : undefined
  // The index of the request just answered: onResponse runs right before the 'response' event of the same answer.
  let answered = -1
  const started = performance.now()
  let lastAnswer = started
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: baseUrl,
        connections,
        ...(once ? { amount: requests.length, timeout: ONCE_TIMEOUT_SECONDS } : { duration: shape.seconds }),
        requests: [
          {
            setupRequest: (request, context) => {
              const index = once ? next++ : next++ % prepared.length
              ;(context as { index?: number }).index = index
              return { ...request, ...prepared[index] } as typeof request
            },
            onResponse: (status, body, context) => {
              answered = (context as { index?: number }).index ?? -1
              if (status >= 200 && status < 300) return
              answered = -1
              if (failures.length >= FAILURE_SAMPLES) return
              const spec = prepared[(context as { index?: number }).index ?? -1]
              failures.push(
                `${status} ${spec?.method} ${spec?.path}${spec?.body ? ` ${spec.body}` : ''}: ${String(body).slice(0, 300)}`,
              )
            },
          },
        ],
      },
      (error, value) => (error ? reject(error) : resolve(value)),
    )
    instance.on('response', (_client, _status, _bytes, responseTime) => {
      latencies.push(responseTime)
      lastAnswer = performance.now()
      if (perRequestMs && answered >= 0) perRequestMs[answered] = responseTime
      answered = -1
    })
  })
  if (once && next !== requests.length) {
    throw new Error(`the load generator took ${next} requests of a list of ${requests.length} meant to be sent once`)
  }
  const completed = result.requests.total
  const failed = result.errors + result.timeouts + result.non2xx
  const statuses = Object.fromEntries(
    Object.entries(result.statusCodeStats ?? {})
      .filter(([status]) => !status.startsWith('2'))
      .map(([status, stats]) => [status, (stats as { count: number }).count]),
  )
  if (result.errors > 0 && failures.length < FAILURE_SAMPLES) {
    failures.push(`${result.errors} connection errors or timeouts (${result.timeouts} timeouts)`)
  }
  // Once through the list: the time until the last answer (autocannon's own duration ends on its next 1 s tick).
  const durationSeconds = once ? (lastAnswer - started) / 1000 : result.duration
  latencies.sort((a, b) => a - b)
  return {
    requests: completed,
    errors: failed,
    durationSeconds,
    throughput: completed / durationSeconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    ...(Object.keys(statuses).length > 0 ? { statuses } : {}),
    ...(failures.length > 0 ? { failures } : {}),
    ...(perRequestMs ? { perRequestMs } : {}),
  }
}

/**
 * Runs `work(i)` from `connections` workers: for `seconds` (the index keeps growing; the caller cycles), or for
 * each index of `0 … count − 1` exactly once (`once`, with `count`). Latencies in milliseconds.
 */
export async function runWorkers(
  work: (index: number) => Promise<unknown>,
  shape: LoadShape & { readonly count?: number },
): Promise<LoadResult & PerRequest> {
  const latencies: number[] = []
  const failures: string[] = []
  let errors = 0
  let next = 0
  const started = performance.now()
  const once = 'once' in shape
  const count = shape.count ?? 0
  const perRequestMs = once ? new Float64Array(count).fill(Number.NaN) : undefined
  if (once && count === 0) throw new Error('runWorkers: nothing to run once')
  const deadline = once ? Number.POSITIVE_INFINITY : started + shape.seconds * 1000
  const worker = async () => {
    while (performance.now() < deadline) {
      const index = next++
      if (once && index >= count) return
      const begin = performance.now()
      try {
        await work(index)
        const latency = performance.now() - begin
        latencies.push(latency)
        if (perRequestMs) perRequestMs[index] = latency
      } catch (error) {
        errors++
        if (failures.length < FAILURE_SAMPLES) failures.push(`request ${index}: ${(error as Error).message}`)
      }
    }
  }
  const workers = once ? Math.min(shape.connections, count) : shape.connections
  await Promise.all(Array.from({ length: workers }, worker))
  const durationSeconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    requests: latencies.length,
    errors,
    durationSeconds,
    throughput: latencies.length / durationSeconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    ...(failures.length > 0 ? { failures } : {}),
    ...(perRequestMs ? { perRequestMs } : {}),
  }
}

/** The median of a list of numbers (the figure quoted for repeated runs). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}
