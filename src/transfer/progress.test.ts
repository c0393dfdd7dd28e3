import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createProgress } from './progress.js'

/* What a long command shows of its progress, on a terminal and off one (a log). */

function sink(isTTY: boolean) {
  const writes: string[] = []
  const stream = { isTTY, write: (text: string) => writes.push(text) }
  return { stream, writes }
}

test('off a terminal a quick import prints one line: where it ended', () => {
  const { stream, writes } = sink(false)
  const progress = createProgress({ label: 'import glasses prices', total: 1400, stream })
  for (let row = 1; row <= 14; row++) progress.update(row * 100, row)
  progress.stop()
  progress.stop()
  assert.equal(writes.length, 1)
  assert.match(writes[0] ?? '', /^import glasses prices: 100% \(14 rows, \d+ rows\/s\)\n$/)
})

test('off a terminal a long run prints at 25, 50 and 75% and its end: four lines for a million rows', () => {
  const { stream, writes } = sink(false)
  let clock = 0
  const progress = createProgress({ label: 'seed glasses', total: 1_000_000, stream, now: () => clock })
  for (let row = 10_000; row <= 1_000_000; row += 10_000) {
    clock += 1000
    progress.update(row, row)
  }
  progress.stop()
  assert.deepEqual(
    writes.map((line) => line.replace(/, \d+ rows\/s\)\n$/, '')),
    [
      'seed glasses: 25% (250000 rows',
      'seed glasses: 50% (500000 rows',
      'seed glasses: 75% (750000 rows',
      'seed glasses: 100% (1000000 rows',
    ],
  )
})

test('a run that stops short ends on the percentage it reached', () => {
  const { stream, writes } = sink(false)
  const progress = createProgress({ label: 'import', total: 100, stream })
  progress.update(40, 4)
  progress.stop()
  assert.deepEqual(writes, [writes[0]])
  assert.match(writes[0] ?? '', /^import: 40% \(4 rows/)
})

test('on a terminal a bar is redrawn in place at most five times a second, and its line ended once', () => {
  const { stream, writes } = sink(true)
  let clock = 0
  const progress = createProgress({ label: 'seed glasses', total: 1000, stream, now: () => clock })
  for (let row = 1; row <= 1000; row++) {
    clock += 1
    progress.update(row, row)
  }
  progress.stop()
  progress.stop()
  // One draw at the start, one per 200 ms of the second the run took, the last at the end.
  assert.equal(writes.length, 1 + 5 + 1 + 1)
  assert.ok(writes.slice(0, -1).every((text) => text.startsWith('\r\x1b[2Kseed glasses [')))
  assert.match(writes.at(-2) ?? '', /\[█{30}\] 100% \| 1000 rows \| 1000 rows\/s \| 0:01$/)
  assert.equal(writes.at(-1), '\n')
})
