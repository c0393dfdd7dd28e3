import type { FastifyInstance } from 'fastify'
import { Gauge, Histogram } from 'prom-client'
import type { ServiceMetrics } from '../../http/metrics.js'
import { readCatalogStates } from './catalog-state.js'
import type { RefreshEvent } from './matview-refresh.js'

/**
 * The catalogue's own metrics, in the application's registry: how long this instance's matview refreshes take,
 * and at each scrape, from one read of the catalog state, how fresh each kind's matview is (that read is also what
 * tells the scrape whether the database answers). Returns what the matview refresher reports each refresh to.
 */
export function registerCatalogMetrics(
  app: FastifyInstance,
  metrics: ServiceMetrics,
): { observeMatviewRefresh(event: RefreshEvent): void } {
  const registers = [metrics.registry]
  const refreshSeconds = new Histogram({
    name: 'optics_matview_refresh_seconds',
    help: 'Matview refreshes by this instance: duration per kind',
    labelNames: ['kind'] as const,
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers,
  })
  const stale = new Gauge({
    name: 'optics_matview_stale',
    help: 'Whether the kind has changes its matview does not show yet (1) or not (0)',
    labelNames: ['kind'] as const,
    registers,
  })
  const staleSeconds = new Gauge({
    name: 'optics_matview_stale_seconds',
    help: 'While stale: seconds since the matview was last refreshed (an upper bound on how long searches have missed changes); 0 when fresh',
    labelNames: ['kind'] as const,
    registers,
  })
  metrics.readAtScrape(async () => {
    stale.reset()
    staleSeconds.reset()
    const states = await readCatalogStates(app.db.primary)
    const now = Date.now()
    for (const state of states) {
      stale.set({ kind: state.kind }, state.stale ? 1 : 0)
      const since = state.refreshedAt ?? state.changedAt
      staleSeconds.set({ kind: state.kind }, state.stale && since ? Math.max(0, (now - since.getTime()) / 1000) : 0)
    }
  })
  return {
    observeMatviewRefresh(event) {
      refreshSeconds.observe({ kind: event.kind.path }, (event.finishedAt - event.startedAt) / 1000)
    },
  }
}
