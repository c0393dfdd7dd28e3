import autocannon from 'autocannon'
import type { CpuPerRequest } from './cpu.js'

/*
 * The two load generators of a scenario, driven the same way: a fixed number of concurrent workers cycling through
 * one prepared list of requests for a fixed time. The HTTP side is autocannon against the service; the floor is the
 * same SQL through the driver, with no HTTP and no service code in between.
 */

export interface LoadResult {
  readonly requests: number
  readonly errors: number
  readonly durationSeconds: number
  readonly throughput: number
  readonly p50: number
  readonly p99: number
  /** Processor time per request of the service, the database server and the load generator or driver. */
  readonly cpuPerRequestUs?: CpuPerRequest
}

export interface HttpRequestSpec {
  readonly method: 'GET' | 'POST'
  readonly path: string
  readonly body?: unknown
}

/** Drives the service with `connections` connections for `seconds`, each request the next of `requests`. */
export async function runHttp(
  baseUrl: string,
  requests: readonly HttpRequestSpec[],
  options: { readonly connections: number; readonly seconds: number },
): Promise<LoadResult> {
  let next = 0
  const prepared = requests.map((request) => ({
    method: request.method,
    path: request.path,
    headers: request.body === undefined ? {} : { 'content-type': 'application/json' },
    body: request.body === undefined ? undefined : JSON.stringify(request.body),
  }))
  const result = await autocannon({
    url: baseUrl,
    connections: options.connections,
    duration: options.seconds,
    requests: [
      {
        setupRequest: (request) => {
          const spec = prepared[next++ % prepared.length]!
          return { ...request, ...spec } as typeof request
        },
      },
    ],
  })
  const completed = result.requests.total
  const failed = result.errors + result.timeouts + result.non2xx
  return {
    requests: completed,
    errors: failed,
    durationSeconds: result.duration,
    throughput: completed / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
  }
}

/** Runs `work(i)` from `concurrency` workers for `seconds`; latencies in milliseconds. */
export async function runWorkers(
  work: (index: number) => Promise<unknown>,
  options: { readonly connections: number; readonly seconds: number },
): Promise<LoadResult> {
  const latencies: number[] = []
  let errors = 0
  let next = 0
  const started = performance.now()
  const deadline = started + options.seconds * 1000
  const worker = async () => {
    while (performance.now() < deadline) {
      const index = next++
      const begin = performance.now()
      try {
        await work(index)
        latencies.push(performance.now() - begin)
      } catch {
        errors++
      }
    }
  }
  await Promise.all(Array.from({ length: options.connections }, worker))
  const durationSeconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0
  return {
    requests: latencies.length,
    errors,
    durationSeconds,
    throughput: latencies.length / durationSeconds,
    p50: at(0.5),
    p99: at(0.99),
  }
}

/** The median of a list of numbers (the figure quoted for repeated runs). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}
