import { readdirSync } from 'node:fs'
import { mkdir, open, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'
import type { Kind } from '../kinds/kind.js'
import type { IndexClient } from './index-database.js'
import type { KindVersions } from './kind-versions.js'
import type { IdentifiedTable } from './merge.js'
import { type Codes, Column, type KeptValue, tieOf } from './table.js'

/*
 * A kind's tables on disk, so a restart does not read a million rows through COPY again: written when the first
 * load ends, every few minutes after if they moved, and when the service stops; read at the next start. A file
 * holds both tables of one kind as they stood at one snapshot of the database (with what was built of each column's
 * values that costs most to build again, `Column.kept`), and the identity of that snapshot:
 * - where: the cluster (`system_identifier`, made at initdb), the database and schema, and the last migration;
 * - when: the kind's versions, the transaction that last moved them and when (the `xmin`, `changed_at` and
 *   `refreshed_at` of its `catalog_state` row: a logically restored database writes that row anew, and one restored
 *   from a physical copy moves it at another moment, so the same versions from another history differ here).
 * A file whose place differs, whose format or columns differ, or that cannot be read whole is ignored (logged) and
 * the kind is read from the database as without one. A file of the same place and the same moment is the data as
 * it stands and is used as it is; one of an earlier or another moment is only a starting point: every row is read
 * again and compared (patch.ts), never caught up by the change log, whose history may not be the file's.
 */

/** Bumped whenever the layout below or the meaning of a table's parts changes: older files are then ignored. */
const FORMAT = 3
const MAGIC = 'optics-catalog search index\n'

/** Where and when the tables were read (see the header). */
export interface SnapshotIdentity {
  readonly system: string
  readonly database: string
  readonly schema: string
  readonly migration: string
  readonly row: string
  readonly versions: Pick<KindVersions, 'dataGeneration' | 'matviewVersion' | 'refreshedGeneration'>
}

/** The identity of the snapshot `client` reads in, for `kind`. */
export async function snapshotIdentity(
  client: Pick<IndexClient, 'query'>,
  kind: Kind,
  versions: KindVersions,
): Promise<SnapshotIdentity> {
  const [row] = await client.query<{
    system: string
    database: string
    schema: string
    migration: string
    row: string
  }>(
    `SELECT (SELECT system_identifier::text FROM pg_control_system()) AS system, current_database() AS database,
            current_schema() AS schema, (SELECT max(name) FROM schema_migration) AS migration,
            (SELECT concat_ws(' ', xmin, changed_at, refreshed_at) FROM catalog_state WHERE kind = $1) AS row`,
    [kind.path],
  )
  if (!row) throw new Error('no identity read')
  const { dataGeneration, matviewVersion, refreshedGeneration } = versions
  return { ...row, versions: { dataGeneration, matviewVersion, refreshedGeneration } }
}

/** What a file says of the tables besides their rows: checked before they are used. */
interface Header {
  readonly format: number
  /** The kind and the columns each table keeps, as this build reads them. */
  readonly layout: string
  readonly identity: SnapshotIdentity
  readonly tables: readonly TableHeader[]
}

interface TableHeader {
  readonly rows: number
  readonly ids: number
  readonly columns: readonly ColumnHeader[]
}

interface ColumnHeader {
  readonly name: string
  readonly type: Column['type']
  readonly width: 1 | 2 | 4
  /**
   * What was built of the column's values (`Column.kept`): an array is one section; postings are three (the keys
   * in slot order, as doubles or as texts separated by U+0000; the offsets; the items).
   */
  readonly kept: readonly { readonly key: string; readonly shape: 'array' | 'postings' | 'text postings' }[]
}

/** The kind's tables as restored, and whether they are the data as it stands (`exact`) or a starting point. */
export interface Restored {
  readonly matview: IdentifiedTable
  readonly prices: IdentifiedTable
  /** The versions the tables show. */
  readonly versions: SnapshotIdentity['versions']
  readonly exact: boolean
}

export type SnapshotVerdict = Restored | { readonly ignored: string }

/**
 * The layout a file must have been written with: the kind, and what makes each of its tables (the columns and how
 * each is read, the order of the rows).
 */
export function snapshotLayout(kind: Kind, tables: { readonly matview: unknown; readonly prices: unknown }): string {
  return JSON.stringify({ kind: kind.path, source: [kind.matview, kind.priceTable], ...tables })
}

const SUFFIX = '.snapshot'
const fileOf = (dir: string, kind: Kind) => join(dir, `${kind.path}${SUFFIX}`)

/** Whether `dir` holds a snapshot file of any kind: a start with none reads every table, and need not wait. */
export function holdsSnapshots(dir: string): boolean {
  try {
    return readdirSync(dir).some((name) => name.endsWith(SUFFIX))
  } catch {
    return false
  }
}

/** Sections start at multiples of 8 bytes, each typed array aligned for its width (checked when read). */
const ALIGN = 8
const padding = (length: number) => (ALIGN - (length % ALIGN)) % ALIGN
/** The file ends with the length of its header, which follows the sections (their lengths are known once written). */
const TRAILER = 8

/**
 * Writes the kind's tables (a file written whole, then renamed over the old one). A section at a time: the thread
 * answers between them.
 */
export async function writeSnapshot(
  dir: string,
  kind: Kind,
  layout: string,
  identity: SnapshotIdentity,
  tables: { readonly matview: IdentifiedTable; readonly prices: IdentifiedTable },
): Promise<void> {
  await mkdir(dir, { recursive: true })
  const file = fileOf(dir, kind)
  // One name, so a write cut short (a crash) leaves nothing the next one does not replace.
  const temporary = `${file}.tmp`
  const handle = await open(temporary, 'w')
  try {
    const lengths: number[] = []
    const write = async (section: Uint8Array) => {
      await handle.write(section)
      if (padding(section.byteLength) > 0) await handle.write(Buffer.alloc(padding(section.byteLength)))
      lengths.push(section.byteLength)
    }
    const headers: TableHeader[] = []
    for (const table of [tables.matview, tables.prices]) {
      const columns: ColumnHeader[] = []
      for (const column of table.columns.values()) {
        const kept: ColumnHeader['kept'][number][] = []
        await write(bytesOf(column.codes))
        // A value never holds U+0000 (PostgreSQL's text cannot): it separates them.
        await write(Buffer.from(column.values.join('\u0000'), 'utf8'))
        for (const [key, value] of column.kept()) {
          if (value instanceof Uint32Array) {
            kept.push({ key, shape: 'array' })
            await write(bytesOf(value))
          } else {
            const keys = [...value.slots.keys()]
            if (keys.every((slotKey) => typeof slotKey === 'number')) {
              kept.push({ key, shape: 'postings' })
              await write(bytesOf(Float64Array.from(keys)))
            } else {
              kept.push({ key, shape: 'text postings' })
              await write(Buffer.from(keys.join('\u0000'), 'utf8'))
            }
            await write(bytesOf(value.offsets))
            await write(bytesOf(value.items))
          }
        }
        columns.push({ name: column.name, type: column.type, width: column.codes.BYTES_PER_ELEMENT as 1 | 2 | 4, kept })
      }
      for (const ids of table.ids) await write(bytesOf(ids))
      await write(bytesOf(table.rowByTie))
      headers.push({ rows: table.rows, ids: table.ids.length, columns })
    }
    const header: Header = { format: FORMAT, layout, identity, tables: headers }
    const head = Buffer.from(`${MAGIC}${JSON.stringify({ ...header, lengths })}\n`, 'utf8')
    const trailer = Buffer.alloc(TRAILER)
    trailer.writeUInt32LE(head.byteLength, 0)
    await handle.write(head)
    await handle.write(trailer)
    await handle.sync()
  } catch (error) {
    await handle.close()
    await rm(temporary, { force: true })
    throw error
  }
  await handle.close()
  await rename(temporary, file)
}

const bytesOf = (array: ArrayBufferView) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength)

