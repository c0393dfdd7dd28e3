import pg from 'pg'
import { SharedRead } from '../shared-read.js'

/*
 * Which server a read goes to when a read replica (a streaming standby) is configured: exact answers with a
 * standby that replays behind the primary.
 *
 * A read may use the standby only when the standby has replayed every write committed before the read asked.
 * So each read first learns the primary's WAL position (`pg_current_wal_lsn()`, read after the read asked: every
 * commit acknowledged before then lies at or before it), then the standby's replay position
 * (`pg_last_wal_replay_lsn()`). Replayed that far: the standby answers. Behind: the read waits for the replay, up
 * to a bound, then goes to the primary. Both positions are read by one statement shared by the reads that arrive
 * while the previous one runs (shared-read.ts); replay only moves forward, so a standby once seen at or past the
 * primary's position answers without being asked again while the primary writes nothing.
 *
 * Failures: a standby that does not answer is DOWN and every read goes to the primary; it is probed every second
 * and takes reads again once it answers. A primary that does not answer cannot say where it is: the reads go to
 * the standby as it stands (no write can commit meanwhile), while writes fail with the outage's 503.
 */

/** Where one read goes. */
export type ReadTarget = 'replica' | 'primary'

export interface ReadRoutingOptions {
  /** How long a read waits for the standby to replay the writes before it, before the primary answers it. */
  readonly maxWaitMs: number
  readonly connectTimeoutMs: number
}

/** What the routing did since start (metrics) and the standby's state (readiness). */
export interface ReadRoutingStats {
  /** The standby answers (UP) or not (DOWN: reads go to the primary). */
  readonly replicaUp: boolean
  /** Reads answered by the standby; by the primary because it lagged beyond the wait; because it was down. */
  readonly reads: { readonly replica: number; readonly lagging: number; readonly replicaDown: number }
  /** The largest replay lag seen by a read, in bytes of WAL (0 when the standby was never behind). */
  readonly maxLagBytes: number
  /** The lag seen by the last read that asked the standby, in bytes of WAL. */
  readonly lastLagBytes: number
}

const PROBE_INTERVAL_MS = 1000
const POLL_INTERVAL_MS = 5

/** A WAL position (`16/B374D848`) as a number of bytes; exact up to 2^53 (8 PiB of WAL). */
export function lsnBytes(lsn: string): number {
  const [high = '0', low = '0'] = lsn.split('/')
  return Number.parseInt(high, 16) * 2 ** 32 + Number.parseInt(low, 16)
}

function positionPool(url: string, connectTimeoutMs: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: 1,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 10_000,
    application_name: 'optics-catalog read routing',
    // A server that accepts the connection but does not answer must not hold a read for long.
    query_timeout: connectTimeoutMs,
  })
  pool.on('error', () => {})
  pool.on('connect', (client) => {
    client.on('error', () => {})
  })
  return pool
}

export class ReadRouting {
  readonly #options: ReadRoutingOptions
  readonly #primary: pg.Pool
  readonly #replica: pg.Pool
  readonly #primaryPosition: SharedRead<number>
  /** The standby's replay position; null when it is not in recovery (a promoted standby, or a primary). */
  readonly #replayPosition: SharedRead<number | null>
  #replicaUp = true
  #replayed = 0
  #probe: NodeJS.Timeout | undefined
  #closed = false
  readonly #reads = { replica: 0, lagging: 0, replicaDown: 0 }
  #maxLag = 0
  #lastLag = 0

  constructor(primaryUrl: string, replicaUrl: string, options: ReadRoutingOptions) {
    this.#options = options
    this.#primary = positionPool(primaryUrl, options.connectTimeoutMs)
    this.#replica = positionPool(replicaUrl, options.connectTimeoutMs)
    this.#primaryPosition = new SharedRead(async () => {
      const { rows } = await this.#primary.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn')
      return lsnBytes(rows[0]?.lsn ?? '0/0')
    })
    this.#replayPosition = new SharedRead(async () => {
      const { rows } = await this.#replica.query<{ lsn: string | null }>('SELECT pg_last_wal_replay_lsn()::text AS lsn')
      const lsn = rows[0]?.lsn ?? null
      return lsn === null ? null : lsnBytes(lsn)
    })
  }

  get stats(): ReadRoutingStats {
    return {
      replicaUp: this.#replicaUp,
      reads: { ...this.#reads },
      maxLagBytes: this.#maxLag,
      lastLagBytes: this.#lastLag,
    }
  }

  /**
   * Where a read that asks now goes (see the header). Never throws: when neither server can say where it is,
   * the primary is named and the read itself reports the outage.
   */
  async target(): Promise<ReadTarget> {
    if (!this.#replicaUp) return this.#count('replicaDown', 'primary')
    let wanted: number
    try {
      wanted = await this.#primaryPosition.current()
    } catch {
      return this.#count('replica', 'replica')
    }
    if (this.#replayed >= wanted) return this.#count('replica', 'replica')
    const deadline = performance.now() + this.#options.maxWaitMs
    for (;;) {
      let replayed: number | null
      try {
        replayed = await this.#replayPosition.current()
      } catch {
        this.replicaFailed()
        return this.#count('replicaDown', 'primary')
      }
      // Not in recovery: it is a primary itself and holds every write it acknowledged.
      if (replayed === null) return this.#count('replica', 'replica')
      this.#replayed = Math.max(this.#replayed, replayed)
      this.#lastLag = Math.max(0, wanted - replayed)
      this.#maxLag = Math.max(this.#maxLag, this.#lastLag)
      if (replayed >= wanted) return this.#count('replica', 'replica')
      if (performance.now() >= deadline) return this.#count('lagging', 'primary')
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS))
    }
  }

  /** Asks the standby where it stands; false when it does not answer (it is then DOWN, see {@link replicaFailed}). */
  async checkReplica(): Promise<boolean> {
    try {
      await this.#replayPosition.current()
      this.#replicaBack()
      return true
    } catch {
      this.replicaFailed()
      return false
    }
  }

  /** Marks the standby DOWN (a connection to it failed); reads go to the primary until a probe reaches it. */
  replicaFailed(): void {
    if (!this.#replicaUp || this.#closed) return
    this.#replicaUp = false
    this.#replayed = 0
    this.#probe = setInterval(() => {
      this.#replayPosition.current().then(
        () => this.#replicaBack(),
        () => {},
      )
    }, PROBE_INTERVAL_MS)
    this.#probe.unref()
  }

  #replicaBack(): void {
    if (this.#replicaUp || this.#closed) return
    clearInterval(this.#probe)
    this.#replicaUp = true
  }

  async close(): Promise<void> {
    this.#closed = true
    clearInterval(this.#probe)
    await Promise.all([this.#primary.end(), this.#replica.end()])
  }

  #count(reason: keyof ReadRoutingStats['reads'], target: ReadTarget): ReadTarget {
    this.#reads[reason]++
    return target
  }
}
