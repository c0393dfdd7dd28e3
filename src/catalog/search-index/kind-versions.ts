import type { FastifyBaseLogger } from 'fastify'
import type { ReadQuery } from '../../db/database.js'

/* The versions of each kind's data the index compares what it holds with (catalog_state), and its first load. */

export interface KindVersions {
  readonly dataGeneration: number
  readonly matviewVersion: number
  /** The data generation the matview's last refresh started from. */
  readonly refreshedGeneration: number
  /** The change log holds every change after this generation; null: none usable. */
  readonly changesFrom: number | null
}

/** Runs the first load in the background, logging how long it took or why it failed; `warming` while it runs. */
export function firstLoad(
  log: FastifyBaseLogger,
  catchUp: () => Promise<void>,
  warming: (warming: boolean) => void,
): void {
  warming(true)
  const started = performance.now()
  catchUp()
    .then(() => log.info({ ms: Math.round(performance.now() - started) }, 'search index loaded'))
    .catch((error: unknown) => log.error({ err: error }, 'search index: the first load failed'))
    .finally(() => warming(false))
}

/**
 * A moment of the first load a start waits for (`SearchIndexService.restored`): settled once, by whichever sign
 * comes first, and waited for at most a given time.
 */
export class StartMoment {
  #settle: () => void = () => {}
  readonly #settled = new Promise<void>((resolve) => {
    this.#settle = resolve
  })

  settle(): void {
    this.#settle()
  }

  /** Settles when the moment has come, or after `ms`. */
  within(ms: number): Promise<void> {
    return settledWithin([this.#settled], ms)
  }
}

/** Settles once any of `promises` settles (a rejection counts, and is not passed on), or after `ms`. */
export async function settledWithin(promises: readonly Promise<unknown>[], ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    ...promises.map((promise) => promise.catch(() => {})),
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms)
    }),
  ])
  clearTimeout(timer)
}

interface VersionRow {
  kind: string
  data_generation: number | string
  matview_version: number | string
  refreshed_generation: number | string
  changes_from: number | string | null
}

function versionsOf(rows: readonly VersionRow[]): Map<string, KindVersions> {
  return new Map(
    rows.map((row) => [
      row.kind,
      {
        dataGeneration: Number(row.data_generation),
        matviewVersion: Number(row.matview_version),
        refreshedGeneration: Number(row.refreshed_generation),
        changesFrom: row.changes_from === null ? null : Number(row.changes_from),
      },
    ]),
  )
}

export async function readVersions(query: ReadQuery): Promise<Map<string, KindVersions>> {
  return versionsOf(
    await query<VersionRow>(
      'SELECT kind, data_generation, matview_version, refreshed_generation, changes_from FROM catalog_state',
    ),
  )
}
