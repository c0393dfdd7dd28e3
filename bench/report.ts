import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { BenchReport, ScenarioResult, SideFigures } from './bench.js'
import { COLD_CATEGORY_TITLES, COLD_MIX_SHARES, type ColdCategory } from './cold-mix.js'

/*
 * Results: one JSON file per run under the results directory, and REPORT.md with the latest run of each
 * database as tables (docs/benchmarks.md quotes them).
 */

const number = (value: number, digits = 0) =>
  value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

function side(result: ScenarioResult, figures: SideFigures): string {
  if (result.type === 'once') return `${number(figures.p50, 2)} s (${number(figures.throughput)} rows/s)`
  const statuses = Object.entries(figures.statuses ?? {})
    .map(([status, count]) => `${status} ×${number(count)}`)
    .join(', ')
  const errors = figures.errors > 0 ? `, **${number(figures.errors)} failed${statuses ? ` (${statuses})` : ''}**` : ''
  return `${number(figures.throughput)} req/s, p50 ${number(figures.p50, 1)} ms, p99 ${number(figures.p99, 1)} ms${errors}`
}

/** The failed requests of a run, a few per scenario and side, under its table; none: nothing. */
function failures(report: BenchReport): string[] {
  const lines: string[] = []
  for (const result of report.scenarios) {
    for (const [name, figures] of [
      ['service', result.service],
      ['floor', result.floor],
    ] as const) {
      if (figures.errors === 0) continue
      lines.push(`- ${result.title}, ${name}: ${number(figures.errors)} failed requests, for example:`)
      for (const failure of figures.failures ?? []) lines.push(`  - \`${failure.replace(/`/g, "'")}\``)
    }
  }
  return lines.length > 0
    ? ['', '**Failed requests** (every request must succeed; these figures are not valid):', '', ...lines]
    : []
}

/**
 * The cold mix's latencies per kind of request, a column per concurrency: service p50 / p99 → floor p50 / p99.
 * Says which kinds of request a ratio is made of (those the search index answers, those it leaves to SQL).
 */
function coldCategories(report: BenchReport): string[] {
  const cold = report.scenarios.filter((r) => r.service.byCategory && r.floor.byCategory)
  if (cold.length === 0) return []
  const categories = (Object.keys(COLD_MIX_SHARES) as ColdCategory[]).filter((c) =>
    cold.some((r) => r.service.byCategory?.[c] || r.floor.byCategory?.[c]),
  )
  const latency = (figures: SideFigures, category: string) => {
    const found = figures.byCategory?.[category]
    return found ? `${number(found.p50, 1)} / ${number(found.p99, 1)}` : '—'
  }
  const connections = (r: ScenarioResult) => `${r.connections} connection${r.connections === 1 ? '' : 's'}`
  return [
    '',
    `**Cold mix by kind of request**: p50 / p99 in ms, service → floor (${cold.map(connections).join(' and ')}).`,
    '',
    `| Kind of request | Requests per run | ${cold.map(connections).join(' | ')} |`,
    `|---|---|${cold.map(() => '---|').join('')}`,
    ...categories.map((category) => {
      const requests =
        cold[0]?.floor.byCategory?.[category]?.requests ?? cold[0]?.service.byCategory?.[category]?.requests
      const cells = cold.map((r) => `${latency(r.service, category)} → ${latency(r.floor, category)}`)
      return `| ${COLD_CATEGORY_TITLES[category]} | ${requests === undefined ? '—' : number(requests)} | ${cells.join(' | ')} |`
    }),
  ]
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
      `. Result caches ${report.caches}, search index ${report.searchIndex ?? 'absent'}. ` +
      [
        ...(report.scenarios.some((s) => s.requestsPerRun === undefined)
          ? [`${report.connections} connections, ${report.seconds} s per side, median of ${report.runs} runs`]
          : []),
        ...(report.coldRequests && report.scenarios.some((s) => s.requestsPerRun !== undefined)
          ? [
              `The cold mix: ${number(report.coldRequests)} distinct requests per run and side, each sent once, ` +
                `at the connections named, median of ${report.coldRuns ?? report.runs} ` +
                `run${(report.coldRuns ?? report.runs) === 1 ? '' : 's'}`,
            ]
          : []),
      ].join('. ') +
      `. Peak RSS of the service: ${report.peakRssMiB === null ? 'unknown' : `${report.peakRssMiB} MiB`}` +
      (report.readySeconds
        ? `; ready${report.searchIndex === 'on' ? ' (search index loaded)' : ''} in ${number(report.readySeconds, 1)} s.`
        : '.'),
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
  for (const result of report.scenarios) {
    if (result.details) lines.push('', `**${result.title}** (medians of the runs): ${result.details.lines.join('; ')}.`)
  }
  lines.push(...coldCategories(report))
  lines.push(...failures(report))
  return lines.join('\n')
}

