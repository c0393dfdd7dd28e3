import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type Kysely, type Migration, sql } from 'kysely'
import { eachDatabase, openFreshDatabase } from '../../../test/harness.js'
import { migrateToLatest } from '../../db/migrate.js'
import { migrations } from '../../db/migrations/index.js'
import type { Kind } from './kind.js'
import { kindMigrationSource } from './kind-migration.js'
import { addKindSql, catalogStateSql, createKindSql, normFunctionSql, prescriptionIndexSql } from './kind-schema.js'
import { kinds } from './kinds.js'

/*
 * Released migrations are frozen (their statements written out), and the descriptors go on living: this test keeps
 * the two together. It builds a second database from the same migrations, except that the ones that created the
 * kinds' objects run the live builders of kind-schema.ts and catalog-state.ts instead of their frozen statements,
 * and a kind no migration creates yet is added at the end; then it compares the two catalogues. A descriptor
 * changed without a migration that brings the database to it fails here, naming the object that differs.
 */

/** The migrations a database would need if the descriptors were released as they are now. */
function describedMigrations(): Record<string, Migration> {
  const byPath = new Map(kinds.map((kind) => [kind.path, kind]))
  const live = (statements: () => string[]): Migration => ({
    async up(db: Kysely<unknown>) {
      for (const statement of statements()) await sql.raw(statement).execute(db)
    },
  })
  const created = new Set<string>()
  const kindsOf = (migration: Migration): Kind[] => {
    const paths = (migration as { kindPaths?: readonly string[] }).kindPaths ?? []
    for (const path of paths) created.add(path)
    return paths.flatMap((path) => byPath.get(path) ?? [])
  }
  const first = kindsOf(migrations['0001-catalog']!)
  const registry: Record<string, Migration> = {}
  for (const [name, migration] of Object.entries(migrations)) {
    if (name === '0001-catalog') {
      registry[name] = live(() => [
        'CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public',
        normFunctionSql,
        ...first.flatMap(createKindSql),
      ])
    } else if (name === '0003-catalog-state') {
      registry[name] = live(() => catalogStateSql(first))
    } else if (name === '0005-prescription-indexes') {
      registry[name] = live(() => first.flatMap(prescriptionIndexSql))
    } else {
      const added = kindsOf(migration)
      registry[name] = added.length > 0 ? live(() => added.flatMap(addKindSql)) : migration
    }
  }
  const unreleased = kinds.filter((kind) => !created.has(kind.path))
  if (unreleased.length > 0) registry['9999-unreleased-kinds'] = live(() => unreleased.flatMap(addKindSql))
  return registry
}

/** The schema's objects by name (`index lenses_mv_key`) → their definition, as PostgreSQL prints it. */
async function describeSchema(db: Kysely<any>): Promise<Map<string, string>> {
  const objects = new Map<string, string>()
  const { rows: schemas } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db)
  const schema = schemas[0]!.schema
  // Definitions name the schema (`ON test_x.lenses_mv`, `SET search_path TO 'test_x'`); two databases compare
  // without it.
  const unqualified = (text: string) => (schema === 'public' ? text : text.split(schema).join('<schema>'))
  const read = async (kind: string, query: ReturnType<typeof sql<{ name: string; definition: string }>>) => {
    for (const row of (await query.execute(db)).rows) objects.set(`${kind} ${row.name}`, unqualified(row.definition))
  }
  await read(
    'column',
    sql`SELECT c.relname || '.' || a.attname AS name,
        concat_ws(' ', '#' || row_number() OVER (PARTITION BY c.oid ORDER BY a.attnum),
          format_type(a.atttypid, a.atttypmod), CASE WHEN a.attnotnull THEN 'NOT NULL' END,
          CASE WHEN a.attidentity <> '' THEN 'IDENTITY ' || a.attidentity::text END,
          'DEFAULT ' || pg_get_expr(d.adbin, d.adrelid)) AS definition
      FROM pg_attribute a
      JOIN pg_class c ON c.oid = a.attrelid
      LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'm', 'v', 'p')
        AND a.attnum > 0 AND NOT a.attisdropped`,
  )
  await read(
    'constraint',
    sql`SELECT c.relname || '.' || k.conname AS name, pg_get_constraintdef(k.oid) AS definition
      FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid
      WHERE c.relnamespace = current_schema()::regnamespace`,
  )
  // Storage parameters (a price table's fillfactor, migration 0016) shape how its writes go.
  await read(
    'storage',
    sql`SELECT c.relname AS name, array_to_string(c.reloptions, ',') AS definition
      FROM pg_class c
      WHERE c.relnamespace = current_schema()::regnamespace AND c.reloptions IS NOT NULL`,
  )
  await read(
    'index',
    sql`SELECT indexname AS name, indexdef AS definition FROM pg_indexes WHERE schemaname = current_schema()`,
  )
  await read(
    'matview',
    sql`SELECT matviewname AS name, definition FROM pg_matviews WHERE schemaname = current_schema()`,
  )
  await read(
    'function',
    sql`SELECT p.oid::regprocedure::text AS name, pg_get_functiondef(p.oid) AS definition
      FROM pg_proc p
      WHERE p.pronamespace = current_schema()::regnamespace
        AND NOT EXISTS (SELECT 1 FROM pg_depend e WHERE e.objid = p.oid AND e.deptype = 'e')`,
  )
  await read(
    'trigger',
    sql`SELECT t.tgname AS name, pg_get_triggerdef(t.oid) AS definition
      FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
      WHERE c.relnamespace = current_schema()::regnamespace AND NOT t.tgisinternal`,
  )
  await read('catalog_state row', sql`SELECT kind AS name, '' AS definition FROM catalog_state`)
  return objects
}

/** One line per object the two schemas do not share as they are. */
function differences(migrated: Map<string, string>, described: Map<string, string>): string[] {
  const lines: string[] = []
  for (const [name, definition] of described) {
    const actual = migrated.get(name)
    if (actual === undefined)
      lines.push(`${name}: described by the descriptors, created by no migration: ${definition}`)
    else if (actual !== definition)
      lines.push(`${name}: the migrations give\n    ${actual}\n  the descriptors describe\n    ${definition}`)
  }
  for (const [name, definition] of migrated) {
    if (!described.has(name))
      lines.push(`${name}: created by the migrations, described by no descriptor: ${definition}`)
  }
  return lines.sort()
}

eachDatabase('schema drift', (ctx) => {
  test('a freshly migrated database is exactly what the current descriptors describe', async () => {
    const reference = await openFreshDatabase(ctx.target, (db) => migrateToLatest(db, describedMigrations()))
    try {
      const [migrated, described] = [await describeSchema(ctx.db.primary), await describeSchema(reference.db.primary)]
      assert.ok(described.has('matview lenses_mv') && described.has('function optics_norm(text)'), 'compares the kinds')
      const found = differences(migrated, described)
      assert.equal(
        found.length,
        0,
        `A descriptor changed without a migration (docs/architecture.md, "Adding a kind"):\n${found.join('\n')}`,
      )
    } finally {
      await reference.cleanup()
    }
  })
})

test('a kind migration, as printed, writes out every statement the live builders give and names its kind', () => {
  for (const kind of kinds) {
    const source = kindMigrationSource(kind)
    assert.match(source, new RegExp(`export const kindPaths: readonly string\\[\\] = \\['${kind.path}'\\]`))
    for (const statement of addKindSql(kind)) assert.ok(source.includes(`\`${statement}\``), statement)
  }
})
