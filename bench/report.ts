import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { BenchReport, ScenarioResult, SideFigures } from './bench.js'

/*
 * Results: one JSON file per run under the results directory, and REPORT.md with the latest run of each
 * database as tables (the README quotes them).
 */

const number = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

function side(result: ScenarioResult, figures: SideFigures): string {
  if (result.type === 'once') return `${number(figures.p50, 2)} s (${number(figures.throughput)} rows/s)`
  const errors = figures.errors > 0 ? `, **${figures.errors} errors**` : ''
  return `${number(figures.throughput)} req/s, p50 ${number(figures.p50, 1)} ms, p99 ${number(figures.p99, 1)} ms${errors}`
}

/**
 * Processor time per request, service side → floor side: each side's total and its parts (the service's
 * process, the database server, the load generator or driver). Empty where it was not measured.
 */
function cpu(report: BenchReport, result: ScenarioResult): string {
  const service = result.service.cpuPerRequestUs
  const floor = result.floor.cpuPerRequestUs
  if (result.type !== 'load' || !service || !floor) return ''
  // Embedded: the database works inside the service (service side) and inside the driver's process (floor side).
  const embedded = report.driver === 'pglite'
  const parts = (entries: [string, number | null][]) => {
    const known = entries.filter((entry): entry is [string, number] => entry[1] !== null)
    const total = known.reduce((sum, [, value]) => sum + value, 0)
    return `${number(total)} (${known.map(([name, value]) => `${name} ${number(value)}`).join(', ')})`
  }
  return (
    `${parts([
      [embedded ? 'service with database' : 'service', service.service],
      ['database', service.database],
      ['autocannon', service.client],
    ])} → ` +
    parts([
      ['database', floor.database],
      [embedded ? 'driver with database' : 'driver', floor.client],
    ])
  )
}

/** The Markdown table of one run. */
export function reportTable(report: BenchReport): string {
  const lines = [
    `**${report.driver === 'postgres' ? report.server : `PGlite (${report.server})`}**, ${report.machine.cores} cores ` +
      `(${report.machine.cpu}), ${report.machine.memoryGiB} GiB, Node ${report.machine.node}; ` +
      `${report.date.slice(0, 10)}, commit ${report.commit}. Catalogue: ` +
      Object.entries(report.catalogue)
        .map(([table, count]) => `${table} ${number(count)}`)
        .join(', ') +
      `. ${report.connections} connections, ${report.seconds} s per side, median of ${report.runs} runs. ` +
      `Peak RSS of the service: ${report.peakRssMiB === null ? 'unknown' : `${report.peakRssMiB} MiB`}.`,
    '',
    '| Scenario | Service | Floor | Ratio | CPU µs per request: service side → floor side | Target | Met |',
    '|---|---|---|---|---|---|---|',
  ]
  for (const result of report.scenarios) {
    const ratio =
      result.type === 'load' ? `${number(result.ratio, 2)} × floor` : `${number(result.ratio, 2)} × floor time`
    lines.push(
      `| ${result.title} | ${side(result, result.service)} | ${side(result, result.floor)} | ${ratio} | ${cpu(report, result)} | ${result.targets} | ${result.met ? 'yes' : 'no'} |`,
    )
  }
  return lines.join('\n')
}

/** Writes the run's JSON and rewrites REPORT.md from the latest run of each database; returns the JSON's path. */
export function writeReport(report: BenchReport, resultsDir: string, reportFile: string): string {
  mkdirSync(resultsDir, { recursive: true })
  const file = join(resultsDir, `${report.date.replace(/[:.]/g, '-')}-${report.driver}-caches-${report.caches}.json`)
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  writeReportFile(resultsDir, reportFile)
  return file
}

/** Rewrites REPORT.md from the latest run of each database (and cache setting) under `resultsDir`. */
export function writeReportFile(resultsDir: string, reportFile: string): void {
  const latest = new Map<string, BenchReport>()
  for (const name of readdirSync(resultsDir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const saved = JSON.parse(readFileSync(join(resultsDir, name), 'utf8')) as BenchReport
    latest.set(`${saved.driver} ${saved.caches ?? 'on'}`, saved)
  }
  const order = ['postgres on', 'postgres off', 'pglite on', 'pglite off']
  const sections = [...latest.entries()]
    .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
    .map(([, saved]) => saved)
    .map(
      (saved) =>
        `## ${saved.driver === 'postgres' ? 'PostgreSQL server' : 'Embedded (PGlite)'}` +
        `${saved.caches === 'off' ? ', caches off (every request computed afresh)' : ''}\n\n${reportTable(saved)}`,
    )
  writeFileSync(
    reportFile,
    [
      '# Benchmark report',
      '',
      'Written by `npm run bench`: the latest run on each database. Each scenario runs the service and its floor',
      '(the same SQL straight through the driver, or the bare statement for a one-shot) side by side in one run;',
      'figures are medians of the runs. Load ratios are service ÷ floor throughput (higher is better); one-shot',
      'ratios are service ÷ floor time (lower is better). Raw figures of every run: `bench/results/`.',
      '',
      'Each load scenario cycles through a few dozen distinct requests, so after the warm-up the service answers',
      'many of them from its per-data-version caches (totals, pages, facets, suggestions), while the floor runs',
      'its SQL every time. A run with `--caches off` measures the service computing every request afresh.',
      '',
      'CPU µs per request: the processor time of each party per request, service side → floor side: the service’s',
      'process, the PostgreSQL server (when it runs on this machine; the embedded one works inside the service and',
      'inside the driver’s process), and the bench process (autocannon, or the driver). Where all of them share the',
      'cores, a side’s throughput is bounded by its total.',
      '',
      ...sections.flatMap((section) => [section, '']),
    ].join('\n'),
  )
}
