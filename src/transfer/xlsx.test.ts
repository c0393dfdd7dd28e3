import assert from 'node:assert/strict'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { PassThrough } from 'node:stream'
import { test } from 'node:test'
import { openXlsx, writeXlsxSheet, type XlsxCell } from './xlsx.js'

/*
 * Reading an uploaded workbook: the records come back as written, in batches, and the unzipping and reading of a
 * large sheet (seconds of work) never hold the service's thread, which keeps turning meanwhile.
 */

const ROWS = 150_000

async function workbook(rows: number): Promise<Buffer> {
  const out = new PassThrough()
  const parts: Buffer[] = []
  out.on('data', (chunk: Buffer) => parts.push(chunk))
  async function* batches(): AsyncGenerator<XlsxCell[][]> {
    for (let start = 0; start < rows; start += 10_000) {
      const batch: XlsxCell[][] = []
      for (let row = start; row < Math.min(rows, start + 10_000); row++) {
        batch.push([{ text: `Maker ${row % 97}` }, { text: `Model ${row}` }, { number: `${1000 + (row % 500)}.50` }])
      }
      yield batch
    }
  }
  await writeXlsxSheet(
    batches(),
    [
      { header: 'manufacturer', kind: 'text', width: 20 },
      { header: 'model', kind: 'text', width: 20 },
      { header: 'price', kind: 'money', width: 12 },
    ],
    out,
  )
  return Buffer.concat(parts)
}

test('a large workbook is read on its own thread: every row comes back, and the service thread is never held', async () => {
  const bytes = await workbook(ROWS)
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const reader = await openXlsx([bytes])
  let rows = 0
  let last: readonly string[] = []
  let header: readonly string[] = []
  for await (const batch of reader.batches) {
    for (const record of batch) {
      if (header.length === 0) header = record.fields
      else rows++
      last = record.fields
    }
  }
  delay.disable()
  await reader.close()
  assert.deepEqual(header, ['manufacturer', 'model', 'price'])
  assert.equal(rows, ROWS)
  assert.deepEqual(last, [`Maker ${(ROWS - 1) % 97}`, `Model ${ROWS - 1}`, `${1000 + ((ROWS - 1) % 500)}.5`])
  assert.deepEqual(reader.takeProblems(), [])
  assert.equal(reader.bytes(), bytes.length)
  // Unzipping and reading these rows take a second or more in one piece; here each batch crosses on its own.
  assert.ok(delay.max / 1e6 < 200, `the service thread was held ${Math.round(delay.max / 1e6)} ms`)
})

test('bytes that are no workbook are one problem of the whole file, and no records', async () => {
  const reader = await openXlsx([Buffer.from('PK\u0003\u0004 not really a zip')])
  const batches = []
  for await (const batch of reader.batches) batches.push(batch)
  assert.deepEqual(batches, [])
  const problems = reader.takeProblems()
  assert.equal(problems.length, 1)
  assert.equal(problems[0]?.line, 0)
  await reader.close()
})
