import { Readable } from 'node:stream'
import Papa from 'papaparse'
import { message, type Text } from '../domain/messages.js'

/*
 * Reading a CSV file as batches of records with their line numbers, through papaparse (several times faster than
 * the alternatives measured, which matters at a million rows). The bytes are decoded here, strictly as UTF-8, so
 * a character split between two chunks stays whole and a file in another encoding is reported, not garbled.
 * Parsing is paced by the consumer: the next chunk of the file is read only when few parsed batches wait.
 */

export interface CsvRecord {
  readonly fields: string[]
  /** 1-based line of the file where the record starts. */
  readonly line: number
  /** Its syntax is broken (reported among the reader's problems): its fields mean nothing. */
  readonly broken?: boolean
}

export interface CsvProblem {
  /** 1-based line, or 0 for the whole file. */
  readonly line: number
  readonly message: Text
}

export interface CsvReader {
  readonly delimiter: ',' | ';'
  /** Records in file order, in batches (one per chunk of the file); blank lines are skipped. */
  readonly batches: AsyncGenerator<CsvRecord[]>
  /** Hands over the problems of the file's syntax or encoding met since the last call (all, once `batches` ends). */
  takeProblems(): CsvProblem[]
  /** Bytes of the file read so far. */
  bytes(): number
  close(): Promise<void>
}

export type CsvSource = AsyncIterable<Buffer | string> | Iterable<Buffer | string>

const BOM = Buffer.from([0xef, 0xbb, 0xbf])
/** Parsed batches allowed to wait before reading pauses. */
const MAX_WAITING = 4

/** Opens a CSV source: reads ahead to the end of the first line to tell `;` from `,`, then parses on demand. */
export async function openCsv(source: CsvSource): Promise<CsvReader> {
  const iterator = toBuffers(source)[Symbol.asyncIterator]()
  const head: Buffer[] = []
  let headBytes = 0
  for (;;) {
    const next = await iterator.next()
    if (next.done) break
    head.push(next.value)
    headBytes += next.value.length
    if (next.value.includes(0x0a) || headBytes > 1_000_000) break
  }
  const delimiter = detectDelimiter(Buffer.concat(head))

  const problems: CsvProblem[] = []
  const waiting: CsvRecord[][] = []
  let bytes = 0
  let line = 1
  let finished = false
  let closed = false
  let wakeConsumer: (() => void) | undefined
  let wakeProducer: (() => void) | undefined
  const wake = () => {
    wakeConsumer?.()
    wakeConsumer = undefined
  }

  const decoder = new TextDecoder('utf-8', { fatal: true })
  const decode = (chunk: Buffer | undefined): string | undefined => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode()
    } catch {
      problems.push({ line: 0, message: message('import.fileNotUtf8') })
      return undefined
    }
  }

  let pumping = false
  const text = new Readable({
    read() {
      if (pumping) return
      pumping = true
      void (async () => {
        try {
          while (waiting.length >= MAX_WAITING && !closed)
            await new Promise<void>((resolve) => (wakeProducer = resolve))
          for (;;) {
            const chunk = head.shift() ?? (closed ? undefined : (await iterator.next()).value)
            if (chunk) bytes += chunk.length
            const decoded = decode(chunk)
            if (decoded === undefined || !chunk) {
              pumping = false
              if (decoded) this.push(decoded)
              this.push(null)
              return
            }
            if (decoded !== '') {
              pumping = false
              this.push(decoded)
              return
            }
          }
        } catch (error) {
          pumping = false
          this.destroy(error as Error)
        }
      })()
    },
  })

  Papa.parse<string[]>(text, {
    delimiter,
    skipEmptyLines: false,
    chunk(results) {
      const batch: CsvRecord[] = []
      const start = line
      const lines: number[] = []
      const broken = new Set(results.errors.map((error) => error.row))
      for (const [index, fields] of results.data.entries()) {
        lines.push(line)
        let span = 1
        for (const field of fields) {
          if (field.length > 0 && field.includes('\n')) span += field.split('\n').length - 1
        }
        const blank = fields.length === 1 && fields[0]?.trim() === ''
        if (!blank) batch.push(broken.has(index) ? { fields, line, broken: true } : { fields, line })
        line += span
      }
      for (const error of results.errors) {
        const at = typeof error.row === 'number' ? (lines[error.row] ?? start) : start
        problems.push({
          line: at,
          message: message('import.malformedCsv', { reason: error.message.replace(/\.$/, '').toLowerCase() }),
        })
      }
      if (batch.length > 0) waiting.push(batch)
      wake()
    },
    complete() {
      finished = true
      wake()
    },
    error(error) {
      problems.push({ line, message: message('import.unreadable', { reason: error.message }) })
      finished = true
      wake()
    },
  })

  return {
    delimiter,
    takeProblems: () => problems.splice(0),
    bytes: () => bytes,
    batches: (async function* () {
      for (;;) {
        const batch = waiting.shift()
        if (batch) {
          wakeProducer?.()
          wakeProducer = undefined
          yield batch
        } else if (finished || closed) {
          return
        } else {
          await new Promise<void>((resolve) => (wakeConsumer = resolve))
        }
      }
    })(),
    async close() {
      closed = true
      wakeProducer?.()
      wake()
      text.destroy()
      await iterator.return?.()
    },
  }
}

function toBuffers(source: CsvSource): AsyncIterable<Buffer> {
  return (async function* () {
    for await (const chunk of source as AsyncIterable<Buffer | string>) {
      yield typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk
    }
  })()
}

/** `;` when the first line (outside quotes, after a BOM) has more of them than `,`. */
function detectDelimiter(head: Buffer): ',' | ';' {
  const start = head.subarray(0, 3).equals(BOM) ? 3 : 0
  const end = head.indexOf(0x0a)
  const firstLine = head.subarray(start, end === -1 ? head.length : end).toString('utf8')
  let commas = 0
  let semicolons = 0
  let quoted = false
  for (const character of firstLine) {
    if (character === '"') quoted = !quoted
    else if (!quoted && character === ',') commas++
    else if (!quoted && character === ';') semicolons++
  }
  return semicolons > commas ? ';' : ','
}
