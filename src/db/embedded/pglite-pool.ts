import type { PostgresPool, PostgresQueryResult } from 'kysely'
import type { PGliteThread } from './pglite-thread.js'

/** Runs one read statement on the connection a committed read is taken on. */
export type ReadQuery = <Row = Record<string, unknown>>(sql: string, parameters?: readonly unknown[]) => Promise<Row[]>

/*
 * Statements that change no data: transaction control, session settings and plain reads. Every other statement
 * (INSERT, UPDATE, DELETE, COPY into a table, REFRESH, DDL, a WITH that may hold a write, …) may write.
 */
const READ_ONLY_STATEMENT =
  /^\s*(?:select|show|values|begin|start\s+transaction|commit|rollback|end|abort|set|savepoint|release|checkpoint)\b/i

/**
 * A value read from the database, kept as of the last committed write (see {@link PGlitePool.committedRead}).
 */
export class CommittedRead<T> {
  readonly #read: (query: ReadQuery) => Promise<T>
  readonly #connect: () => Promise<PGliteClient>
  #value: { readonly value: T } | undefined
  /** Set while a write's end reads the value again. */
  #reading: Promise<void> | undefined

  constructor(read: (query: ReadQuery) => Promise<T>, connect: () => Promise<PGliteClient>) {
    this.#read = read
    this.#connect = connect
  }

  /** The value as of the last write committed before this call: waits only while a write's end reads it. */
  async current(): Promise<T> {
    if (this.#reading) await this.#reading
    if (this.#value) return this.#value.value
    // Not read yet (or its last read failed): read on a lending of its own, in turn. Once the lending is ours no
    // write can end before it does, so a value set meanwhile is current; a failure goes to the caller.
    const client = await this.#connect()
    try {
      if (!this.#value) this.#value = { value: await this.#read((sql, parameters) => client.rows(sql, parameters)) }
      return this.#value.value
    } finally {
      client.release()
    }
  }

  /** Forgets the value: the next caller reads it on a lending of its own. */
  forget(): void {
    this.#value = undefined
  }

  /**
   * Called by the pool, synchronously, as a lending that may have written ends: reads the value again on that
   * lending, before anyone else may use the connection. A failed read leaves it unknown.
   */
  refresh(query: ReadQuery): Promise<void> {
    this.#value = undefined
    const reading: Promise<void> = this.#read(query)
      .then(
        (value) => {
          this.#value = { value }
        },
        () => {},
      )
      .finally(() => {
        if (this.#reading === reading) this.#reading = undefined
      })
    this.#reading = reading
    return reading
  }
}

/**
 * A `pg.Pool` look-alike over one PGlite instance, so Kysely's own PostgreSQL dialect drives the embedded database
 * with the same SQL, transactions and savepoints as the server.
 *
 * PGlite is a single connection: a client is lent to one caller at a time and every other caller queues until it
 * is released. A transaction therefore holds the whole database; code inside a transaction must use the
 * transaction's handle, never the outer `db` (that would wait for itself).
 *
 * Committed reads ({@link committedRead}) answer without the connection: a lending that may have written reads
 * each of them again when it ends, on the same connection before anyone else gets it, so what they hold is
 * always the state of the last committed write. A write in progress (a bulk change holding the connection for
 * a minute) is not committed, so until its lending ends they stand, and nobody waits for it to read them.
 * This holds because this process is the database's only user (the data directory's lock, data-dir-lock.ts).
 */
export class PGlitePool {
  readonly #pglite: PGliteThread
  #queue: Promise<void> = Promise.resolve()
  #ended = false
  #waiting = 0
  #lent = false
  readonly #committedReads: CommittedRead<unknown>[] = []

  constructor(pglite: PGliteThread) {
    this.#pglite = pglite
  }

  /**
   * A value `read` from the database, kept as of the last committed write: reading it waits for the connection
   * only the first time (and for the few milliseconds a write's end takes to read it again).
   */
  committedRead<T>(read: (query: ReadQuery) => Promise<T>): CommittedRead<T> {
    const committed = new CommittedRead(read, () => this.connect())
    this.#committedReads.push(committed as CommittedRead<unknown>)
    return committed
  }

  /** After a lending that may have written: every committed read again, on the same lending. */
  async #afterWrite(): Promise<void> {
    // A lending never ends inside a transaction; were one open, what it wrote would not be committed yet.
    if (this.#pglite.inTransaction) {
      for (const committed of this.#committedReads) committed.forget()
      return
    }
    const query: ReadQuery = async <Row>(sql: string, parameters?: readonly unknown[]) =>
      (await this.#pglite.query<Row>(sql, parameters)).rows
    await Promise.all(this.#committedReads.map((committed) => committed.refresh(query)))
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
    return new PGliteClient(this.#pglite, (wrote) => {
      if (!wrote || this.#committedReads.length === 0) {
        this.#lent = false
        release()
        return
      }
      // The committed reads are marked as being read before the caller goes on (it may answer its client next).
      this.#afterWrite().finally(() => {
        this.#lent = false
        release()
      })
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
 * The command a PGlite result carries (`UPDATE`, …; Kysely reports affected rows for INSERT, UPDATE, DELETE and
 * MERGE), typed as Kysely's Postgres dialect declares it. A statement PGlite names none for gets the empty text,
 * which that declaration does not allow for: the one cast says so.
 */
function commandOf(result: { readonly command?: string }): PostgresQueryResult<unknown>['command'] {
  return (result.command ?? '') as PostgresQueryResult<unknown>['command']
}

export class PGliteClient {
  readonly #pglite: PGliteThread
  readonly #release: (wrote: boolean) => void
  #released = false
  /** Whether a statement of this lending may have written. */
  #wrote = false

  constructor(pglite: PGliteThread, release: (wrote: boolean) => void) {
    this.#pglite = pglite
    this.#release = release
  }

  /** One statement's rows. */
  async rows<Row = Record<string, unknown>>(sql: string, parameters: readonly unknown[] = []): Promise<Row[]> {
    return (await this.query<Row>(sql, parameters)).rows
  }

  /** One statement, answered in the shape of `pg`'s result, which Kysely's Postgres dialect reads. */
  async query<Row = Record<string, unknown>>(
    sql: string,
    parameters: readonly unknown[] = [],
  ): Promise<PostgresQueryResult<Row>> {
    if (!READ_ONLY_STATEMENT.test(sql)) this.#wrote = true
    const result = await this.#pglite.query<Row>(sql, parameters)
    return {
      command: commandOf(result),
      rowCount: result.affectedRows,
      rows: result.rows,
    }
  }

  /** Runs a `COPY … FROM '/dev/blob'` statement with the given bytes as its input (handed over: not to be reused). */
  async copyFrom(sql: string, input: Uint8Array): Promise<number> {
    this.#wrote = true
    return (await this.#pglite.query(sql, [], input)).affectedRows
  }

  /** Runs a `COPY … TO '/dev/blob'` statement; returns its output. */
  async copyToBlob(sql: string): Promise<Blob> {
    return (await this.#pglite.query(sql)).blob ?? new Blob([])
  }

  release(): void {
    if (this.#released) return
    this.#released = true
    this.#release(this.#wrote)
  }
}