/**
 * The kind's tables from its file, if there is one this build and this database can use (see the header); the
 * reason otherwise. `identity`: the snapshot the load reads in.
 */
export async function readSnapshot(
  dir: string,
  kind: Kind,
  layout: string,
  identity: SnapshotIdentity,
): Promise<SnapshotVerdict> {
  let file: Buffer
  try {
    file = await readFile(fileOf(dir, kind))
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { ignored: 'no file' }
    throw error
  }
  try {
    return restore(file, layout, identity)
  } catch (error) {
    return { ignored: `unreadable: ${(error as Error).message}` }
  }
}

function restore(file: Buffer, layout: string, identity: SnapshotIdentity): SnapshotVerdict {
  if (file.byteLength < TRAILER) throw new Error('cut short')
  const headLength = file.readUInt32LE(file.byteLength - TRAILER)
  const headStart = file.byteLength - TRAILER - headLength
  if (headStart < 0) throw new Error('cut short')
  const head = file.toString('utf8', headStart, file.byteLength - TRAILER)
  if (!head.startsWith(MAGIC)) throw new Error('not a snapshot of the search index, or cut short')
  const header = JSON.parse(head.slice(MAGIC.length)) as Header & { readonly lengths: readonly number[] }
  if (header.format !== FORMAT) return { ignored: `format ${header.format}, this build reads ${FORMAT}` }
  if (header.layout !== layout) return { ignored: 'written for other columns' }
  const place = (of: SnapshotIdentity) => [of.system, of.database, of.schema, of.migration].join('\u0000')
  if (place(header.identity) !== place(identity)) return { ignored: 'written for another database or schema' }

  let offset = 0
  let section = 0
  const next = (): Uint8Array => {
    const length = header.lengths[section++]
    if (length === undefined || offset + length > headStart) throw new Error('sections differ')
    const bytes = new Uint8Array(file.buffer, file.byteOffset + offset, length)
    offset += length + padding(length)
    return bytes
  }
  const typed = <T>(make: (buffer: ArrayBufferLike, offset: number, length: number) => T, width: number) => {
    const bytes = next()
    if (bytes.byteLength % width !== 0 || bytes.byteOffset % width !== 0) throw new Error('misaligned')
    // A copy of its own, in shared memory as a table's arrays are (table.ts): a view would keep the whole file
    // alive as long as any one array of it.
    const copy = new SharedArrayBuffer(bytes.byteLength)
    new Uint8Array(copy).set(bytes)
    return make(copy, 0, bytes.byteLength / width)
  }
  const texts = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8')
  const tables = header.tables.map((table): IdentifiedTable => {
    const columns = new Map<string, Column>()
    for (const spec of table.columns) {
      const codes: Codes =
        spec.width === 1
          ? typed((b, o, l) => new Uint8Array(b, o, l), 1)
          : spec.width === 2
            ? typed((b, o, l) => new Uint16Array(b, o, l), 2)
            : typed((b, o, l) => new Uint32Array(b, o, l), 4)
      if (codes.length !== table.rows) throw new Error(`column ${spec.name}: ${codes.length} rows of ${table.rows}`)
      const values = texts(next()).split('\u0000')
      const column = new Column(spec.name, spec.type, values, codes)
      const uint32 = () => typed((b, o, l) => new Uint32Array(b, o, l), 4)
      for (const { key, shape } of spec.kept) {
        let value: KeptValue
        if (shape === 'array') value = uint32()
        else {
          const keys: ArrayLike<number | string> =
            shape === 'postings' ? typed((b, o, l) => new Float64Array(b, o, l), 8) : texts(next()).split('\u0000')
          const slots = new Map<number | string, number>()
          for (let slot = 0; slot < keys.length; slot++) slots.set(keys[slot] as number | string, slot)
          value = { slots, offsets: uint32(), items: uint32() } as KeptValue
        }
        column.restoreKept(key, value)
      }
      columns.set(spec.name, column)
    }
    const ids: Uint32Array[] = []
    for (let index = 0; index < table.ids; index++) ids.push(typed((b, o, l) => new Uint32Array(b, o, l), 4))
    const rowByTie = typed((b, o, l) => new Uint32Array(b, o, l), 4)
    if (rowByTie.length !== table.rows || ids.some((id) => id.length !== table.rows)) throw new Error('rows differ')
    return { rows: table.rows, columns, ids, ...tieOf(rowByTie) }
  })
  if (section !== header.lengths.length || offset !== headStart || tables.length !== 2) {
    throw new Error('sections differ')
  }
  const [matview, prices] = tables as [IdentifiedTable, IdentifiedTable]
  const same = JSON.stringify(header.identity) === JSON.stringify(identity)
  return { matview, prices, versions: header.identity.versions, exact: same }
}