/** The Markdown table of a run that measured the service alone (`--floor off`): no floor, no ratio. */
export function serviceOnlyTable(report: BenchReport): string {
  const head = reportTable(report).split('\n')[0] as string
  const lines = [
    head,
    '',
    '| Scenario | Service | CPU µs per request, service side | Target (of the service alone) | Met |',
    '|---|---|---|---|---|',
  ]
  for (const result of report.scenarios) {
    const cpu = result.service.cpuPerRequestUs
    const parts = cpu
      ? `${number((cpu.service ?? 0) + (cpu.database ?? 0) + cpu.client)} (service ${number(cpu.service ?? 0)}` +
        `${cpu.database === null ? '' : `, database ${number(cpu.database)}`}, autocannon ${number(cpu.client)})`
      : ''
    // Only the targets on the service's own figures can be judged without a floor.
    const p99 = result.targets.match(/p99 ≤ (\d+) ms/)
    const met = p99 ? result.service.p99 <= Number(p99[1]) && result.service.errors === 0 : undefined
    lines.push(
      `| ${result.title} | ${side(result, result.service)} | ${parts} | ${p99 ? `p99 ≤ ${p99[1]} ms` : '—'} | ${met === undefined ? '—' : met ? 'yes' : 'no'} |`,
    )
  }
  const categories = report.scenarios.filter((r) => r.service.byCategory)
  if (categories.length > 0) {
    const kinds = (Object.keys(COLD_MIX_SHARES) as ColdCategory[]).filter((c) =>
      categories.some((r) => r.service.byCategory?.[c]),
    )
    const connections = (r: ScenarioResult) => `${r.connections} connection${r.connections === 1 ? '' : 's'}`
    lines.push(
      '',
      `**Cold mix by kind of request**, service: p50 / p99 in ms (${categories.map(connections).join(' and ')}).`,
      '',
      `| Kind of request | ${categories.map(connections).join(' | ')} |`,
      `|---|${categories.map(() => '---|').join('')}`,
      ...kinds.map((kind) => {
        const cells = categories.map((r) => {
          const found = r.service.byCategory?.[kind]
          return found ? `${number(found.p50, 1)} / ${number(found.p99, 1)}` : '—'
        })
        return `| ${COLD_CATEGORY_TITLES[kind]} | ${cells.join(' | ')} |`
      }),
    )
  }
  lines.push(...failures(report))
  return lines.join('\n')
}

