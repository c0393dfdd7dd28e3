import type { Migration } from 'kysely'
import * as catalog from './0001-catalog.js'

/**
 * Every migration, in the order it is applied. A migration never changes once released: a change to the schema
 * is a new entry at the end.
 */
export const migrations: Readonly<Record<string, Migration>> = {
  '0001-catalog': catalog,
}
