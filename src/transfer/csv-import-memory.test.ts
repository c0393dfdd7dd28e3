import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import { openServerSchema } from '../../test/harness.js'

/*
 * An upload's memory does not grow with its file: a generated glass price list of 30 MB (700,000 entries, the last
 * repeating the first's keys) is checked in a process of its own, on each database, and that process's resident
 * memory rises by less than the file's size while every key is compared and the duplicate is reported at its
 * line, beyond what an import of 200,000 rows before it left (fixed costs: 30–40 MiB for a file of 4 MiB as for one of
 * 29 MiB). (When every key was held in a map, and the embedded database's COPY input was kept as strings, the same
 * file grew the process by 5–10 times its size.)
 */

const run = promisify(execFile)
const fixture = new URL('../../test/fixtures/import-memory.ts', import.meta.url).pathname
const rows = 700_000
const serverUrl = process.env.TEST_DATABASE_URL?.trim() || undefined

interface Measured {
  readonly bytes: number
  readonly problems: unknown[]
  readonly problemCount: number
  readonly growthMiB: number
}

async function measure(env: Record<string, string>): Promise<Measured> {
  // The service's heap growth, and a young generation of a few MiB: what V8 may leave uncollected for a while (up
  // to 48 MiB of young garbage by default, more on a busy machine) is not what the import holds.
  const flags = ['--expose-gc', '--heap-growing-percent=50', '--max-semi-space-size=1']
  const { stdout } = await run(process.execPath, [...flags, '--import', 'tsx', fixture], {
    env: { PATH: process.env.PATH ?? '', ROWS: String(rows), ...env },
    timeout: 300_000,
  })
  return JSON.parse(stdout) as Measured
}

function assertBounded(measured: Measured): void {
  assert.deepEqual(measured.problems, [
    { line: rows + 2, column: null, message: 'duplicates the keys and bounds of line 2' },
  ])
  assert.equal(measured.problemCount, 1)
  const sizeMiB = measured.bytes / 1024 / 1024
  assert.ok(sizeMiB > 25, `the file is ${sizeMiB.toFixed(1)} MiB`)
  assert.ok(
    measured.growthMiB < sizeMiB,
    `a ${sizeMiB.toFixed(1)} MiB file grew the process by ${measured.growthMiB.toFixed(1)} MiB`,
  )
}

test('a large upload checked on the embedded database grows the process by less than its size', {
  skip: process.platform === 'linux' ? false : 'reads /proc',
  timeout: 600_000,
}, async () => {
  assertBounded(await measure({}))
})

test('a large upload checked on the server grows the process by less than its size', {
  skip: process.platform !== 'linux' ? 'reads /proc' : serverUrl ? false : 'TEST_DATABASE_URL is not set',
  timeout: 600_000,
}, async () => {
  const { schema, cleanup } = await openServerSchema(serverUrl!)
  try {
    assertBounded(await measure({ DATABASE_URL: serverUrl!, SCHEMA: schema }))
  } finally {
    await cleanup()
  }
})
