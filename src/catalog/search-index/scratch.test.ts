import assert from 'node:assert/strict'
import { test } from 'node:test'
import { scratchBytes, scratchUint32, withScratch } from './scratch.js'

test('scratch arrays of one answer are zeroed and never overlap', () => {
  withScratch(() => {
    const first = scratchUint32(1000)
    first.fill(7)
    const second = scratchUint32(500)
    assert.ok(
      second.every((value) => value === 0),
      'a second array starts zeroed',
    )
    second.fill(9)
    assert.ok(
      first.every((value) => value === 7),
      'writing the second leaves the first as it was',
    )
    const flags = scratchBytes(2000)
    assert.equal(flags.length, 2000)
    assert.ok(flags.every((value) => value === 0))
  })
})

test('the next answer reuses the memory of the last, zeroed again', () => {
  let before: ArrayBufferLike | undefined
  withScratch(() => {
    const counts = scratchUint32(4096)
    counts.fill(3)
    before = counts.buffer
  })
  withScratch(() => {
    const counts = scratchUint32(4000)
    assert.equal(counts.buffer, before, 'the same buffer serves the next answer')
    assert.ok(
      counts.every((value) => value === 0),
      'and it comes zeroed',
    )
  })
})

test('outside an answer a scratch array is a new array of its own', () => {
  const a = scratchUint32(16)
  const b = scratchUint32(16)
  assert.notEqual(a.buffer, b.buffer)
  a.fill(1)
  assert.ok(b.every((value) => value === 0))
})
