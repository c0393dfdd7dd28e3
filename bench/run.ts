import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { runBench } from './bench.js'
import { reportTable, serviceOnlyTable, writeReport, writeReportFile } from './report.js'

/*
 * npm run bench -- [--scale N] [--duration S] [--connections C] [--runs R] [--only a,d-listing,cold] [--reuse]
 *                  [--caches on|off] [--index on|off] [--cold-requests N] [--cold-runs R] [--other-scale N]
 *                  [--ready-timeout S] [--floor on|off]
 * Against BENCH_DATABASE_URL when set, else the embedded database in bench/.data. Exits with 1 when any request
 * failed (a non-2xx answer, an SQL error), after writing the report.
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
    index: { type: 'string', default: 'on' },
    floor: { type: 'string', default: 'on' },
    'cold-requests': { type: 'string', default: '20000' },
    'cold-runs': { type: 'string', default: '1' },
    'other-scale': { type: 'string' },
    'ready-timeout': { type: 'string', default: '300' },
    'data-dir': { type: 'string', default: join(here, '.data') },
    help: { type: 'boolean', default: false },
  },
})

if (values.help) {
  process.stdout.write(
    'npm run bench -- [--scale N] [--duration S] [--connections C] [--runs R] [--only ids] [--reuse]\n' +
      '                 [--caches on|off] [--index on|off] [--cold-requests N] [--cold-runs R]\n' +
      '                 [--other-scale N] [--ready-timeout S] [--data-dir D] [--floor on|off]\n' +
      '  BENCH_DATABASE_URL: the PostgreSQL database to fill and measure (its catalogue is replaced);\n' +
      '  unset: the embedded database in --data-dir.\n' +
      '  --only: scenario ids or their prefixes (a, d-listing, cold: the cold mix at 1 and C connections).\n' +
      "  --caches: the service's result caches (RESULT_CACHE); --index: its search index (SEARCH_INDEX).\n" +
      '  --cold-requests: requests per run of the cold mix, each sent once (0 leaves it out);\n' +
      '  --cold-runs: its runs (default 1).\n' +
      '  --other-scale: SKUs of each of the five other kinds (default a tenth of --scale, at least 1,000).\n' +
      '  --ready-timeout: seconds the service may take to become ready (its index loads first).\n' +
      '  --floor off: measure the service alone (for profiling and tuning; no ratios: the run is kept under\n' +
      '    results/service-only/ and REPORT.md shows the latest such runs apart).\n',
  )
  process.exit(0)
}

for (const name of ['caches', 'index', 'floor'] as const) {
  if (values[name] !== 'on' && values[name] !== 'off') {
    process.stderr.write(`bench: --${name} must be on or off (got ${values[name]})\n`)
    process.exit(2)
  }
}

function positive(name: string, raw: string | undefined, fallback: number, { zero = false } = {}): number {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < (zero ? 0 : 1)) {
    process.stderr.write(`bench: --${name} must be a ${zero ? 'non-negative' : 'positive'} integer (got ${raw})\n`)
    process.exit(2)
  }
  return value
}

const report = await runBench({
  url,
  dataDir: values['data-dir'],
  scale: positive('scale', values.scale, url ? 1_000_000 : 100_000),
  ...(values['other-scale'] !== undefined ? { otherScale: positive('other-scale', values['other-scale'], 0) } : {}),
  seconds: positive('duration', values.duration, 10),
  connections: positive('connections', values.connections, url ? 16 : 4),
  runs: positive('runs', values.runs, 3),
  only: values.only
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean),
  reuse: values.reuse,
  caches: values.caches as 'on' | 'off',
  searchIndex: values.index as 'on' | 'off',
  floor: values.floor as 'on' | 'off',
  coldRequests: positive('cold-requests', values['cold-requests'], 20_000, { zero: true }),
  coldRuns: positive('cold-runs', values['cold-runs'], 1),
  readySeconds: positive('ready-timeout', values['ready-timeout'], 300),
  log: (line) => process.stdout.write(`${line}\n`),
})
const results = join(here, 'results')
const file =
  values.floor === 'off'
    ? writeReport(report, join(results, 'service-only'))
    : writeReport(report, results, join(here, 'REPORT.md'))
if (values.floor === 'off') writeReportFile(results, join(here, 'REPORT.md'))
process.stdout.write(
  `\n${values.floor === 'off' ? serviceOnlyTable(report) : reportTable(report)}\n\nresults: ${file}\n`,
)

const failed = report.scenarios.filter((scenario) => scenario.service.errors > 0 || scenario.floor.errors > 0)
if (failed.length > 0) {
  process.stderr.write(
    `\nbench: requests FAILED in ${failed.map((s) => `${s.id} (service ${s.service.errors}, floor ${s.floor.errors})`).join(', ')}` +
      '; the report lists them. Exit code 1.\n',
  )
  process.exitCode = 1
}
