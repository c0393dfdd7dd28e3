import type { Dirent } from 'node:fs'
import { copyFile, mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
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

/** Where PostgreSQL keeps its write-ahead log, inside the data directory. */
export const WAL_DIRECTORY = 'pg_wal'

/**
 * Copies the database files of `dataDir` into `target` while the database may be writing them (an online backup's
 * copy, data-dir-backup.ts): a file is copied as it is at that moment, and one removed meanwhile (a table dropped,
 * a matview's old files) is skipped; replaying the write-ahead log, copied last, makes the copy consistent.
 * `skip` leaves out paths relative to `dataDir`; `onFile` is told of each file copied.
 */
export async function copyDatabaseFiles(
  dataDir: string,
  target: string,
  options: {
    readonly skip?: (path: string) => boolean
    readonly onFile?: (path: string) => void | Promise<void>
  } = {},
): Promise<void> {
  async function copyDirectory(relative: string): Promise<void> {
    await mkdir(join(target, relative), { recursive: true })
    let entries: Dirent[]
    try {
      entries = await readdir(join(dataDir, relative), { withFileTypes: true })
    } catch (error) {
      if (gone(error)) return
      throw error
    }
    for (const entry of entries) {
      const path = relative === '' ? entry.name : join(relative, entry.name)
      if ((relative === '' && !isDatabaseFile(entry.name)) || options.skip?.(path)) continue
      if (entry.isDirectory()) await copyDirectory(path)
      else if (entry.isFile()) {
        try {
          await copyFile(join(dataDir, path), join(target, path))
        } catch (error) {
          if (gone(error)) continue
          throw error
        }
        await options.onFile?.(path)
      }
    }
  }
  await copyDirectory('')
}

const gone = (error: unknown) => error instanceof Error && 'code' in error && error.code === 'ENOENT'
