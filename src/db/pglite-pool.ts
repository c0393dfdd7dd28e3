import type { PGlite } from '@electric-sql/pglite'
import type { PostgresPool, PostgresQueryResult } from 'kysely'

/**
 * A `pg.Pool` look-alike over one PGlite instance, so Kysely's own PostgreSQL dialect drives the embedded database
 * with the same SQL, transactions and savepoints as the server.
 *
 * PGlite is a single connection: a client is lent to one caller at a time and every other caller queues until it
 * is released. A transaction therefore holds the whole database; code inside a transaction must use the
 * transaction's handle, never the outer `db` (that would wait for itself).
 */
export class PGlitePool {
  readonly #pglite: PGlite
  #queue: Promise<void> = Promise.resolve()
  #ended = false
  #waiting = 0
  #lent = false

  constructor(pglite: PGlite) {
    this.#pglite = pglite
  }

  /** Waits until the connection is free, then lends it until `release()` is called. */
  async connect(): Promise<PGliteClient> {
    if (this.#ended) throw new Error('the embedded database is closed')
    let release!: () => void
    const previous = this.#queue
    this.#queue = new Promise<void>((resolve) => {
      release = resolve
    })
    this.#waiting += 1
    try {
      await previous
    } finally {
      this.#waiting -= 1
    }
    this.#lent = true
    return new PGliteClient(this.#pglite, () => {
      this.#lent = false
      release()
    })
  }

  /** Callers queued for the connection (metrics). */
  get waiting(): number {
    return this.#waiting
  }

  /** Whether the connection is lent out now (metrics). */
  get lent(): boolean {
    return this.#lent
  }

  async end(): Promise<void> {
    this.#ended = true
    await this.#queue
  }
}

/**
 * A pool for Kysely's Postgres dialect, lending PGlite clients. The dialect's type asks each client for cursors
 * too (`query(cursor)`, used only by Kysely's `stream()`), which PGlite has not and nothing here uses: the one
 * cast leaves that overload out.
 */
export function asPostgresPool(connect: () => Promise<PGliteClient>, end: () => Promise<void>): PostgresPool {
  return { connect, end } as unknown as PostgresPool
}

/**
 * The command a PGlite result carries, typed as Kysely's Postgres dialect declares it. PGlite's results carry none
 * (the empty text stands in, as before), which that declaration does not allow for: the one cast says so.
 */
function commandOf(result: object): PostgresQueryResult<unknown>['command'] {
  return ((result as { command?: string }).command ?? '') as PostgresQueryResult<unknown>['command']
}

export class PGliteClient {
  readonly #pglite: PGlite
  readonly #release: () => void
  #released = false

  constructor(pglite: PGlite, release: () => void) {
    this.#pglite = pglite
    this.#release = release
  }

  /**
   * One statement, answered in the shape of `pg`'s result, which Kysely's Postgres dialect reads. PGlite's result
   * names no command, so none is given: Kysely then reports no affected-row count, as it always has here.
   */
  async query<Row = Record<string, unknown>>(
    sql: string,
    parameters: readonly unknown[] = [],
  ): Promise<PostgresQueryResult<Row>> {
    const result = await this.#pglite.query<Row>(sql, [...parameters])
    return {
      command: commandOf(result),
      rowCount: result.affectedRows ?? 0,
      rows: result.rows,
    }
  }

  /** Runs a `COPY … FROM '/dev/blob'` statement with the given text as its input. */
  async copyFromBlob(sql: string, blob: Blob): Promise<number> {
    const result = await this.#pglite.query(sql, [], { blob })
    return result.affectedRows ?? 0
  }

  /** Runs a `COPY … TO '/dev/blob'` statement; returns its output. */
  async copyToBlob(sql: string): Promise<Blob> {
    const result = await this.#pglite.query(sql)
    return (result as { blob?: Blob }).blob ?? new Blob([])
  }

  release(): void {
    if (this.#released) return
    this.#released = true
    this.#release()
  }
}
