import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { test } from 'node:test'
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler } from 'kysely'
import type { Kind } from '../kinds/kind.js'
import { kinds } from '../kinds/kinds.js'
import { buildSearchQuery } from './search-query.js'

/*
 * The SQL of every kind's search, checked in beside this file, so a change of a query shows in review.
 * After an intended change: UPDATE_SNAPSHOTS=1 npm test -- search-sql
 */

const snapshotFile = new URL('./search-sql.snapshot.sql', import.meta.url)

const compiler = new Kysely<any>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new PostgresIntrospector(db),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
})

/** Every filter of the kind set, so every condition appears once. */
function everyFilter(kind: Kind): Record<string, string> {
  return Object.fromEntries(kind.filters.map((filter) => [filter.name, filter.match === 'substring' ? 'x' : '1']))
}

function renderSnapshot(): string {
  const sections: string[] = []
  for (const kind of kinds) {
    for (const byPriceList of [false, true]) {
      for (const filters of [{}, everyFilter(kind)]) {
        const queries = buildSearchQuery(compiler, kind, {
          byPriceList,
          filters,
          page: { page: 1, size: 10, sort: [] },
        })
        const label = `${kind.path}, ${byPriceList ? 'price list' : 'matview'}, ${Object.keys(filters).length > 0 ? 'every filter' : 'no filter'}`
        sections.push(`-- ${label}: page\n${queries.page.compile().sql};\n`)
        sections.push(`-- ${label}: count\n${queries.count.compile().sql};\n`)
      }
    }
  }
  return sections.join('\n')
}

test('the generated SQL of every kind and mode matches the checked-in snapshot', () => {
  const actual = renderSnapshot()
  if (process.env.UPDATE_SNAPSHOTS) writeFileSync(snapshotFile, actual)
  assert.equal(actual, readFileSync(snapshotFile, 'utf8'))
})
