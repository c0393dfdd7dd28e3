/*
 * What a value costs on the V8 heap, counted from its content so a cache can be bounded in bytes. The count is an
 * upper bound for the plain data caches hold (pages, totals, facets, suggestions: objects, arrays, strings,
 * numbers) on 64-bit V8 without pointer compression, Node's build:
 * - an object: 24 bytes of header (map, properties, elements) and 8 per property slot; property names are
 *   shared, so they cost nothing more;
 * - an array: 32 bytes of header and 16 of its element store, and 8 per element;
 * - a string: 16 bytes of header and one byte per character when every character fits in one byte, else two
 *   (strings shared between values, such as the index's column values, are counted for each value: an over-count);
 * - a number: 16 (a heap number; small integers cost nothing beyond their slot, counted anyway); booleans, null and
 *   undefined live in their slot.
 * The cache test checks this bound against the heap growth a full cache really causes.
 */

const OBJECT_HEADER = 24
const ARRAY_HEADER = 48
const SLOT = 8
const STRING_HEADER = 16
const HEAP_NUMBER = 16

/** One-byte strings are exactly those of U+0000..U+00FF (a loop: a third of a regular expression's time). */
function oneByte(text: string): boolean {
  for (let index = 0; index < text.length; index++) if (text.charCodeAt(index) > 0xff) return false
  return true
}

/** Bytes a string takes on the heap (rounded up to whole words). */
export function stringBytes(text: string): number {
  const characters = oneByte(text) ? text.length : text.length * 2
  return STRING_HEADER + Math.ceil(characters / SLOT) * SLOT
}

/** An upper bound of the heap bytes `value` holds (see above); shared sub-values are counted each time. */
export function heapBytes(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return stringBytes(value)
    case 'number':
    case 'bigint':
      return HEAP_NUMBER
    case 'object': {
      if (value === null) return 0
      if (Array.isArray(value)) {
        let bytes = ARRAY_HEADER + SLOT * value.length
        for (let index = 0; index < value.length; index++) {
          const item: unknown = value[index]
          bytes += typeof item === 'string' ? stringBytes(item) : heapBytes(item)
        }
        return bytes
      }
      if (value instanceof Date) return OBJECT_HEADER + HEAP_NUMBER
      let bytes = OBJECT_HEADER
      for (const key in value) {
        bytes += SLOT + heapBytes((value as Record<string, unknown>)[key])
      }
      return bytes
    }
    default:
      return 0
  }
}
