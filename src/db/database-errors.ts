/** PostgreSQL or driver errors meaning "the database is not reachable now". */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = String((error as { code?: unknown }).code ?? '')
  const message = String((error as { message?: unknown }).message ?? '')
  return (
    ['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH'].includes(code) ||
    code.startsWith('08') ||
    code === '57P01' ||
    code === '57P03' ||
    // statement_timeout: the database did not answer in time (a lock held too long, an overloaded server).
    code === '57014' ||
    /timeout exceeded when trying to connect|Connection terminated|connection is closed|Client has encountered a connection error/i.test(
      message,
    )
  )
}
