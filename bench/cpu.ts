import { readdirSync, readFileSync } from 'node:fs'

/*
 * Where the processor time of a measured load goes, per request: the service's process, the PostgreSQL server's
 * processes, and this process (autocannon on the service side, the driver on the floor side). On a machine where
 * all three share the cores, a side's throughput is bounded by its total; the split says which part a ratio
 * below the floor is made of. Linux only (/proc); elsewhere, and for a database server on another machine, the
 * figures are absent.
 */

export interface CpuPerRequest {
  /** Microseconds of the service's process per request; null on the floor side (no service). */
  readonly service: number | null
  /** Microseconds of the PostgreSQL server per request; null when it is not measurable here (embedded: inside the service). */
  readonly database: number | null
  /** Microseconds of this process per request: the load generator or the driver. */
  readonly client: number
}

interface CpuSample {
  readonly service: number | null
  readonly database: number | null
  readonly client: number
}

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on every Linux build in use). */
const TICKS_PER_SECOND = 100

/** utime + stime, and cutime + cstime (of children waited for), in seconds; null if the process is gone. */
export function processTimes(pid: number | string): { own: number; children: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command may hold spaces and parentheses: the fields start after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const at = (field: number) => Number(fields[field - 3])
    return {
      own: (at(14) + at(15)) / TICKS_PER_SECOND,
      children: (at(16) + at(17)) / TICKS_PER_SECOND,
    }
  } catch {
    return null
  }
}

const commandOf = (pid: string) => {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
  } catch {
    return ''
  }
}

/** The parent of a process, or undefined once it has ended. */
const parentOf = (pid: string): string | undefined => {
  try {
    return /^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? ''
  } catch {
    return undefined
  }
}

/**
 * The PostgreSQL server's processor time so far: every live postgres process, plus what the postmaster has
 * collected from the backends and parallel workers that ended (so one ending between two samples still counts).
 */
function databaseSeconds(): number | null {
  let total = 0
  let found = false
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    if (commandOf(pid) !== 'postgres') continue
    const times = processTimes(pid)
    if (!times) continue
    found = true
    total += times.own
    // Only the postmaster (whose parent is not postgres) waits for the server's processes. A backend may end
    // between the two reads: its time is then the postmaster's to count.
    const parent = parentOf(pid)
    if (parent !== undefined && commandOf(parent) !== 'postgres') total += times.children
  }
  return found ? total : null
}

const measurable = process.platform === 'linux'

/** Whether the database server runs on this machine (so its processes can be measured). */
export function isLocalServer(url: string | undefined): boolean {
  if (!url) return false
  const host = new URL(url).hostname
  return ['127.0.0.1', 'localhost', '::1', '[::1]', ''].includes(host)
}

function sample(servicePid: number | undefined, database: boolean): CpuSample | null {
  if (!measurable) return null
  const usage = process.cpuUsage()
  return {
    service: servicePid === undefined ? null : (processTimes(servicePid)?.own ?? null),
    database: database ? databaseSeconds() : null,
    client: (usage.user + usage.system) / 1e6,
  }
}

/**
 * Runs the measured work and answers its result with the processor time per request of each party.
 * `servicePid`: the service's process on the service side; `database`: whether to measure the server's processes.
 */
export async function withCpu<T extends { readonly requests: number }>(
  work: () => Promise<T>,
  options: { readonly servicePid?: number; readonly database: boolean },
): Promise<T & { cpuPerRequestUs?: CpuPerRequest }> {
  const before = sample(options.servicePid, options.database)
  const result = await work()
  const after = sample(options.servicePid, options.database)
  if (!before || !after || result.requests === 0) return result
  const perRequest = (from: number | null, to: number | null) =>
    from === null || to === null ? null : Math.round(((to - from) / result.requests) * 1e6)
  return {
    ...result,
    cpuPerRequestUs: {
      service: perRequest(before.service, after.service),
      database: perRequest(before.database, after.database),
      client: perRequest(before.client, after.client) ?? 0,
    },
  }
}
