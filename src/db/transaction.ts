import type { Kysely } from 'kysely'

/**
 * Runs `fn` in a transaction: `db`'s own when `db` already is one (the caller decides its extent), else a new one
 * that commits when `fn` resolves and rolls back when it throws. Inside `fn`, use only the handle it is given.
 */
export function inTransaction<D, T>(db: Kysely<D>, fn: (trx: Kysely<D>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn)
}
