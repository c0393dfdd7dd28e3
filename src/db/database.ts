import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { CompiledQuery, Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { from as copyFrom, to as copyTo } from 'pg-copy-streams'
import { copyDatabaseFiles, WAL_DIRECTORY } from './embedded/data-dir-files.js'
import { asPostgresPool, type PGliteClient, PGlitePool, type ReadQuery } from './embedded/pglite-pool.js'
import { PGliteThread } from './embedded/pglite-thread.js'
import { guardedConnect, WorkAbandonedError } from './request-work.js'
import { ReadRouting, type ReadRoutingStats } from './server/read-routing.js'
import type { Tables } from './tables.js'

export type { ReadQuery } from './embedded/pglite-pool.js'

export interface DatabaseOptions {
  /** `postgres://…`: use that server through `pg`. Unset: the embedded PGlite database. */
  readonly url?: string | undefined
  /**
   * Optional read replica (server mode only), a streaming standby of `url`: searches and listings read there
   * when it has replayed every write committed before them (read-routing.ts).
   */
  readonly readUrl?: string | undefined
  /** How long a read waits for the replica to replay the writes before it, before the primary answers. */
  readonly readMaxWaitMs?: number | undefined
  /** Embedded database directory; unset keeps the embedded database in memory. */
  readonly dataDir?: string | undefined
  /**
   * Embedded database: its buffer cache (`shared_buffers`) in MiB. It is memory of this process, filled as
   * statements touch pages (a large import fills all of it). Unset: PGlite's own (128 MB).
   */
  readonly sharedBuffersMb?: number | undefined
  /** Server mode: the schema to work in (tests isolate themselves this way). `public` stays on the path. */
  readonly schema?: string | undefined
  readonly poolSize?: number | undefined
  readonly applicationName?: string | undefined
  /**
   * Server mode: how long to wait for a connection (a new one, or a free one of a busy pool) before the query
   * fails as "database unavailable". Default 3000.
   */
  readonly connectTimeoutMs?: number | undefined
  /**
   * Server mode: PostgreSQL's `statement_timeout` and `idle_in_transaction_session_timeout` for every connection
   * (a stuck statement is cancelled; a transaction whose client vanished releases its locks). 0 or unset: none.
   * Work that may legitimately take longer sets `SET LOCAL statement_timeout = 0` in its own transaction.
   */
  readonly statementTimeoutMs?: number | undefined
}

/** Connections of one pool at one moment (metrics). */
export interface PoolStats {
  /** `primary`, or `read` for the read replica's pool. */
  readonly pool: 'primary' | 'read'
  /** Open connections, busy or idle. */
  readonly total: number
  readonly idle: number
  /** Callers waiting for a connection. */
  readonly waiting: number
  readonly max: number
}

/** A connection lent for a hand-written transaction: plain SQL, compiled Kysely queries and `COPY … FROM STDIN`. */
export interface RawClient {
  query<Row = Record<string, unknown>>(sql: string, parameters?: readonly unknown[]): Promise<Row[]>
  execute<Row>(query: CompiledQuery<Row>): Promise<Row[]>
  /**
   * Streams rows into `COPY <table>(<columns>) FROM STDIN WITH (FORMAT text)`; returns the row count.
   * The chunks are COPY text (see copy-text.ts), in the column order given.
   */
  copyRows(table: string, columns: readonly string[], chunks: AsyncIterable<string>): Promise<number>
  /** Runs `COPY (<query>) TO STDOUT WITH (FORMAT text)`; yields its output as text chunks (whole lines or not). */
  copyOut(query: string): AsyncIterable<string>
}

export interface Database {
  readonly driver: 'pglite' | 'postgres'
  /** Reads and writes: the primary. */
  readonly primary: Kysely<Tables>
  /**
   * Searches and listings: the read replica when configured, else the same as {@link primary}. With a replica,
   * each connection taken goes to the replica when it has replayed every write committed before, else to the
   * primary (read-routing.ts): what it reads is never older than what was committed before it was asked for.
   */
  readonly read: Kysely<Tables>
  /** The read replica's routing (readiness, metrics); undefined without a replica. */
  readonly readRouting?: {
    readonly stats: ReadRoutingStats
    /** Asks the replica where it stands; false (and reads go to the primary) when it does not answer. */
    checkReplica(): Promise<boolean>
  }
  /**
   * Runs `fn` in one transaction on one connection, with COPY available; commits, or rolls back on a throw.
   * `read`: on the read replica's connections when one is configured (a read-only snapshot for loading data).
   */
  rawTransaction<T>(fn: (client: RawClient) => Promise<T>, options?: { readonly read?: boolean }): Promise<T>
  /**
   * The embedded database in a directory: copies its files into `target` (created) as PostgreSQL's online base
   * backups do, while writes go on (they wait only for the backup's start and stop); opened, the copy replays its
   * log to a consistent state as of the copy's end.
   * Undefined for a server, and for an embedded database in memory.
   */
  readonly copyDataDir?: ((target: string, options?: CopyDataDirOptions) => Promise<void>) | undefined
  /**
   * The embedded database only: a value `read` from the database and kept as of the last committed write
   * (pglite-pool.ts), so that asking for it never waits behind a write holding the one connection. Undefined for
   * a server, which other processes write too.
   */
  readonly committedRead?: <T>(read: (query: ReadQuery) => Promise<T>) => { current(): Promise<T> }
  /** Cheap liveness check of the primary. */
  ping(): Promise<void>
  /** The connection pools' state now; the embedded database is one connection. */
  poolStats(): PoolStats[]
  close(): Promise<void>
}

export interface CopyDataDirOptions {
  /** Told of each file copied (the copy waits for it). */
  readonly onFile?: (path: string) => void | Promise<void>
}

/** One online copy at a time: PostgreSQL allows one backup per session, and the embedded database is one session. */
let copying: Promise<unknown> = Promise.resolve()

/**
 * A consistent copy of the embedded database taken while it serves, as PostgreSQL's own base backups are: the
 * backup starts (a checkpoint, held for that moment alone), the files are copied while writes go on, the backup
 * stops (its label tells where replay must begin and reach), and the write-ahead log is copied last, so it holds
 * every change a copied page may show. Opening the copy replays that log from the label's checkpoint (with the
 * full-page images written since it): the database as of the backup's end. Writes wait only for the start and
 * the stop, never for the copy.
 */
function onlineCopy(pool: PGlitePool, dataDir: string, target: string, options: CopyDataDirOptions): Promise<void> {
  const run = copying.then(async () => {
    const statement = async <Row>(sql: string, parameters?: readonly unknown[]): Promise<Row[]> => {
      const client = await pool.connect()
      try {
        return await client.rows<Row>(sql, parameters)
      } finally {
        client.release()
      }
    }
    await statement('SELECT pg_backup_start($1, true)', ['optics-catalog'])
    let stopped = false
    try {
      await copyDatabaseFiles(dataDir, target, {
        skip: (path) => path === WAL_DIRECTORY || path.startsWith(`${WAL_DIRECTORY}/`) || path === 'postmaster.pid',
        ...(options.onFile ? { onFile: options.onFile } : {}),
      })
      const [stop] = await statement<{ labelfile: string; spcmapfile: string | null }>(
        'SELECT labelfile, spcmapfile FROM pg_backup_stop(false)',
      )
      stopped = true
      if (!stop) throw new Error('the backup did not stop')
      await writeFile(join(target, 'backup_label'), stop.labelfile)
      if (stop.spcmapfile) await writeFile(join(target, 'tablespace_map'), stop.spcmapfile)
      await copyDatabaseFiles(join(dataDir, WAL_DIRECTORY), join(target, WAL_DIRECTORY), options)
    } finally {
      if (!stopped) await statement('SELECT pg_backup_stop(false)').catch(() => {})
    }
  })
  copying = run.catch(() => {})
  return run
}

/*
 * Both drivers hand back the same JavaScript types, so no code above this file knows which one runs:
 * int8 (ids, count(*)) → number, numeric → string (exact money), date → 'YYYY-MM-DD', timestamptz → Date.
 */
const INT8 = 20
const NUMERIC = 1700
const DATE = 1082

function pgTypeParser(oid: number, format?: 'text' | 'binary'): (value: string) => unknown {
  if (oid === INT8) return Number
  if (oid === NUMERIC || oid === DATE) return (value: string) => value
  return pg.types.getTypeParser(oid, format ?? 'text') as (value: string) => unknown
}

/** Byte arrays as one, of a buffer of its own (so it can be handed to the embedded database's thread). */
function joinBytes(parts: readonly Uint8Array[], size: number): Uint8Array {
  const joined = new Uint8Array(size)
  let offset = 0
  for (const part of parts) {
    joined.set(part, offset)
    offset += part.length
  }
  return joined
}

/** The largest COPY input the embedded database reads at once. */
const COPY_SLICE_BYTES = 1024 * 1024

/** Opens the embedded database or the server, according to the options. Does not migrate. */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.url ? openServer(options, options.url) : openEmbedded(options)
}

