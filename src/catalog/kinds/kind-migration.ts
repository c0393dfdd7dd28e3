import { pathToFileURL } from 'node:url'
import type { Kind } from './kind.js'
import { addKindSql } from './kind-schema.js'
import { kinds } from './kinds.js'

/*
 * A new kind's migration, printed from its descriptor: `npx tsx src/catalog/kinds/kind-migration.ts <path>` writes the
 * module to standard output. The statements are written out, not built at run time, so the migration stays what
 * it released when the descriptor changes later (docs/architecture.md, "Adding a kind").
 */

/** The source of a migration module that adds `kind` to a database holding the shared tables. */
export function kindMigrationSource(kind: Kind): string {
  const literals = addKindSql(kind).map((statement) => {
    if (statement.includes('`') || statement.includes('${')) throw new Error(`cannot quote: ${statement}`)
    return `  ${statement.includes('\\') ? 'String.raw' : ''}\`${statement}\`,`
  })
  return `import { type Kysely, sql } from 'kysely'

/**
 * The kind ${kind.path}: price list, nomenclature, matview and indexes, freshness and change-log triggers.
 *
 * Frozen: the statements are what its descriptor gave when this migration was released, written out.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db)
}

/** The kinds (their paths) whose tables and matview this migration created. */
export const kindPaths: readonly string[] = ['${kind.path}']

const statements: readonly string[] = [
${literals.join('\n')}
]
`
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const kind = kinds.find((candidate) => candidate.path === process.argv[2])
  if (!kind) {
    process.stderr.write(`usage: kind-migration.ts <path>, one of: ${kinds.map((k) => k.path).join(', ')}\n`)
    process.exit(2)
  }
  process.stdout.write(kindMigrationSource(kind))
}
