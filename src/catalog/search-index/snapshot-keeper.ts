import type { FastifyBaseLogger } from 'fastify'
import type { Kind } from '../kinds/kind.js'
import { patchMatviewTable, patchPriceTable } from './changes.js'
import type { IndexClient } from './index-database.js'
import type { KindVersions } from './kind-versions.js'
import {
  type ColumnSpec,
  databaseForms,
  type MatviewTable,
  matviewColumnSpecs,
  matviewOrder,
  matviewTable,
  type PriceTable,
  priceOrder,
  priceTable,
} from './load.js'
import { readSnapshot, type SnapshotIdentity, snapshotIdentity, snapshotLayout, writeSnapshot } from './snapshot.js'

/*
 * The index's side of its snapshot files (snapshot.ts): the identity a load reads, the restore of a kind at its
 * first load, and the writes of the kinds whose tables moved, one after another (when the first load ends, every
 * few minutes, and at the end of the run).
 */

/** How often the kinds whose tables moved are written to their snapshot files, besides at the end of the run. */
const SNAPSHOT_EVERY_MS = 10 * 60_000

/** A kind's tables and the snapshot of the database they show. */
export interface HeldTables {
  readonly matview: MatviewTable
  readonly prices: PriceTable
  readonly identity: SnapshotIdentity
}

export class SnapshotKeeper {
  readonly #dir: string
  readonly #log: FastifyBaseLogger
  readonly #priceColumns: (kind: Kind) => ColumnSpec[]
  readonly #everyMs: number
  /** Per kind, the identity of the tables last written to its file (as JSON). */
  readonly #written = new Map<string, string>()
  /** The writes asked for, one after another (two at once would share a file). */
  #writing: Promise<void> = Promise.resolve()
  #timer: NodeJS.Timeout | undefined

  constructor(
    dir: string,
    log: FastifyBaseLogger,
    options: { readonly priceColumns: (kind: Kind) => ColumnSpec[]; readonly everyMs?: number | undefined },
  ) {
    this.#dir = dir
    this.#log = log
    this.#priceColumns = options.priceColumns
    this.#everyMs = options.everyMs ?? SNAPSHOT_EVERY_MS
  }

  /** The identity of the snapshot of the database a load reads in (see snapshot.ts). */
  identity(client: IndexClient, kind: Kind, wanted: KindVersions): Promise<SnapshotIdentity> {
    return snapshotIdentity(client, kind, wanted)
  }

  /**
   * The kind's tables from its snapshot file, brought to `wanted`: as they are where the file shows the data as it
   * stands, else with every row read again and compared (patch.ts). Empty where there is no usable file, or where
   * rows came, went or moved since: the tables are then read anew.
   */
  async restore(
    client: IndexClient,
    kind: Kind,
    identity: SnapshotIdentity,
    wanted: KindVersions,
  ): Promise<{ matview?: MatviewTable; prices?: PriceTable }> {
    const started = performance.now()
    const verdict = await readSnapshot(this.#dir, kind, this.#layout(kind), identity).catch((error: unknown) => ({
      ignored: `unreadable: ${(error as Error).message}`,
    }))
    if ('ignored' in verdict) {
      if (verdict.ignored !== 'no file') {
        this.#log.info(
          { kind: kind.path, dir: this.#dir, reason: verdict.ignored },
          'search index: the snapshot is not used',
        )
      }
      return {}
    }
    const columns = [verdict.matview, verdict.prices].flatMap((table) => [...table.columns.values()])
    const forms = await databaseForms(client, [...new Set(columns.flatMap((column) => column.nonAsciiValues()))])
    for (const column of columns) if (column.type === 'text') column.setForms(forms)
    let matview: MatviewTable | undefined = matviewTable(kind, verdict.matview, verdict.versions, false)
    let prices: PriceTable | undefined = priceTable(kind, verdict.prices, verdict.versions.dataGeneration, false)
    if (verdict.exact) {
      this.#written.set(kind.path, JSON.stringify(identity))
    } else {
      matview = await patchMatviewTable(client, kind, matview, wanted, prices)
      prices =
        matview &&
        (await patchPriceTable(client, kind, prices, wanted.dataGeneration, this.#priceColumns(kind), matview))
      if (!matview || !prices) return {}
    }
    this.#log.info(
      { kind: kind.path, exact: verdict.exact, ms: Math.round(performance.now() - started) },
      'search index: kind restored from its snapshot',
    )
    return { matview, prices }
  }

  /** Writes the file of every kind whose tables moved since it was last written, after the writes asked before. */
  write(held: () => Iterable<readonly [Kind, HeldTables]>): Promise<void> {
    this.#writing = this.#writing.then(() => this.#writeMoved(held()))
    return this.#writing
  }

  /** From now on, writes every few minutes what moved (until {@link stop}). */
  keepWriting(held: () => Iterable<readonly [Kind, HeldTables]>): void {
    if (this.#timer) return
    this.#timer = setInterval(() => void this.write(held), this.#everyMs)
    this.#timer.unref()
  }

  stop(): void {
    clearInterval(this.#timer)
  }

  async #writeMoved(held: Iterable<readonly [Kind, HeldTables]>): Promise<void> {
    for (const [kind, { matview, prices, identity }] of held) {
      const key = JSON.stringify(identity)
      if (this.#written.get(kind.path) === key) continue
      const started = performance.now()
      try {
        await writeSnapshot(this.#dir, kind, this.#layout(kind), identity, { matview, prices })
        this.#written.set(kind.path, key)
        this.#log.debug(
          { kind: kind.path, ms: Math.round(performance.now() - started) },
          'search index: snapshot written',
        )
      } catch (error) {
        this.#log.warn(
          { err: error, kind: kind.path, dir: this.#dir },
          'search index: the snapshot could not be written',
        )
      }
    }
  }

  /** The columns and orders of the kind's tables, as a file must have been written with them. */
  #layout(kind: Kind): string {
    return snapshotLayout(kind, {
      matview: [matviewColumnSpecs(kind), matviewOrder(kind), kind.ranges.map((range) => [range.column, range.sku])],
      prices: [this.#priceColumns(kind), priceOrder(kind)],
    })
  }
}
