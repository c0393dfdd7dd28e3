import type { FastifyBaseLogger } from 'fastify'
import type { IndexClient, IndexDatabase } from './index-database.js'
import { compareCodePoints, normProbeCharacters, ProbedNorm } from './text.js'

/*
 * The probe of the database at the index's first load (search-index.ts explains why): whether it orders text in
 * byte order and lower-cases ASCII as JavaScript does, and which characters it normalises as the index would.
 */

/** Strings whose order the probe compares between the database and the index. */
const collationProbe = [
  'a',
  'B',
  'b',
  'A',
  '_',
  '-',
  ' ',
  'a b',
  'ab',
  'Ä',
  'ё',
  'Ж',
  'е',
  'z',
  '1',
  '10',
  '9',
  '\u{1F600}',
  '\uFF21',
]

/** `optics_norm` of the characters the database was seen to agree on, or undefined (logged) where the index cannot be used. */
export async function probeDatabase(
  db: Pick<IndexDatabase, 'rawTransaction'>,
  log: FastifyBaseLogger,
): Promise<ProbedNorm | undefined> {
  const characters = normProbeCharacters()
  const { rows, norms } = await db.rawTransaction(
    async (client: IndexClient) => ({
      rows: await client.query<{ ordered: string[] }>(
        'SELECT array_agg(value ORDER BY value) AS ordered FROM unnest($1::text[]) AS value',
        [collationProbe],
      ),
      norms: await client.query<{ norms: string[] }>(
        'SELECT array_agg(optics_norm(value) ORDER BY n) AS norms FROM unnest($1::text[]) WITH ORDINALITY AS t(value, n)',
        [characters],
      ),
    }),
    { read: true },
  )
  const expected = [...collationProbe].sort(compareCodePoints)
  const actual = rows[0]?.ordered ?? []
  const probed = new ProbedNorm(characters, norms[0]?.norms ?? [])
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    log.warn(
      'search index off: the database does not order text in byte order (collation C or C.UTF-8); searches use SQL',
    )
    return undefined
  }
  if (!probed.asciiAgrees) {
    log.warn('search index off: the database does not lower-case ASCII letters as expected; searches use SQL')
    return undefined
  }
  return probed
}
