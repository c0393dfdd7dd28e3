import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import ts from 'typescript'

/*
 * The layers of src/, kept by reading every production module's imports (TypeScript's own pre-processor, so type
 * imports count too):
 *   domain/   the values every layer shares (text of keys, money, limits): imports nothing else of src/;
 *   db/, http/  infrastructure: import no feature folder and not the entry points;
 *   features (catalog/, glass-prices/, transfer/, demo/): import neither the entry points nor each other in a circle
 *     (a type-only import, erased at build, may close one: the search index answers the glass price listing);
 *   app.ts, server.ts, cli.ts: the entry points, which compose all of it.
 */

const sourceRoot = new URL('.', import.meta.url).pathname
const features = ['catalog', 'glass-prices', 'transfer', 'demo']
const entryPoints = ['app.ts', 'server.ts', 'cli.ts']

function productionModules(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) return productionModules(path)
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : []
  })
}

/** A module's imports (and re-exports) of other modules, by specifier; `typeOnly` when erased at build. */
function importsOf(path: string): { specifier: string; typeOnly: boolean }[] {
  const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest, false)
  const found: { specifier: string; typeOnly: boolean }[] = []
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
      const clause = statement.importClause
      const named = clause?.namedBindings
      const everyNameTyped =
        named !== undefined && ts.isNamedImports(named) && named.elements.every((element) => element.isTypeOnly)
      const typeOnly = clause !== undefined && (clause.isTypeOnly || (clause.name === undefined && everyNameTyped))
      found.push({ specifier: statement.moduleSpecifier.text, typeOnly })
    } else if (
      ts.isExportDeclaration(statement) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      found.push({ specifier: statement.moduleSpecifier.text, typeOnly: statement.isTypeOnly })
    }
  }
  return found
}

interface Edge {
  /** The imported module, relative to src/ (`catalog/kinds.ts`). */
  readonly to: string
  readonly typeOnly: boolean
}

/** Every module's imports of other modules of src/, keyed by its path relative to src/. */
function importGraph(): Map<string, Edge[]> {
  const graph = new Map<string, Edge[]>()
  for (const path of productionModules(sourceRoot)) {
    const edges = importsOf(path)
      .filter(({ specifier }) => specifier.startsWith('.'))
      .map(({ specifier, typeOnly }) => ({
        to: relative(sourceRoot, resolve(dirname(path), specifier.replace(/\.js$/, '.ts'))),
        typeOnly,
      }))
      .filter((edge) => !edge.to.startsWith('..'))
    graph.set(relative(sourceRoot, path), edges)
  }
  return graph
}

/** The layer of a module: its top folder under src/, or the file itself at the top. */
const layerOf = (module: string) => module.split('/')[0] ?? module

/** Every import that breaks the rules above, as `from → to (why)`. */
function layerViolations(graph: Map<string, readonly Edge[]>): string[] {
  const violations: string[] = []
  const allowed: Record<string, (target: string) => boolean> = {
    domain: (target) => target === 'domain',
    db: (target) => target === 'domain' || target === 'db',
    http: (target) => target === 'domain' || target === 'db' || target === 'http' || target === 'config.ts',
  }
  const folderEdges = new Map<string, Set<string>>()
  for (const [from, edges] of graph) {
    const source = layerOf(from)
    for (const { to, typeOnly } of edges) {
      const target = layerOf(to)
      const rule = allowed[source]
      if (rule && !rule(target)) violations.push(`${from} → ${to} (${source}/ imports no ${target})`)
      if (features.includes(source) && entryPoints.includes(target)) {
        violations.push(`${from} → ${to} (a feature imports no entry point)`)
      }
      if (!typeOnly && features.includes(source) && features.includes(target) && source !== target) {
        const edges = folderEdges.get(source) ?? new Set<string>()
        edges.add(target)
        folderEdges.set(source, edges)
      }
    }
  }
  // A circle between feature folders: a folder that reaches itself through the others.
  for (const start of features) {
    const seen = new Set<string>()
    const walk = (folder: string, path: string[]): void => {
      for (const next of folderEdges.get(folder) ?? []) {
        if (next === start) violations.push(`${[...path, next].join(' → ')} (feature folders import each other)`)
        else if (!seen.has(next)) {
          seen.add(next)
          walk(next, [...path, next])
        }
      }
    }
    walk(start, [start])
  }
  return violations
}

test('no import runs up the layers and no feature folders import each other in a circle', () => {
  const graph = importGraph()
  assert.ok(graph.size > 50 && graph.has('app.ts'), 'reads the modules of src/')
  assert.deepEqual(layerViolations(graph), [])
})

test('the layer check names an import from http/ to a feature folder and a circle of feature folders', () => {
  const value = (to: string): Edge => ({ to, typeOnly: false })
  const graph = new Map([
    ['http/metrics.ts', [value('catalog/catalog-state.ts')]],
    ['catalog/demo.ts', [value('transfer/copy-text.ts')]],
    ['catalog/search.ts', [{ to: 'glass-prices/schemas.ts', typeOnly: true }]],
    ['glass-prices/routes.ts', [value('catalog/kinds.ts')]],
    ['transfer/import.ts', [value('catalog/kinds.ts'), value('app.ts')]],
  ])
  assert.deepEqual(layerViolations(graph), [
    'http/metrics.ts → catalog/catalog-state.ts (http/ imports no catalog)',
    'transfer/import.ts → app.ts (a feature imports no entry point)',
    'catalog → transfer → catalog (feature folders import each other)',
    'transfer → catalog → transfer (feature folders import each other)',
  ])
})