/** Writes the run's JSON and rewrites REPORT.md from the latest run of each database; returns the JSON's path. */
/** Saves a run under `resultsDir` and, given a report file, rewrites it from every run saved there. */
export function writeReport(report: BenchReport, resultsDir: string, reportFile?: string): string {
  mkdirSync(resultsDir, { recursive: true })
  const file = join(
    resultsDir,
    `${report.date.replace(/[:.]/g, '-')}-${report.driver}-caches-${report.caches}-index-${report.searchIndex ?? 'off'}.json`,
  )
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`)
  if (reportFile) writeReportFile(resultsDir, reportFile)
  return file
}

/** Whether a scenario is the cold mix's (measured on its own as often as with the others). */
const isCold = (result: ScenarioResult) => result.id.startsWith('cold-mix')

/**
 * Rewrites REPORT.md from the results under `resultsDir`: per database, cache setting and search index setting,
 * each scenario from the latest run that measured it. The cold mix is often run on its own (`--only cold`): then
 * the latest run of the other scenarios and the latest of the cold mix each get a section. Runs made before the
 * search index existed had none: they count as index off.
 */
export function writeReportFile(resultsDir: string, reportFile: string): void {
  const latest = new Map<string, { others?: BenchReport; cold?: BenchReport }>()
  for (const name of readdirSync(resultsDir)
    .filter((n) => n.endsWith('.json'))
    .sort()) {
    const saved = JSON.parse(readFileSync(join(resultsDir, name), 'utf8')) as BenchReport
    // The same directory holds other benchmarks' results (`bench:scale-out`), which have no scenarios.
    if (!Array.isArray(saved.scenarios)) continue
    const key = `${saved.driver} ${saved.caches ?? 'on'} ${saved.searchIndex ?? 'off'}`
    const entry = latest.get(key) ?? {}
    if (saved.scenarios.some((s) => !isCold(s))) entry.others = saved
    if (saved.scenarios.some(isCold)) entry.cold = saved
    latest.set(key, entry)
  }
  const order = ['postgres', 'pglite'].flatMap((driver) =>
    ['on on', 'off on', 'on off', 'off off'].map((settings) => `${driver} ${settings}`),
  )
  const section = (saved: BenchReport, title: string) => {
    const settings = [
      ...(saved.caches === 'off' ? ['caches off (every request computed afresh)'] : []),
      ...((saved.searchIndex ?? 'off') === 'off'
        ? [saved.searchIndex ? 'search index off' : 'no search index (before it existed)']
        : []),
    ]
    return (
      `## ${saved.driver === 'postgres' ? 'PostgreSQL server' : 'Embedded (PGlite)'}` +
      `${settings.map((s) => `, ${s}`).join('')}${title}\n\n${reportTable(saved)}`
    )
  }
  const sections = [...latest.entries()]
    .sort(([a], [b]) => order.indexOf(a) - order.indexOf(b))
    .flatMap(([, { others, cold }]) => {
      if (!cold || cold === others) return others ? [section(others, '')] : []
      return [
        ...(others ? [section({ ...others, scenarios: others.scenarios.filter((s) => !isCold(s)) }, '')] : []),
        section({ ...cold, scenarios: cold.scenarios.filter(isCold) }, ': the cold mix'),
      ]
    })
  // Runs that measured the service alone (`--floor off`, under service-only/): the latest per setting and scenario set.
  const serviceOnlyDir = join(resultsDir, 'service-only')
  const serviceOnly = new Map<string, BenchReport>()
  if (existsSync(serviceOnlyDir)) {
    for (const name of readdirSync(serviceOnlyDir)
      .filter((n) => n.endsWith('.json'))
      .sort()) {
      const saved = JSON.parse(readFileSync(join(serviceOnlyDir, name), 'utf8')) as BenchReport
      const cold = saved.scenarios.some(isCold)
      serviceOnly.set(`${saved.driver} ${saved.caches} ${saved.searchIndex ?? 'off'} ${cold}`, saved)
    }
  }
  const serviceOnlySections = [...serviceOnly.values()].map(
    (saved) =>
      `## ${saved.driver === 'postgres' ? 'PostgreSQL server' : 'Embedded (PGlite)'}` +
      `${saved.caches === 'off' ? ', caches off' : ''}: ` +
      `${saved.scenarios.some(isCold) ? 'the cold mix' : 'the scenarios'}, the service alone (\`--floor off\`)\n\n` +
      serviceOnlyTable(saved),
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
      'How to run it, what each scenario sends and the figures read: `docs/benchmarks.md`.',
      '',
      'Each load scenario (a)–(i) cycles through a few dozen distinct requests, so after the warm-up the service',
      'answers many of them from its per-data-version caches (totals, pages, facets, suggestions), while the floor',
      'runs its SQL every time. A run with `--caches off` measures the service computing every request afresh;',
      '`--index off` turns its in-memory search index off (every search from SQL).',
      '',
      'The **cold mix** is the opposite: tens of thousands of distinct requests of an optician’s working day (frames',
      'by typed fragments of brands, models and manufacturers, lenses by index, diameter and prescription, lens',
      'facets, suggestions, the glass price listing with every sort, pages 0–3, the other kinds), drawn with a',
      'fixed seed from the catalogue’s own values, each sent once, with the caches on, so none is answered from a',
      'cache by its own key. It ends when its list is exhausted; its floor runs the same requests’ SQL, each once.',
      'It runs at 1 connection and at the run’s connections, each with lists of its own.',
      '',
      'CPU µs per request: the processor time of each party per request, service side → floor side: the service’s',
      'process, the PostgreSQL server (when it runs on this machine; the embedded one works inside the service and',
      'inside the driver’s process), and the bench process (autocannon, or the driver). Where all of them share the',
      'cores, a side’s throughput is bounded by its total.',
      '',
      ...sections.flatMap((section) => [section, '']),
      ...(serviceOnlySections.length > 0
        ? [
            'Runs of the service alone (`--floor off`: no floor, so no ratio; only the targets on its own latencies',
            'are judged), kept under `bench/results/service-only/`: measured when the floor’s SQL had not changed',
            'since the full run above and takes too long to repeat (the cold mix’s floor at a million rows).',
            '',
            ...serviceOnlySections.flatMap((section) => [section, '']),
          ]
        : []),
    ].join('\n'),
  )
}
