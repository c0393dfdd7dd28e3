import type { Registry } from 'prom-client'

/*
 * The Prometheus registry seen as Spring Boot Actuator's `/actuator/metrics` shows Micrometer's meters, so an
 * operator's scripts for the Spring service keep reading the same shapes. A Prometheus family becomes one metric
 * named as Micrometer names the meter it would export under that name: the unit suffix (`_seconds`, `_bytes`)
 * becomes `baseUnit`, a counter's `_total` goes, and underscores become dots
 * (`http_server_requests_seconds` → `http.server.requests`, `process_cpu_user_seconds_total` → `process.cpu.user`).
 * Statistics as Micrometer's: a counter is COUNT, a gauge VALUE, a histogram or summary COUNT and TOTAL_TIME (TOTAL
 * without a time unit) and MAX where the family `<name>_max` exists beside it (as Micrometer exports it). With
 * several series (label sets), a statistic adds them up, MAX takes the largest, as Spring merges meters.
 */

/** Micrometer's statistics, in the order a metric lists them. */
export const STATISTICS = ['COUNT', 'TOTAL', 'TOTAL_TIME', 'MAX', 'VALUE'] as const
export type Statistic = (typeof STATISTICS)[number]

export interface MetricView {
  readonly name: string
  readonly description: string | null
  readonly baseUnit: string | null
  readonly measurements: { statistic: Statistic; value: number }[]
  readonly availableTags: { tag: string; values: string[] }[]
}

/** One tag of `?tag=key:value`. */
export interface TagFilter {
  readonly key: string
  readonly value: string
}

type Labels = Readonly<Record<string, string | number | undefined>>

/** One series of a metric: its labels and its statistics. */
interface Series {
  readonly labels: Labels
  readonly statistics: Partial<Record<Statistic, number>>
}

interface Metric {
  readonly name: string
  /** The family in the Prometheus text. */
  readonly prometheusName: string
  readonly description: string
  readonly baseUnit: string | null
  readonly series: Series[]
}

const units: readonly [suffix: string, unit: string][] = [
  ['_seconds', 'seconds'],
  ['_bytes', 'bytes'],
]

/** The Micrometer name and base unit of a Prometheus family. */
function springName(prometheusName: string, type: string): { name: string; baseUnit: string | null } {
  let name = type === 'counter' ? prometheusName.replace(/_total$/, '') : prometheusName
  let baseUnit: string | null = null
  for (const [suffix, unit] of units) {
    if (name.endsWith(suffix)) {
      name = name.slice(0, -suffix.length)
      baseUnit = unit
      break
    }
  }
  return { name: name.replaceAll('_', '.'), baseUnit }
}

const labelKey = (labels: Labels): string =>
  JSON.stringify(
    Object.entries(labels)
      .filter(([, value]) => value !== undefined)
      .sort(([a], [b]) => a.localeCompare(b)),
  )

/** The series of a histogram or summary: count and sum per label set (buckets and quantiles left out). */
function distributionSeries(
  family: string,
  values: readonly { value: number; labels: Labels; metricName?: string }[],
  timed: boolean,
): Series[] {
  const byLabels = new Map<string, { labels: Labels; statistics: Partial<Record<Statistic, number>> }>()
  for (const sample of values) {
    const statistic =
      sample.metricName === `${family}_count` ? 'COUNT' : sample.metricName === `${family}_sum` ? 'TOTAL' : undefined
    if (statistic === undefined) continue
    const key = labelKey(sample.labels)
    const series = byLabels.get(key) ?? { labels: sample.labels, statistics: {} }
    series.statistics[statistic === 'TOTAL' && timed ? 'TOTAL_TIME' : statistic] = sample.value
    byLabels.set(key, series)
  }
  return [...byLabels.values()]
}

/**
 * Reads every family of `registry` as Spring-named metrics, by name. A histogram's `<name>_max` gauge is folded into
 * it as MAX.
 */
