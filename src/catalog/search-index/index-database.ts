import { type Database, type RawClient, type ReadQuery, readQueryOf } from '../../db/database.js'
import { type KindVersions, readVersions } from './kind-versions.js'

/* What the search index needs of the database, and the service's database as that. */

/** What a load reads through: one statement, or COPY's output. */
export type IndexClient = Pick<RawClient, 'query' | 'copyOut'>

/**
 * What the index needs of the database: snapshots to load in, single reads, and (embedded) the kinds' versions
 * kept as of the last committed write. The service's database gives it ({@link indexDatabaseOf}); on the index's
 * own thread, messages to the service's thread do (index-thread.ts).
 */
export interface IndexDatabase {
  readonly driver: Database['driver']
  rawTransaction<T>(fn: (client: IndexClient) => Promise<T>, options?: { readonly read?: boolean }): Promise<T>
  readonly readQuery: ReadQuery
  /**
   * The kinds' versions a request is compared with, where something cheaper than a read per request gives them:
   * the embedded database's as of its last committed write; on the index's own thread, those the service's thread
   * read for the request (index-thread.ts). Undefined: read them each time.
   */
  readonly currentVersions?: (() => Promise<Map<string, KindVersions>>) | undefined
}

/** The index's view of the service's database. */
export function indexDatabaseOf(db: Database): IndexDatabase {
  const committed = db.committedRead?.(readVersions)
  return {
    driver: db.driver,
    rawTransaction: (fn, options) => db.rawTransaction(fn, options),
    readQuery: readQueryOf(db),
    currentVersions: committed ? () => committed.current() : undefined,
  }
}
