import type { Migration } from 'kysely'
import * as catalog from './0001-catalog.js'
import * as glassPriceHistory from './0002-glass-price-history.js'
import * as catalogState from './0003-catalog-state.js'
import * as matviewVersion from './0004-matview-version.js'
import * as prescriptionIndexes from './0005-prescription-indexes.js'
import * as changeLog from './0006-change-log.js'
import * as lookAlikeKeys from './0007-look-alike-keys.js'
import * as idempotencyKeys from './0008-idempotency-keys.js'
import * as scheduledPriceChanges from './0010-scheduled-price-changes.js'
import * as confusableKeys from './0011-confusable-keys.js'
import * as trueTimes from './0013-true-times.js'
import * as scheduledUploads from './0014-scheduled-uploads.js'
import * as writeSchema from './0016-write-schema.js'

/**
 * Every migration, in the order it is applied. A migration never changes once released: a change to the schema
 * is a new entry at the end.
 */
export const migrations: Readonly<Record<string, Migration>> = {
  '0001-catalog': catalog,
  '0002-glass-price-history': glassPriceHistory,
  '0003-catalog-state': catalogState,
  '0004-matview-version': matviewVersion,
  '0005-prescription-indexes': prescriptionIndexes,
  '0006-change-log': changeLog,
  '0007-look-alike-keys': lookAlikeKeys,
  '0008-idempotency-keys': idempotencyKeys,
  '0010-scheduled-price-changes': scheduledPriceChanges,
  '0011-confusable-keys': confusableKeys,
  '0013-true-times': trueTimes,
  '0014-scheduled-uploads': scheduledUploads,
  '0016-write-schema': writeSchema,
}
