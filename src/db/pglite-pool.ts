import type { PGlite } from '@electric-sql/pglite'

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

export class PGliteClient {
  readonly #pglite: PGlite
  readonly #release: () => void
  #released = false

  constructor(pglite: PGlite, release: () => void) {
    this.#pglite = pglite
    this.#release = release
  }

  async query(sql: string, parameters: readonly unknown[] = []) {
    const result = await this.#pglite.query(sql, parameters as unknown[])
    return {
      command: (result as { command?: string }).command ?? '',
      rowCount: result.affectedRows ?? 0,
      rows: result.rows as Record<string, unknown>[],
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