async function openEmbedded(options: DatabaseOptions): Promise<Database> {
  // On a thread of its own (pglite-thread.ts), with the same JavaScript types as the server's (pglite-worker.ts).
  const pglite = await PGliteThread.open({ dataDir: options.dataDir, sharedBuffersMb: options.sharedBuffersMb })
  const pool = new PGlitePool(pglite)
  const dataDir = options.dataDir
  // A request's work is guarded (request-work.ts); an embedded statement runs synchronously, so none is cancelled.
  const connect = guardedConnect(() => pool.connect())
  const db: Kysely<Tables> = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool: asPostgresPool(connect, () => pool.end()) }),
  })

  const copyRowsWith =
    (client: PGliteClient) => async (table: string, columns: readonly string[], chunks: AsyncIterable<string>) => {
      // PGlite reads COPY input from a blob, so the input goes in slices of COPY_SLICE_BYTES: the process holds
      // one slice at a time, and the database's memory (which grows to its largest input and never gives back)
      // stays small. Each chunk is encoded at once: a chunk built by concatenation holds many times its length
      // of heap until it is flattened.
      const copySql = `COPY ${table} (${columns.join(', ')}) FROM '/dev/blob' WITH (FORMAT text)`
      const encoder = new TextEncoder()
      let parts: Uint8Array[] = []
      let size = 0
      let total = 0
      for await (const chunk of chunks) {
        const bytes = encoder.encode(chunk)
        parts.push(bytes)
        size += bytes.length
        if (size >= COPY_SLICE_BYTES) {
          total += await client.copyFrom(copySql, joinBytes(parts, size))
          parts = []
          size = 0
        }
      }
      if (parts.length > 0) total += await client.copyFrom(copySql, joinBytes(parts, size))
      return total
    }

  return {
    driver: 'pglite',
    primary: db,
    read: db,
    committedRead: (read) => pool.committedRead(read),
    async rawTransaction(fn) {
      const client = await connect()
      try {
        await client.query('BEGIN')
        const raw: RawClient = {
          query: async <Row>(sql: string, parameters?: readonly unknown[]) =>
            (await client.query<Row>(sql, parameters)).rows,
          execute: async <Row>(query: CompiledQuery<Row>) =>
            (await client.query<Row>(query.sql, query.parameters)).rows,
          copyRows: copyRowsWith(client),
          async *copyOut(query) {
            const blob = await client.copyToBlob(`COPY (${query}) TO '/dev/blob' WITH (FORMAT text)`)
            const decoder = new TextDecoder()
            for await (const chunk of blob.stream() as unknown as AsyncIterable<Uint8Array>) {
              yield decoder.decode(chunk, { stream: true })
            }
            const rest = decoder.decode()
            if (rest !== '') yield rest
          },
        }
        const result = await fn(raw)
        await client.query('COMMIT')
        return result
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {})
        throw error
      } finally {
        client.release()
      }
    },
    ...(dataDir
      ? {
          copyDataDir: (target: string, options?: CopyDataDirOptions) =>
            onlineCopy(pool, dataDir, target, options ?? {}),
        }
      : {}),
    async ping() {
      await pglite.ping()
    },
    poolStats() {
      const lent = pool.lent ? 1 : 0
      return [{ pool: 'primary', total: 1, idle: 1 - lent, waiting: pool.waiting, max: 1 }]
    },
    async close() {
      await db.destroy()
      await pglite.close()
    },
  }
}

