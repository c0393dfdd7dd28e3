import { createReadStream, createWriteStream, existsSync } from 'node:fs'
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises'
import { createServer, request, type Server } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Readable, Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import * as tar from 'tar'
import { openDatabase } from '../database.js'
import { BACKUP_SOCKET, isDatabaseFile, RESTORE_STAGING_PREFIX } from './data-dir-files.js'

/*
 * Backups of the embedded database: a gzipped tar of the data directory's files, the format of PGlite's own
 * `dumpDataDir()` (PGlite's `loadDataDir` opens it too). It is consistent: an online base backup, as PostgreSQL's
 * own (database.ts): the files are copied while writes go on, with the backup's label and the write-ahead log
 * copied last, so opening the copy replays it to the database as of the backup's end (a restore opens it once).
 * PGlite's `dumpDataDir()` itself builds the whole archive in memory (several times the database's size); this one
 * copies the files to a temporary directory and archives the copy afterwards as a stream, so memory stays flat.
 *
 * One process owns a data directory (data-dir-lock.ts). While the service runs, a backup goes through it: the
 * service listens on a unix socket in the directory (`.optics-catalog.sock`, data-dir-files.ts, readable by its user only, so whoever
 * may read the files may ask for a backup, nobody else) and the CLI asks there. With no service running, the CLI
 * takes the lock and archives the closed directory.
 */

/** A directory holds a PostgreSQL (PGlite) database when it has PG_VERSION. */
function holdsDatabase(directory: string): boolean {
  return existsSync(join(directory, 'PG_VERSION'))
}

/** Writes the archive of the database files in `directory` (a closed database, or a copy) to `out`. */
async function archiveDirectory(directory: string, out: Writable): Promise<void> {
  const entries = (await readdir(directory)).filter(isDatabaseFile).sort()
  await pipeline(tar.create({ gzip: true, cwd: directory, portable: true }, entries), out)
}

/**
 * Writes a backup of the embedded database to `out`. `copy` (the open database's `copyDataDir`) takes a consistent
 * copy while the service runs; without it the caller holds the directory's lock and no process has it open.
 */
export async function writeBackup(
  dataDir: string,
  out: Writable,
  copy?: (target: string) => Promise<void>,
): Promise<void> {
  const directory = resolve(dataDir)
  if (!copy) {
    if (!holdsDatabase(directory)) throw new Error(`DATA_DIR: ${directory} holds no database to back up`)
    await archiveDirectory(directory, out)
    return
  }
  const staging = await mkdtemp(join(tmpdir(), 'optics-backup-'))
  try {
    const snapshot = join(staging, 'data')
    await copy(snapshot)
    await archiveDirectory(snapshot, out)
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

/** Writes a backup into `file` through a sibling `.partial` file, so an interrupted one never looks complete. */
export async function writeBackupFile(file: string, write: (out: Writable) => Promise<void>): Promise<number> {
  const partial = `${file}.partial`
  try {
    await write(createWriteStream(partial))
    await rename(partial, file)
  } catch (error) {
    await rm(partial, { force: true })
    throw error
  }
  return (await stat(file)).size
}

/**
 * Restores the archive `file` into `dataDir`, which the caller has locked. The directory must hold no database,
 * unless `replace`: then its database is replaced. The archive is unpacked beside the old files first and opened
 * once (a check, and the crash recovery of a copy taken from a running database), so a bad archive changes nothing.
 */
export async function restoreBackup(file: string, dataDir: string, options: { replace: boolean }): Promise<number> {
  const directory = resolve(dataDir)
  await mkdir(directory, { recursive: true })
  const existing = (await readdir(directory)).filter(isDatabaseFile)
  if (existing.length > 0 && !options.replace) {
    throw new RestoreRefused(
      `DATA_DIR: ${directory} is not empty; restore into an empty directory, or pass --replace to replace its database`,
    )
  }
  const staging = join(directory, `${RESTORE_STAGING_PREFIX}${process.pid}`)
  await rm(staging, { recursive: true, force: true })
  await mkdir(staging)
  try {
    try {
      await pipeline(createReadStream(file), tar.extract({ cwd: staging, strict: true }))
    } catch (error) {
      throw new RestoreRefused(`${file} is not a backup archive (${(error as Error).message})`)
    }
    if (!holdsDatabase(staging)) throw new RestoreRefused(`${file} holds no database (no PG_VERSION)`)
    const db = await openDatabase({ dataDir: staging })
    await db.ping()
    await db.close()
    const restored = await readdir(staging)
    for (const name of existing) await rm(join(directory, name), { recursive: true, force: true })
    for (const name of restored) await rename(join(staging, name), join(directory, name))
    return restored.length
  } finally {
    await rm(staging, { recursive: true, force: true })
  }
}

/** A restore that cannot go ahead; nothing was changed. */
export class RestoreRefused extends Error {
  override name = 'RestoreRefused'
}

/**
 * The running service's door for backups: `GET /backup` on the unix socket {@link BACKUP_SOCKET} of its data
 * directory streams an archive. Returns the server (close it before the database), or undefined when the socket
 * cannot be made (a path too long for a unix socket, say), which `onError` reports.
 */
export async function listenForBackups(
  dataDir: string,
  copy: (target: string) => Promise<void>,
  onError: (error: Error, message: string) => void,
): Promise<Server | undefined> {
  const path = join(resolve(dataDir), BACKUP_SOCKET)
  // The caller owns the directory: a socket file left by a killed predecessor is nobody's.
  await rm(path, { force: true })
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/backup') {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': 'application/gzip' })
    writeBackup(dataDir, res, copy).catch((error: Error) => {
      onError(error, 'backup failed')
      // The client sees a cut stream (no complete gzip), never a truncated archive taken for whole.
      res.destroy(error)
    })
  })
  const listening = await new Promise<boolean>((done) => {
    server.once('error', (error) => {
      onError(error, `no backup socket at ${path}; backups need the service stopped`)
      done(false)
    })
    // Only the directory's user may connect: the socket is as private as the files it hands out.
    const mask = process.umask(0o177)
    server.listen({ path }, () => done(true))
    process.umask(mask)
  })
  return listening ? server : undefined
}

/** The CLI's side: asks the service owning `dataDir` for a backup and streams it into `out`. */
export async function requestBackup(dataDir: string, out: Writable): Promise<void> {
  const path = join(resolve(dataDir), BACKUP_SOCKET)
  const response = await new Promise<Readable & { statusCode?: number }>((done, fail) => {
    const req = request({ socketPath: path, path: '/backup', method: 'GET' }, done)
    req.once('error', (error: NodeJS.ErrnoException) =>
      fail(new Error(`cannot reach the running service's backup socket ${path} (${error.code ?? error.message})`)),
    )
    req.end()
  })
  if (response.statusCode !== 200) {
    response.resume()
    throw new Error(`the running service refused the backup (HTTP ${response.statusCode})`)
  }
  await pipeline(response, out)
}
