import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { runBench } from './bench.js'
import { reportTable, writeReport } from './report.js'

/*
 * npm run bench -- [--scale N] [--duration S] [--connections C] [--runs R] [--only a,d-listing] [--reuse]
 *                  [--caches on|off]
 * Against BENCH_DATABASE_URL when set, else the embedded database in bench/.data.
 */

const here = fileURLToPath(new URL('.', import.meta.url))
const url = process.env.BENCH_DATABASE_URL || undefined
const { values } = parseArgs({
  options: {
    scale: { type: 'string' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string' },
    runs: { type: 'string', default: '3' },
    only: { type: 'string', default: '' },
    reuse: { type: 'boolean', default: false },
    caches: { type: 'string', default: 'on' },
    'data-dir': { type: 'string', default: join(here, '.data') },
    help: { type: 'boolean', default: false },
  },
})

if (values.help) {
  process.stdout.write(
    'npm run bench -- [--scale N] [--duration S] [--connections C] [--runs R] [--only ids] [--reuse]\n' +
      '                 [--caches on|off] [--data-dir D]\n' +
      '  BENCH_DATABASE_URL: the PostgreSQL database to fill and measure (its glasses and lenses are replaced);\n' +
      '  unset: the embedded database in --data-dir.\n',
  )
  process.exit(0)
}

if (values.caches !== 'on' && values.caches !== 'off') {
  process.stderr.write(`bench: --caches must be on or off (got ${values.caches})\n`)
  process.exit(2)
}

function positive(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1) {
    process.stderr.write(`bench: --${name} must be a positive integer (got ${raw})\n`)
    process.exit(2)
  }
  return value
}

const report = await runBench({
  url,
  dataDir: values['data-dir'],
  scale: positive('scale', values.scale, url ? 1_000_000 : 100_000),
  seconds: positive('duration', values.duration, 10),
  connections: positive('connections', values.connections, url ? 16 : 4),
  runs: positive('runs', values.runs, 3),
  only: values.only
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean),
  reuse: values.reuse,
  caches: values.caches,
  log: (line) => process.stdout.write(`${line}\n`),
})
const file = writeReport(report, join(here, 'results'), join(here, 'REPORT.md'))
process.stdout.write(`\n${reportTable(report)}\n\nresults: ${file}\n`)
