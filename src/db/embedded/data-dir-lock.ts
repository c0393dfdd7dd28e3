import {
  closeSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs'
import { hostname } from 'node:os'
import { join, resolve } from 'node:path'

/*
 * One owner per embedded data directory (issue 16, point 1). PGlite keeps no lock of its own: two processes on one
 * DATA_DIR corrupt it. The service and every CLI command on the embedded database take this lock first: a file in
 * the directory naming its holder (pid, the process's start time, host, what it is), created atomically (a hard
 * link of a complete file: nobody ever reads a half-written lock). A second process is refused at once. A lock
 * left by a process that has ended (killed, crashed) is taken over: its pid is not running, or runs another
 * process (Linux: a different start time in /proc/<pid>/stat). The file is removed when the holder exits.
 */

export const LOCK_FILE = '.optics-catalog.lock'

/** What a lock file says about its holder. */
export interface LockHolder {
  readonly pid: number
  /** Linux: the process's start time in clock ticks after boot (/proc/<pid>/stat, field 22); null elsewhere. */
  readonly startTime: string | null
  readonly host: string
  /** `the service`, `the CLI (import)`. */
  readonly role: string
  /** ISO time the lock was taken. */
  readonly since: string
}

/** The data directory is held by another process: one line naming the holder and what to do instead. */
export class DataDirBusyError extends Error {
  override name = 'DataDirBusyError'
  constructor(
    message: string,
    readonly holder: LockHolder | undefined,
  ) {
    super(message)
  }
}

export interface DataDirLock {
  readonly path: string
  /** Removes the lock file (if it is still this process's). Idempotent. */
  release(): void
}

/** Lock files this process holds, by path: removed on exit whatever the way out. */
const held = new Map<string, string>()
let exitHookInstalled = false

function installExitHook(): void {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.on('exit', () => {
    for (const [path, content] of held) removeIfOurs(path, content)
  })
}

/** Takes the lock on `dataDir` (created if missing) for `role`, or throws {@link DataDirBusyError}. */
export function lockDataDir(dataDir: string, role: string): DataDirLock {
  const directory = resolve(dataDir)
  mkdirSync(directory, { recursive: true })
  const path = join(directory, LOCK_FILE)
  if (held.has(path)) throw busy(directory, readHolder(path), 'this process')

  const me: LockHolder = {
    pid: process.pid,
    startTime: processStartTime(process.pid),
    host: hostname(),
    role,
    since: new Date().toISOString(),
  }
  const content = `${JSON.stringify(me)}\n`
  const draft = `${path}.${process.pid}.${Date.now()}.tmp`
  writeComplete(draft, content)
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(draft, path)
        break
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      }
      const text = readText(path)
      if (text === undefined) continue // removed meanwhile: try again
      const holder = parseHolder(text)
      if (holder && isRunning(holder)) throw busy(directory, holder)
      if (!holder && Date.now() - mtime(path) < 5_000 && attempt < 50) {
        // Not a lock this code writes (or an unreadable one), and fresh: wait a moment before judging it.
        sleep(100)
        continue
      }
      if (attempt >= 50) throw busy(directory, holder)
      takeOver(path, text)
    }
  } finally {
    try {
      unlinkSync(draft)
    } catch {
      // already gone
    }
  }
  held.set(path, content)
  installExitHook()
  return {
    path,
    release() {
      if (held.get(path) !== content) return
      held.delete(path)
      removeIfOurs(path, content)
    },
  }
}

function busy(directory: string, holder: LockHolder | undefined, who?: string): DataDirBusyError {
  const what =
    who ??
    (holder
      ? `${holder.role} (pid ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ''}, since ${holder.since})`
      : 'another process')
  const instead =
    holder && /service/.test(holder.role)
      ? 'stop it first, or import through it over HTTP (POST /api/v2/glasses/prices/import)'
      : 'wait for it to finish or stop it'
  const otherHost =
    holder && holder.host !== hostname() ? `; if it no longer runs there, remove ${join(directory, LOCK_FILE)}` : ''
  return new DataDirBusyError(`DATA_DIR: ${directory} is in use by ${what}; ${instead}${otherHost}`, holder)
}

/**
 * Removes a stale lock, once: the removal is guarded by a short-lived second file, and the lock is removed only if
 * it still reads as it did when judged stale (a process taking it over meanwhile keeps its fresh lock).
 */
function takeOver(path: string, staleText: string): void {
  const guard = `${path}.takeover`
  let fd: number
  try {
    fd = openSync(guard, 'wx')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    // Another process is taking over; a guard left by a process killed mid-way is removed after a while.
    if (Date.now() - mtime(guard) > 10_000) removeQuietly(guard)
    else sleep(50)
    return
  }
  try {
    if (readText(path) === staleText) unlinkSync(path)
  } finally {
    closeSync(fd)
    removeQuietly(guard)
  }
}

/** Is the lock's holder a process that still runs? */
function isRunning(holder: LockHolder): boolean {
  // On another machine (a shared volume) it cannot be checked: assume it runs.
  if (holder.host !== hostname()) return true
  // This process does not hold it (see `held`), so it was written by an earlier process with the same pid (a
  // container's pid 1 after a restart).
  if (holder.pid === process.pid) return false
  try {
    process.kill(holder.pid, 0)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false
    // EPERM: it runs, under another user.
  }
  const now = processStartTime(holder.pid)
  // The pid runs another program than the one that wrote the lock.
  if (holder.startTime !== null && now !== null && now !== holder.startTime) return false
  return true
}

/** Linux: a process's start time (ticks after boot), which tells a reused pid apart; null where /proc is absent. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) is in parentheses and may hold spaces: count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return fields[19] ?? null
  } catch {
    return null
  }
}

function parseHolder(text: string): LockHolder | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockHolder>
    if (typeof value.pid !== 'number' || !Number.isInteger(value.pid) || value.pid <= 0) return undefined
    return {
      pid: value.pid,
      startTime: typeof value.startTime === 'string' ? value.startTime : null,
      host: typeof value.host === 'string' ? value.host : hostname(),
      role: typeof value.role === 'string' ? value.role : 'another process',
      since: typeof value.since === 'string' ? value.since : 'an unknown time',
    }
  } catch {
    return undefined
  }
}

function readHolder(path: string): LockHolder | undefined {
  const text = readText(path)
  return text === undefined ? undefined : parseHolder(text)
}

function writeComplete(path: string, content: string): void {
  const fd = openSync(path, 'wx')
  try {
    writeSync(fd, content)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

function removeIfOurs(path: string, content: string): void {
  try {
    if (readFileSync(path, 'utf8') === content) unlinkSync(path)
  } catch {
    // gone already, or unreadable: nothing to do on the way out
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch {
    // already gone
  }
}

function mtime(path: string): number {
  try {
    return statSync(path).mtimeMs
  } catch {
    return 0
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
}
