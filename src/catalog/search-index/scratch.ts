/*
 * Working arrays of one answer, reused by the next. A search, facet count or listing over a million rows needs
 * arrays as long as a table or a dictionary (a flag per entry, a count per frame model, the matches themselves);
 * allocated anew for each request, they are megabytes of memory outside the JavaScript heap per request, and V8
 * answers that much outside memory with a full collection of the whole heap every second or so (measured at 1M
 * SKUs: a mark-compact of the index thread's 140 MB heap every 0.7 s, pauses up to 28 ms). An answer runs to its end
 * without yielding, so while it runs (`withScratch`) its working arrays are taken from buffers kept between
 * answers; they are all free again when it ends. Outside an answer (a load, a warm-up) they are plain new arrays.
 *
 * A scratch array is valid only inside the answer that took it: nothing it returns or keeps may hold one.
 */

interface Pool<T> {
  readonly create: (length: number) => T
  readonly buffers: T[]
  used: number
}

type Typed = Uint8Array<ArrayBuffer> | Uint32Array<ArrayBuffer>

const bytes: Pool<Uint8Array<ArrayBuffer>> = { create: (length) => new Uint8Array(length), buffers: [], used: 0 }
const words: Pool<Uint32Array<ArrayBuffer>> = { create: (length) => new Uint32Array(length), buffers: [], used: 0 }

/** Buffers longer than this are not kept between answers (a rare huge one is not held for ever). */
const KEPT_ELEMENTS = 1 << 23

let depth = 0

/** Runs one answer, its scratch arrays reused from earlier answers and free again when it ends. */
export function withScratch<T>(answer: () => T): T {
  depth++
  try {
    return answer()
  } finally {
    depth--
    if (depth === 0) {
      release(bytes)
      release(words)
    }
  }
}

function release<T extends Typed>(pool: Pool<T>): void {
  pool.used = 0
  for (let at = pool.buffers.length - 1; at >= 0; at--) {
    if ((pool.buffers[at] as T).length > KEPT_ELEMENTS) pool.buffers.splice(at, 1)
  }
}

function take<T extends Typed>(pool: Pool<T>, length: number): T {
  if (depth === 0) return pool.create(length)
  // The free buffers are those from `used` on; the first long enough is swapped into place.
  for (let at = pool.used; at < pool.buffers.length; at++) {
    const buffer = pool.buffers[at] as T
    if (buffer.length < length) continue
    pool.buffers[at] = pool.buffers[pool.used] as T
    pool.buffers[pool.used++] = buffer
    const view = buffer.subarray(0, length) as T
    view.fill(0)
    return view
  }
  // None: a new one, a little longer than asked, so later answers of a similar size fit in it.
  const buffer = pool.create(Math.max(1024, Math.ceil(length * 1.25)))
  pool.buffers.splice(pool.used++, 0, buffer)
  return buffer.subarray(0, length) as T
}

/** A zeroed byte array of `length`, valid until the answer ends. */
export const scratchBytes = (length: number): Uint8Array<ArrayBuffer> => take(bytes, length)

/** A zeroed array of `length` unsigned 32-bit integers, valid until the answer ends. */
export const scratchUint32 = (length: number): Uint32Array<ArrayBuffer> => take(words, length)
