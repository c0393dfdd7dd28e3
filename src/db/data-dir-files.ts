import { cp } from 'node:fs/promises'
import { basename } from 'node:path'
import { LOCK_FILE } from './data-dir-lock.js'

/*
 * What an embedded data directory holds besides the database: the owner's lock, the running service's backup socket,
 * a restore under way. Backups copy everything else.
 */

/** The running service's socket for backups, in its data directory (data-dir-backup.ts). */
export const BACKUP_SOCKET = '.optics-catalog.sock'

/** A restore unpacks its archive into this directory inside the data directory before it moves the files in. */
export const RESTORE_STAGING_PREFIX = '.optics-restore-'

/** Is a file of the data directory (its name) part of the database? */
export function isDatabaseFile(name: string): boolean {
  return !name.startsWith(LOCK_FILE) && name !== BACKUP_SOCKET && !name.startsWith(RESTORE_STAGING_PREFIX)
}

/** Copies the database files of `dataDir` into `target`; the caller makes sure nothing writes them meanwhile. */
export async function copyDatabaseFiles(dataDir: string, target: string): Promise<void> {
  await cp(dataDir, target, {
    recursive: true,
    filter: (source) => source === dataDir || isDatabaseFile(basename(source)),
  })
}
