import type { Database } from '../database.js'
import { isDatabaseUnavailable } from '../database-errors.js'

/**
 * The start of the service and of the CLI in server mode: the database server may be starting too (a container
 * brought up beside it, a failover). The first query is retried with backoff until `timeoutSeconds` have passed;
 * then the start fails with one line naming `DATABASE_URL` and the server's address — never its password.
 */
export class DatabaseStartError extends Error {
  override name = 'DatabaseStartError'
}

export interface WaitOptions {
  /** The `DATABASE_URL` (only its host and port are ever printed). */
  readonly url: string
  /** How long to keep retrying; 0 = one attempt. */
  readonly timeoutSeconds: number
  /** Told of each failed attempt that will be retried (one line, no secret). */
  readonly onRetry?: (message: string) => void
  /** First pause between attempts; doubles up to {@link maxDelayMs}. */
  readonly firstDelayMs?: number
  readonly maxDelayMs?: number
}

/** Pings the database until it answers, retrying connection failures with backoff; throws {@link DatabaseStartError}. */
export async function waitForDatabase(db: Pick<Database, 'ping'>, options: WaitOptions): Promise<void> {
  const started = Date.now()
  const deadline = started + options.timeoutSeconds * 1000
  let delay = options.firstDelayMs ?? 250
  const maxDelay = options.maxDelayMs ?? 5000
  let attempts = 0
  for (;;) {
    attempts++
    try {
      await db.ping()
      return
    } catch (error) {
      const where = serverAddress(options.url)
      if (!isDatabaseUnavailable(error)) {
        // Reached, but refused: wrong password, unknown database or role. Retrying would not help.
        throw new DatabaseStartError(
          `DATABASE_URL: the database server at ${where} refused the connection: ${firstLine(error)}`,
        )
      }
      const reason = errorCode(error)
      const left = deadline - Date.now()
      if (left <= 0) {
        const tried =
          attempts > 1 ? ` after ${attempts} attempts in ${((Date.now() - started) / 1000).toFixed(1)} s` : ''
        throw new DatabaseStartError(`DATABASE_URL: cannot reach the database server at ${where} (${reason})${tried}`)
      }
      const pause = Math.min(delay, left)
      options.onRetry?.(
        `DATABASE_URL: cannot reach the database server at ${where} (${reason}); retrying in ${(pause / 1000).toFixed(1)} s (up to ${options.timeoutSeconds} s, DATABASE_START_TIMEOUT_SECONDS)`,
      )
      await new Promise((resolve) => setTimeout(resolve, pause))
      delay = Math.min(delay * 2, maxDelay)
    }
  }
}

/** `host:port` of a connection string, or the unix socket it names; never its user or password. */
export function serverAddress(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'an address that is not a valid URL'
  }
  const host = parsed.searchParams.get('host') || decodeURIComponent(parsed.hostname) || 'localhost'
  const port = parsed.searchParams.get('port') || parsed.port || '5432'
  if (host.startsWith('/')) return `the unix socket ${host}/.s.PGSQL.${port}`
  return `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`
}

function errorCode(error: unknown): string {
  const code = (error as { code?: unknown }).code
  if (typeof code === 'string' && code !== '') return code
  const message = firstLine(error)
  if (/timeout/i.test(message)) return 'no answer within the connect timeout'
  return message
}

function firstLine(error: unknown): string {
  const message = String((error as { message?: unknown }).message ?? error)
  // A driver's message names users and hosts, never passwords; strip a URL's password anyway, to be sure.
  return (message.split('\n')[0] ?? '').replace(/(:\/\/[^/:@\s]*:)[^@\s]*@/g, '$1***@')
}
