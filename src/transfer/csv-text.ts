import { stringify } from 'csv-stringify/sync'

/*
 * CSV text for `COPY … FROM STDIN WITH (FORMAT csv)`: no header, NULL as an unquoted empty field. Rows are
 * stringified in batches, so a COPY of millions of rows streams in chunks of a few hundred kilobytes.
 */

export type CopyValue = string | number | null | undefined

const BATCH_ROWS = 2000

/** CSV text of rows in COPY's CSV format (no header; null and undefined become NULL). */
export function copyCsvText(rows: readonly (readonly CopyValue[])[]): string {
  return stringify(rows as CopyValue[][], { eof: true, cast: { number: (value) => String(value) } })
}

/** Batches rows from any (async) iterable into CSV chunks for `RawClient.copyCsv`. */
export async function* copyCsvChunks(
  rows: Iterable<readonly CopyValue[]> | AsyncIterable<readonly CopyValue[]>,
): AsyncGenerator<string> {
  let batch: (readonly CopyValue[])[] = []
  for await (const row of rows) {
    batch.push(row)
    if (batch.length >= BATCH_ROWS) {
      yield copyCsvText(batch)
      batch = []
    }
  }
  if (batch.length > 0) yield copyCsvText(batch)
}