function newPool(url: string, options: DatabaseOptions): pg.Pool {
  const statementTimeout = options.statementTimeoutMs ?? 0
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3000,
    idleTimeoutMillis: 30_000,
    // Lets the operating system notice a connection whose server vanished without a word while it sat idle.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
    application_name: options.applicationName ?? 'optics-catalog',
    types: { getTypeParser: pgTypeParser },
    ...(statementTimeout > 0
      ? { statement_timeout: statementTimeout, idle_in_transaction_session_timeout: statementTimeout }
      : {}),
    ...(options.schema ? { options: `-c search_path=${quoteIdent(options.schema)},public` } : {}),
  })
  // An idle client losing its server must not crash the process; the next query reports the outage.
  pool.on('error', () => {})
  // Nor may a client that loses it while lent out (under a query, or between two): the pool listens only to idle
  // clients, and an 'error' event nobody listens to ends the process. The query fails by itself (or the next
  // one does), and the pool drops the broken client when it is released.
  pool.on('connect', (client) => {
    client.on('error', () => {})
  })
  return pool
}

/**
 * A pool's `connect` guarded for requests' work (request-work.ts), with the cancellation of a running statement:
 * `pg_cancel_backend` sent on a connection of its own, so it goes through even when the pool is exhausted.
 */
