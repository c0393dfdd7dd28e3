import { parentPort, workerData } from 'node:worker_threads'
import { type XlsxBatch, xlsxBatches } from './xlsx.js'

/*
 * Reads an uploaded workbook on a thread of its own (xlsx.ts, `openXlsx`): unzips it and reads its first sheet,
 * one batch of records per `next` asked by the service's thread, so no more than a batch waits in a message.
 */

const port = parentPort
if (!port) throw new Error('xlsx-worker.ts runs as a worker thread')
const workbook: Uint8Array = workerData

let batches: Generator<CsvRecordBatch> | undefined
type CsvRecordBatch = NonNullable<XlsxBatch['records']>

port.on('message', () => {
  let answer: XlsxBatch
  try {
    batches ??= xlsxBatches(workbook)
    const next = batches.next()
    answer = next.done ? {} : { records: next.value }
  } catch {
    answer = { notXlsx: true }
  }
  port.postMessage(answer)
})
