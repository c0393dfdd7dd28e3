import assert from 'node:assert/strict'
import { test } from 'node:test'
import { PGlitePool } from './pglite-pool.js'
import { PGliteThread } from './pglite-thread.js'

/*
 * The embedded database's committed reads (pglite-pool.ts): a value kept as of the last committed write, which
 * readers get without waiting for a write that holds the one connection. The embedded database alone has them
 * (a server is written by other processes too), so this suite runs on it alone.
 */

async function counterPool() {
  const pglite = await PGliteThread.open({})
  await pglite.query('CREATE TABLE counter (n integer NOT NULL)')
  await pglite.query('INSERT INTO counter VALUES (0)')
  const pool = new PGlitePool(pglite)
  let reads = 0
  const committed = pool.committedRead(async (query) => {
    reads += 1
    const [row] = await query<{ n: number }>('SELECT n FROM counter')
    return row?.n
  })
  return { pglite, pool, committed, reads: () => reads }
}

const within = <T>(answer: Promise<T>, ms = 2_000) =>
  Promise.race([answer, new Promise<'waited'>((resolve) => setTimeout(() => resolve('waited'), ms).unref())])

test('a committed read answers while a write holds the connection, with the state before the write', async () => {
  const { pglite, pool, committed } = await counterPool()
  try {
    assert.equal(await committed.current(), 0)
    const writer = await pool.connect()
    await writer.query('BEGIN')
    await writer.query('UPDATE counter SET n = n + 1')
    assert.equal(await within(committed.current()), 0, 'answered at once, without what is not committed')
    await writer.query('COMMIT')
    writer.release()
    assert.equal(await committed.current(), 1, 'the first answer after the write ends shows it')
  } finally {
    await pool.end()
    await pglite.close()
  }
})

test('reads do not read it again; each write that ends does, once, on its own lending', async () => {
  const { pglite, pool, committed, reads } = await counterPool()
  try {
    await committed.current()
    const first = reads()
    for (let i = 0; i < 3; i++) {
      const reader = await pool.connect()
      await reader.query('SELECT n FROM counter')
      reader.release()
    }
    assert.equal(await committed.current(), 0)
    assert.equal(reads(), first, 'read lendings leave it as it is')

    const writer = await pool.connect()
    // Kysely reads the command and count of a write (its numAffectedRows) as pg gives them.
    const updated = await writer.query('UPDATE counter SET n = 41')
    assert.deepEqual([updated.command, updated.rowCount], ['UPDATE', 1])
    // A write statement that is not plain UPDATE/INSERT still counts: anything but a read may write.
    await writer.query('WITH bumped AS (UPDATE counter SET n = n + 1 RETURNING n) SELECT n FROM bumped')
    writer.release()
    // The caller may answer its client right after the release: the next reader must not get the old value.
    assert.equal(await committed.current(), 42)
    assert.equal(reads(), first + 1, 'read again once, as the write ended')
  } finally {
    await pool.end()
    await pglite.close()
  }
})

test('a write rolled back leaves the value as committed', async () => {
  const { pglite, pool, committed } = await counterPool()
  try {
    const writer = await pool.connect()
    await writer.query('BEGIN')
    await writer.query('UPDATE counter SET n = 7')
    await writer.query('ROLLBACK')
    writer.release()
    assert.equal(await committed.current(), 0)
  } finally {
    await pool.end()
    await pglite.close()
  }
})
