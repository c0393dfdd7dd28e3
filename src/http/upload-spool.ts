import { createWriteStream } from 'node:fs'
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'

/*
 * Uploads are spooled to a temporary directory while they arrive, so the import reads them at disk speed and a
 * slow client never holds the database. A spool belongs to one request: it is removed when that request's response
 * closes, however it ends (answered, refused, timed out, or the client gone mid-upload or mid-import). A process
 * that dies cannot do that, so each spool is named after its process (`optics-upload-<pid>-…`) and a starting
 * service removes those of processes that no longer run.
 */

const PREFIX = 'optics-upload-'
/** Spools named before they carried their process id: stale once nothing has written them for this long. */
const UNOWNED_STALE_MS = 60 * 60_000

/** An uploaded body on disk. */
export class SpooledUpload {
  constructor(
    readonly path: string,
    readonly bytes: number,
  ) {}
}

/**
 * One request's spool: created by {@link UploadSpool.write}, removed by {@link UploadSpool.remove}, which the
 * owner calls when the request's response closes (also while the body is still being written: the write then
 * fails and leaves nothing behind).
 */
export class UploadSpool {
  #directory: string | undefined
  #removed = false

  constructor(private readonly parent: string = tmpdir()) {}

  /** Streams `body` into the spool; `check` sees the running byte count and may throw to refuse the body. */
  async write(body: NodeJS.ReadableStream, check: (bytes: number) => void): Promise<SpooledUpload> {
    if (this.#removed) throw new Error('the request ended before its upload was spooled')
    const directory = await mkdtemp(join(this.parent, `${PREFIX}${process.pid}-`))
    this.#directory = directory
    const path = join(directory, 'upload.csv')
    let bytes = 0
    try {
      if (this.#removed) throw new Error('the request ended before its upload was spooled')
      await pipeline(
        body,
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            bytes += chunk.length
            try {
              check(bytes)
              done(null, chunk)
            } catch (error) {
              done(error as Error)
            }
          },
        }),
        createWriteStream(path),
      )
      if (this.#removed) throw new Error('the request ended while its upload was spooled')
    } catch (error) {
      await rm(directory, { recursive: true, force: true })
      throw error
    }
    return new SpooledUpload(path, bytes)
  }

  /** Removes the spool (now or, while it is being written, when the write stops); later writes are refused. */
  async remove(): Promise<void> {
    this.#removed = true
    if (this.#directory) await rm(this.#directory, { recursive: true, force: true })
  }
}

/**
 * Removes the spools left by processes that no longer run (and this one's, which at start-up can only be a
 * predecessor's under a reused process id); returns how many. Spools of a live process are left alone, so instances
 * sharing a temporary directory never remove each other's uploads.
 */
export async function removeStaleUploads(parent: string = tmpdir(), now = Date.now()): Promise<number> {
  let removed = 0
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    if (!name.startsWith(PREFIX)) continue
    const path = join(parent, name)
    const owner = /^(\d+)-/.exec(name.slice(PREFIX.length))?.[1]
    const stale =
      owner === undefined
        ? now - (await stat(path).catch(() => ({ mtimeMs: now }))).mtimeMs > UNOWNED_STALE_MS
        : Number(owner) === process.pid || !isRunning(Number(owner))
    if (!stale) continue
    await rm(path, { recursive: true, force: true })
    removed++
  }
  return removed
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: it runs, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}
