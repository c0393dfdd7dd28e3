import { execFileSync, spawnSync } from 'node:child_process'
import { appendFileSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { openDatabase } from '../src/db/database.js'
import { migrateToLatest } from '../src/db/migrate.js'
import { freePort } from './harness.js'

/*
 * A primary and a streaming standby of it, made for a suite: `initdb` of a private primary on a free port of
 * 127.0.0.1 (its own pg_hba.conf allows replication), migrated, then `pg_basebackup -R` of it into a second
 * cluster started on another free port as a hot standby. Both live in one temporary directory, removed by
 * `close()`. A private primary rather than the shared test server: replication needs a `replication` line in the
 * server's pg_hba.conf and a role with REPLICATION, which a shared server need not grant, and a suite that stops
 * its primary must own it. PostgreSQL refuses to run as root: as root, every server binary runs as `postgres`.
 */

/** Where the server binaries are, or undefined when this machine has none (the suite is then skipped). */
function serverBinaries(): string | undefined {
  const candidates: string[] = []
  const fromConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' })
  if (fromConfig.status === 0) candidates.push(fromConfig.stdout.trim())
  for (const version of ['17', '16', '15', '14']) candidates.push(`/usr/lib/postgresql/${version}/bin`)
  return candidates.find((directory) =>
    ['initdb', 'pg_ctl', 'pg_basebackup', 'postgres'].every((name) => existsSync(join(directory, name))),
  )
}

const binaries = serverBinaries()
const asRoot = process.getuid?.() === 0

/** Why the standby suites cannot run here; undefined when they can. */
export const standbyUnavailable: string | undefined = binaries
  ? undefined
  : 'the PostgreSQL server binaries (initdb, pg_ctl, pg_basebackup) are not installed: the standby suite is skipped'

export type Node = 'primary' | 'standby'

export interface ReplicatedPair {
  /** `postgres://…` of the primary's database (migrated, empty). */
  readonly primaryUrl: string
  /** `postgres://…` of the same database on the standby (read only). */
  readonly standbyUrl: string
  /** Runs one statement on a node, on a connection of its own. */
  query<Row = Record<string, unknown>>(node: Node, text: string): Promise<Row[]>
  /** Stops a node at once (`pg_ctl stop -m immediate`): what a crash or a lost machine looks like to clients. */
  stop(node: Node): void
  /** Starts a stopped node again; resolves when it accepts connections. */
  start(node: Node): void
  /** The process id of each running node's postmaster (to measure the cluster's processor time). */
  postmasterPids(): number[]
  /** Stops both nodes and removes their directory. */
  close(): void
}

function run(command: string, args: readonly string[]): string {
  const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, [...args]]
  try {
    return execFileSync(file, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (error) {
    const failed = error as { stderr?: string; message: string }
    throw new Error(`${command} ${args.join(' ')} failed: ${failed.stderr || failed.message}`)
  }
}

/** Makes the primary and its standby; see the header. Throws when the binaries are missing. */
export async function startReplicatedPair(): Promise<ReplicatedPair> {
  if (!binaries) throw new Error(standbyUnavailable)
  const bin = (name: string) => join(binaries, name)
  const root = mkdtempSync(join(tmpdir(), 'optics-standby-'))
  if (asRoot) {
    const ids = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim()
    const group = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim()
    chownSync(root, Number(ids), Number(group))
  }
  const directories: Record<Node, string> = { primary: join(root, 'primary'), standby: join(root, 'standby') }
  const ports: Record<Node, number> = { primary: await freePort(), standby: await freePort() }
  const running = new Set<Node>()
  const settings = (node: Node) =>
    [
      `port = ${ports[node]}`,
      "listen_addresses = '127.0.0.1'",
      `unix_socket_directories = '${root}'`,
      'fsync = off',
      'full_page_writes = off',
      'shared_buffers = 16MB',
      'max_connections = 60',
      // Replay resumes at once after a pause, and a standby notices its lost primary quickly.
      'wal_receiver_timeout = 5s',
      'wal_retrieve_retry_interval = 200ms',
      '',
    ].join('\n')

  const start = (node: Node) => {
    run(bin('pg_ctl'), ['-D', directories[node], '-l', join(root, `${node}.log`), '-w', '-t', '120', 'start'])
    running.add(node)
  }
  const stop = (node: Node) => {
    if (!running.has(node)) return
    run(bin('pg_ctl'), ['-D', directories[node], '-m', 'immediate', '-w', 'stop'])
    running.delete(node)
  }
  const close = () => {
    for (const node of ['standby', 'primary'] as const) {
      try {
        stop(node)
      } catch {
        // Removing the directory below is what matters; a server still running there exits on its own.
      }
    }
    rmSync(root, { recursive: true, force: true })
  }

  try {
    // Locale C: the search index needs a database that orders text in byte order.
    run(bin('initdb'), ['-D', directories.primary, '-U', 'postgres', '--auth=trust', '--no-locale', '-E', 'UTF8'])
    appendFileSync(join(directories.primary, 'postgresql.conf'), settings('primary'))
    start('primary')
    const primaryUrl = `postgres://postgres@127.0.0.1:${ports.primary}/postgres`
    const standbyUrl = `postgres://postgres@127.0.0.1:${ports.standby}/postgres`
    const setup = new pg.Client({ connectionString: primaryUrl })
    await setup.connect()
    await setup.query('CREATE EXTENSION IF NOT EXISTS pg_trgm')
    await setup.end()
    const db = await openDatabase({ url: primaryUrl, poolSize: 2 })
    await migrateToLatest(db.primary)
    await db.close()

    run(bin('pg_basebackup'), [
      '-h',
      '127.0.0.1',
      '-p',
      String(ports.primary),
      '-U',
      'postgres',
      '-D',
      directories.standby,
      '-R',
      '-X',
      'stream',
      '-c',
      'fast',
    ])
    appendFileSync(join(directories.standby, 'postgresql.conf'), settings('standby'))
    start('standby')

    return {
      primaryUrl,
      standbyUrl,
      async query<Row>(node: Node, text: string): Promise<Row[]> {
        const client = new pg.Client({ connectionString: node === 'primary' ? primaryUrl : standbyUrl })
        await client.connect()
        try {
          return (await client.query(text)).rows as Row[]
        } finally {
          await client.end()
        }
      },
      stop,
      start,
      close,
      postmasterPids: () =>
        [...running].map((node) =>
          Number(readFileSync(join(directories[node], 'postmaster.pid'), 'utf8').split('\n')[0]),
        ),
    }
  } catch (error) {
    close()
    throw error
  }
}
