import assert from 'node:assert/strict'
import { test } from 'node:test'
import { DatabaseStartError, serverAddress, waitForDatabase } from './wait-for-database.js'

/* The start's wait for the database server: retried while it cannot be reached, then named without secrets. */

const refused = () => Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:5433'), { code: 'ECONNREFUSED' })

test('a server that comes up during the wait is used: failed attempts are retried with backoff', async () => {
  let calls = 0
  const retries: string[] = []
  await waitForDatabase(
    {
      async ping() {
        calls++
        if (calls < 3) throw refused()
      },
    },
    { url: 'postgres://app:pw@10.0.0.5:5433/x', timeoutSeconds: 5, firstDelayMs: 10, onRetry: (m) => retries.push(m) },
  )
  assert.equal(calls, 3)
  assert.equal(retries.length, 2)
  assert.match(
    retries[0]!,
    /^DATABASE_URL: cannot reach the database server at 10\.0\.0\.5:5433 \(ECONNREFUSED\); retrying/,
  )
})

test('an authentication or unknown-database refusal is not retried', async () => {
  let calls = 0
  const failure = waitForDatabase(
    {
      async ping() {
        calls++
        throw Object.assign(new Error('password authentication failed for user "app"'), { code: '28P01' })
      },
    },
    { url: 'postgres://app:pw@db:5432/x', timeoutSeconds: 5, firstDelayMs: 10 },
  )
  await assert.rejects(failure, (error: Error) => {
    assert.ok(error instanceof DatabaseStartError)
    assert.equal(
      error.message,
      'DATABASE_URL: the database server at db:5432 refused the connection: password authentication failed for user "app"',
    )
    return true
  })
  assert.equal(calls, 1)
})

test('serverAddress names host and port or the unix socket, never credentials', () => {
  assert.equal(serverAddress('postgres://app:secret@db.internal/x'), 'db.internal:5432')
  assert.equal(
    serverAddress('postgres://root@%2Fvar%2Frun%2Fpostgresql/test'),
    'the unix socket /var/run/postgresql/.s.PGSQL.5432',
  )
  assert.equal(serverAddress('postgres://u:p@localhost/x?host=/tmp&port=6543'), 'the unix socket /tmp/.s.PGSQL.6543')
})