export async function readMetrics(registry: Registry): Promise<Map<string, Metric>> {
  const families = await registry.getMetricsAsJSON()
  const distributions = new Set(
    families.filter((family) => ['histogram', 'summary'].includes(String(family.type))).map((family) => family.name),
  )
  const maxima = new Map<string, readonly { value: number; labels: Labels }[]>()
  const metrics: Metric[] = []
  for (const family of families) {
    const type = String(family.type)
    const values: readonly { value: number; labels: Labels; metricName?: string }[] = family.values
    const maxOf = family.name.endsWith('_max') ? family.name.slice(0, -'_max'.length) : undefined
    if (type === 'gauge' && maxOf !== undefined && distributions.has(maxOf)) {
      maxima.set(maxOf, values)
      continue
    }
    const { name, baseUnit } = springName(family.name, type)
    const distribution = type === 'histogram' || type === 'summary'
    const statistic: Statistic = type === 'counter' ? 'COUNT' : 'VALUE'
    const series = distribution
      ? distributionSeries(family.name, values, baseUnit === 'seconds')
      : values.map((sample) => ({ labels: sample.labels, statistics: { [statistic]: sample.value } }))
    metrics.push({ name, prometheusName: family.name, description: family.help, baseUnit, series })
  }
  for (const metric of metrics) {
    const max = maxima.get(metric.prometheusName)
    if (!max) continue
    const byLabels = new Map(metric.series.map((series) => [labelKey(series.labels), series]))
    for (const sample of max) {
      const series = byLabels.get(labelKey(sample.labels))
      if (series) series.statistics.MAX = sample.value
    }
  }
  // Where two families meet on one name (`optics_matview_stale` and `optics_matview_stale_seconds`), the one that
  // lost its unit suffix keeps it in the name (`optics.matview.stale.seconds`).
  const taken = new Map<string, number>()
  for (const metric of metrics) taken.set(metric.name, (taken.get(metric.name) ?? 0) + 1)
  return new Map(
    metrics.map((metric) => {
      const name =
        taken.get(metric.name) === 1 || metric.baseUnit === null ? metric.name : `${metric.name}.${metric.baseUnit}`
      return [name, { ...metric, name }]
    }),
  )
}

/** The names of the metrics that have at least one series, sorted (`GET /actuator/metrics`). */
export function metricNames(metrics: ReadonlyMap<string, Metric>): string[] {
  return [...metrics.values()]
    .filter((metric) => metric.series.length > 0)
    .map((metric) => metric.name)
    .sort()
}

/**
 * One metric narrowed to the series carrying every tag of `tags` (`GET /actuator/metrics/{name}`): its statistics
 * added up over those series (MAX: the largest), and the other tags they carry with their values. Undefined when
 * no such metric or no series matches, which Spring answers with 404.
 */
export function viewMetric(
  metrics: ReadonlyMap<string, Metric>,
  name: string,
  tags: readonly TagFilter[],
): MetricView | undefined {
  const metric = metrics.get(name)
  if (!metric) return undefined
  const matching = metric.series.filter((series) =>
    tags.every((tag) => series.labels[tag.key] !== undefined && String(series.labels[tag.key]) === tag.value),
  )
  if (matching.length === 0) return undefined
  const totals = new Map<Statistic, number>()
  for (const series of matching) {
    for (const [statistic, value] of Object.entries(series.statistics) as [Statistic, number][]) {
      const before = totals.get(statistic)
      totals.set(
        statistic,
        before === undefined ? value : statistic === 'MAX' ? Math.max(before, value) : before + value,
      )
    }
  }
  const filtered = new Set(tags.map((tag) => tag.key))
  const available = new Map<string, Set<string>>()
  for (const series of matching) {
    for (const [tag, value] of Object.entries(series.labels)) {
      if (value === undefined || filtered.has(tag)) continue
      const values = available.get(tag) ?? new Set<string>()
      values.add(String(value))
      available.set(tag, values)
    }
  }
  return {
    name: metric.name,
    description: metric.description || null,
    baseUnit: metric.baseUnit,
    measurements: STATISTICS.flatMap((statistic) => {
      const value = totals.get(statistic)
      return value === undefined ? [] : [{ statistic, value }]
    }),
    availableTags: [...available]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([tag, values]) => ({ tag, values: [...values].sort() })),
  }
}

/** Reads `key:value` (the value may hold colons); undefined when there is no colon or the key is empty. */
export function parseTag(text: string): TagFilter | undefined {
  const colon = text.indexOf(':')
  if (colon <= 0) return undefined
  return { key: text.slice(0, colon), value: text.slice(colon + 1) }
}
