import { type Kysely, sql } from 'kysely'
import type { Tables } from './tables.js'

/*
 * Transaction-level advisory locks: released by COMMIT or ROLLBACK, so an error path can never leak one. The key
 * is a pair (purpose, object) hashed in SQL, with the object qualified by the current schema: two schemas of one
 * database (parallel test suites, two deployments) never wait for each other.
 */

const key = (purpose: string, object: string) =>
  sql`hashtext(${purpose}), hashtext(current_schema() || '.' || ${object})`

/**
 * Waits for the lock until the surrounding transaction ends. `db` must be a transaction: outside one the lock
 * would be released at once.
 */
export async function lockForTransaction(db: Kysely<Tables>, purpose: string, object: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${key(purpose, object)})`.execute(db)
}

/** Takes the lock if it is free (true) or returns false at once; held until the surrounding transaction ends. */
export async function tryLockForTransaction(db: Kysely<Tables>, purpose: string, object: string): Promise<boolean> {
  const { rows } = await sql<{
    locked: boolean
  }>`SELECT pg_try_advisory_xact_lock(${key(purpose, object)}) AS locked`.execute(db)
  return rows[0]?.locked === true
}