function guardedPool(pool: pg.Pool, url: string, cancellers: pg.Pool[]) {
  let canceller: pg.Pool | undefined
  const cancel = async (client: pg.PoolClient) => {
    if (!canceller) {
      canceller = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 2000, idleTimeoutMillis: 5000 })
      canceller.on('error', () => {})
      cancellers.push(canceller)
    }
    const pid = (client as unknown as { processID?: number }).processID
    if (pid) await canceller.query('SELECT pg_cancel_backend($1)', [pid])
  }
  const connect = guardedConnect(() => pool.connect(), cancel)
  return { connect, end: () => pool.end() }
}

async function openServer(options: DatabaseOptions, url: string): Promise<Database> {
  const cancellers: pg.Pool[] = []
  const pool = newPool(url, options)
  const primaryPool = guardedPool(pool, url, cancellers)
  const db: Kysely<Tables> = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: primaryPool }) })
  let read = db
  let readPool: pg.Pool | undefined
  let guardedReadPool = primaryPool
  let routing: ReadRouting | undefined
  if (options.readUrl) {
    const replica = newPool(options.readUrl, options)
    const replicaPool = guardedPool(replica, options.readUrl, cancellers)
    const readRouting = new ReadRouting(url, options.readUrl, {
      maxWaitMs: options.readMaxWaitMs ?? 200,
      connectTimeoutMs: options.connectTimeoutMs ?? 3000,
    })
    // An idle connection lost: the replica went away (a lent one fails its query, and the next connect fails).
    replica.on('error', () => readRouting.replicaFailed())
    guardedReadPool = {
      async connect() {
        if ((await readRouting.target()) === 'primary') return primaryPool.connect()
        try {
          return await replicaPool.connect()
        } catch (error) {
          if (error instanceof WorkAbandonedError) throw error
          readRouting.replicaFailed()
          return primaryPool.connect()
        }
      },
      end: () => replicaPool.end(),
    }
    readPool = replica
    routing = readRouting
    read = new Kysely<Tables>({ dialect: new PostgresDialect({ pool: guardedReadPool }) })
  }

  return {
    driver: 'postgres',
    primary: db,
    read,
    ...(routing ? { readRouting: routing } : {}),
    async rawTransaction(fn, transactionOptions) {
      const client = await (transactionOptions?.read ? guardedReadPool : primaryPool).connect()
      let broken = false
      try {
        await client.query('BEGIN')
        const raw: RawClient = {
          query: async (sql, parameters) => (await client.query(sql, parameters as unknown[])).rows,
          execute: async (query) => (await client.query(query.sql, query.parameters as unknown[])).rows,
          async copyRows(table, columns, chunks) {
            const stream = client.query(copyFrom(`COPY ${table} (${columns.join(', ')}) FROM STDIN WITH (FORMAT text)`))
            await pipeline(Readable.from(chunks), stream)
            return Number(stream.rowCount ?? 0)
          },
          async *copyOut(query) {
            const stream = client.query(copyTo(`COPY (${query}) TO STDOUT WITH (FORMAT text)`))
            stream.setEncoding('utf8')
            for await (const chunk of stream) yield chunk as string
          },
        }
        const result = await fn(raw)
        await client.query('COMMIT')
        return result
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {
          broken = true
        })
        throw error
      } finally {
        client.release(broken)
      }
    },
    async ping() {
      await pool.query('select 1')
    },
    poolStats() {
      const stats = (which: 'primary' | 'read', of: pg.Pool): PoolStats => ({
        pool: which,
        total: of.totalCount,
        idle: of.idleCount,
        waiting: of.waitingCount,
        max: of.options.max,
      })
      return readPool ? [stats('primary', pool), stats('read', readPool)] : [stats('primary', pool)]
    },
    async close() {
      await db.destroy()
      if (read !== db) await read.destroy()
      await routing?.close()
      await Promise.all(cancellers.map((canceller) => canceller.end()))
    },
  }
}

/** One statement of text on the database's reads (a standby where there is one), its rows. */
export function readQueryOf(db: Pick<Database, 'read'>): ReadQuery {
  return async <Row>(text: string, parameters?: readonly unknown[]) =>
    (await db.read.executeQuery<Row>(CompiledQuery.raw(text, [...(parameters ?? [])]))).rows
}

/** Quotes an SQL identifier (table, schema, column) that comes from this code base, never from a request. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}
