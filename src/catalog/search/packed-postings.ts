/**
 * For each key, the items holding it, ascending, packed in two typed arrays: the items of the key in slot `s` are
 * `items[offsets[s]] … items[offsets[s + 1] - 1]` (far smaller than an array per key, and nothing for the
 * collector to trace).
 */
export interface PackedPostings<K> {
  /** Key → its slot. */
  readonly slots: Map<K, number>
  readonly offsets: Uint32Array
  readonly items: Uint32Array
}

/**
 * The postings of items `from` … `to - 1`, each holding the keys `keysOf` visits (a key visited twice for one item
 * counts once). Two passes over the items: count, then place.
 */
export function packPostings<K>(
  from: number,
  to: number,
  keysOf: (item: number, visit: (key: K) => void) => void,
): PackedPostings<K> {
  const slots = new Map<K, number>()
  let counts = new Uint32Array(1024)
  // The last item counted or placed per slot, so an item is listed once per key.
  let last = new Uint32Array(1024)
  let item = 0
  const count = (key: K) => {
    let slot = slots.get(key)
    if (slot === undefined) {
      slot = slots.size
      slots.set(key, slot)
      if (slot === counts.length) {
        const [grownCounts, grownLast] = [new Uint32Array(slot * 2), new Uint32Array(slot * 2)]
        grownCounts.set(counts)
        grownLast.set(last)
        counts = grownCounts
        last = grownLast
      }
    } else if (last[slot] === item + 1) return
    last[slot] = item + 1
    counts[slot] = (counts[slot] as number) + 1
  }
  for (item = from; item < to; item++) keysOf(item, count)

  // In shared memory: the search index's threads read one copy (search-index/replica.ts).
  const offsets = new Uint32Array(new SharedArrayBuffer((slots.size + 1) * 4))
  for (let slot = 0; slot < slots.size; slot++) offsets[slot + 1] = (offsets[slot] as number) + (counts[slot] as number)
  const next = offsets.slice(0, slots.size)
  const items = new Uint32Array(new SharedArrayBuffer((offsets[slots.size] as number) * 4))
  last.fill(0)
  const place = (key: K) => {
    const slot = slots.get(key) as number
    if (last[slot] === item + 1) return
    last[slot] = item + 1
    items[next[slot] as number] = item
    next[slot] = (next[slot] as number) + 1
  }
  for (item = from; item < to; item++) keysOf(item, place)
  return { slots, offsets, items }
}
