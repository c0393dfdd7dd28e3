import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { test } from 'node:test'
import ts from 'typescript'

/*
 * The layers of src/, kept by reading every production module's imports (TypeScript's own pre-processor, so type
 * imports count too):
 *   domain/   the values every layer shares (text of keys, money, limits): imports nothing else of src/;
 *   db/, http/, paged-reads/  infrastructure (in that order): import no feature folder and not the entry points;
 *   features (catalog/, glass-prices/, transfer/, demo/): import neither the entry points nor each other in a circle
 *     (a type-only import, erased at build, may close one: the search index answers the glass price listing);
 *   app.ts, server.ts, cli.ts: the entry points, which compose all of it.
 * Inside catalog/, its rooms, each importing only those before it (type-only imports too), and no module on its floor:
 *   kinds/ ← freshness/ ← search/ ← search-index/.
 * And across src/, no module reaches itself through others (value imports; type-only ones are erased at build).
 * And no production module of src/ or web/src is over MAX_LINES lines (the generated wire types aside).
 *
 * And the layers of the web app (web/src/), where every import counts, type-only ones too (no module of the page
 * reaches itself through others):
 *   api/      the service's wire types, generated from its OpenAPI document: imports nothing else of the page;
 *   shared    api.ts, i18n/, storage.ts, session.ts, pager.tsx: import only each other and api/;
 *   features  auth/, search/, desk/: import no entry point (and no folder circle forms among them);
 *   app.tsx, main.tsx: the entry points;
 *   and of src/ only domain/, the values the service and the page share (its tests may read more).
 */

const sourceRoot = new URL('.', import.meta.url).pathname
const features = ['catalog', 'glass-prices', 'transfer', 'demo']
/** The rooms of catalog/, each importing only the rooms before it. */
const catalogRooms = ['kinds', 'freshness', 'search', 'search-index']
const entryPoints = ['app.ts', 'server.ts', 'cli.ts']

const isProductionModule = (name: string) =>
  /\.tsx?$/.test(name) && !name.endsWith('.test.ts') && !name.endsWith('.test.tsx')

function productionModules(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name)
    if (entry.isDirectory()) return productionModules(path)
    return isProductionModule(entry.name) ? [path] : []
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
  /** The imported module, relative to src/ (`catalog/kinds/kinds.ts`). */
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

/** The room of a module of catalog/: its place in {@link catalogRooms}, or -1 for none. */
const roomOf = (module: string) => catalogRooms.indexOf(module.split('/')[1] ?? '')

/** Every import that breaks the rules above, as `from → to (why)`. */
function layerViolations(graph: Map<string, readonly Edge[]>): string[] {
  const violations: string[] = []
  const allowed: Record<string, (target: string) => boolean> = {
    domain: (target) => target === 'domain',
    db: (target) => target === 'domain' || target === 'db',
    http: (target) => target === 'domain' || target === 'db' || target === 'http' || target === 'config.ts',
    'paged-reads': (target) => ['domain', 'db', 'http', 'paged-reads'].includes(target),
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
      if (source === 'catalog' && target === 'catalog') {
        const [fromRoom, toRoom] = [roomOf(from), roomOf(to)]
        if (toRoom > fromRoom) violations.push(`${from} → ${to} (a catalog room imports no room after it)`)
      }
      if (!typeOnly && features.includes(source) && features.includes(target) && source !== target) {
        const edges = folderEdges.get(source) ?? new Set<string>()
        edges.add(target)
        folderEdges.set(source, edges)
      }
    }
  }
  for (const module of graph.keys()) {
    if (layerOf(module) === 'catalog' && roomOf(module) < 0) violations.push(`${module} (in no room of catalog/)`)
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

const webRoot = resolve(sourceRoot, '../web/src')
const webShared = ['api.ts', 'i18n', 'storage.ts', 'session.ts', 'pager.tsx']
const webFeatures = ['auth', 'search', 'desk']
const webEntryPoints = ['app.tsx', 'main.tsx']

/** The module a relative specifier of a web module names: `.js` read as the `.ts`, `.tsx` or `.d.ts` beside it. */
function webTarget(from: string, specifier: string): string {
  const path = resolve(dirname(from), specifier)
  const bare = path.replace(/\.js$/, '')
  const found = [`${bare}.ts`, `${bare}.tsx`, `${bare}.d.ts`].find((candidate) => existsSync(candidate)) ?? path
  return found.startsWith(webRoot) ? relative(webRoot, found) : `src:${relative(sourceRoot, found)}`
}

/** Every web module's imports of other modules (style sheets aside), keyed by its path relative to web/src/. */
function webImportGraph(): Map<string, Edge[]> {
  const graph = new Map<string, Edge[]>()
  for (const path of productionModules(webRoot).filter((module) => !module.endsWith('.d.ts'))) {
    const edges = importsOf(path)
      .filter(({ specifier }) => specifier.startsWith('.') && !specifier.endsWith('.css'))
      .map(({ specifier, typeOnly }) => ({ to: webTarget(path, specifier), typeOnly }))
    graph.set(relative(webRoot, path), edges)
  }
  return graph
}

/** The circles of a graph: each set of two or more modules that reach each other (Tarjan's components). */
function circles(graph: ReadonlyMap<string, readonly Edge[]>): string[][] {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const found: string[][] = []
  const visit = (module: string): void => {
    index.set(module, index.size)
    low.set(module, index.get(module) ?? 0)
    stack.push(module)
    onStack.add(module)
    for (const { to } of graph.get(module) ?? []) {
      if (!graph.has(to)) continue
      if (!index.has(to)) {
        visit(to)
        low.set(module, Math.min(low.get(module) ?? 0, low.get(to) ?? 0))
      } else if (onStack.has(to)) low.set(module, Math.min(low.get(module) ?? 0, index.get(to) ?? 0))
    }
    if (low.get(module) !== index.get(module)) return
    const component: string[] = []
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member)
      component.push(member)
      if (member === module) break
    }
    if (component.length > 1) found.push(component.sort())
  }
  for (const module of [...graph.keys()].sort()) if (!index.has(module)) visit(module)
  return found
}

/** Every import of the web app that breaks its rules above, as `from → to (why)`, and every circle. */
function webLayerViolations(graph: ReadonlyMap<string, readonly Edge[]>): string[] {
  const violations: string[] = []
  const layerKind = (module: string) => {
    const layer = layerOf(module)
    if (layer === 'api') return 'api'
    if (webShared.includes(layer)) return 'shared'
    if (webFeatures.includes(layer)) return 'feature'
    if (webEntryPoints.includes(layer)) return 'entry'
    return undefined
  }
  for (const [from, edges] of graph) {
    const kind = layerKind(from)
    if (kind === undefined) violations.push(`${from} (in no layer of web/src)`)
    for (const { to } of edges) {
      if (to.startsWith('src:')) {
        if (!to.startsWith('src:domain/')) violations.push(`${from} → ${to} (the page imports only src/domain)`)
        continue
      }
      const target = layerKind(to)
      const allowed =
        kind === 'api'
          ? target === 'api'
          : kind === 'shared'
            ? target === 'api' || target === 'shared'
            : kind === 'feature'
              ? target !== 'entry'
              : true
      if (!allowed) violations.push(`${from} → ${to} (${kind} imports no ${target ?? 'module of no layer'})`)
    }
  }
  for (const circle of circles(graph)) violations.push(`${circle.join(' ↔ ')} (an import circle)`)
  return violations
}

/** The circles of value imports among the modules of src/ (type-only imports are erased at build). */
function valueCircles(graph: ReadonlyMap<string, readonly Edge[]>): string[] {
  const values = new Map([...graph].map(([from, edges]) => [from, edges.filter((edge) => !edge.typeOnly)]))
  return circles(values).map((circle) => `${circle.join(' ↔ ')} (an import circle)`)
}

/** The most lines a production module may have: past it, a module holds more than one job. */
const MAX_LINES = 600

/** Every production module of src/ and web/src (the generated wire types aside) over MAX_LINES lines, by path. */
function oversizedModules(): string[] {
  const projectRoot = resolve(sourceRoot, '..')
  return [...productionModules(sourceRoot), ...productionModules(webRoot)]
    .map((path) => relative(projectRoot, path))
    .filter((path) => path !== 'web/src/api/schema.d.ts')
    .filter((path) => readFileSync(resolve(projectRoot, path), 'utf8').split('\n').length - 1 > MAX_LINES)
    .sort()
}

test('no import runs up the layers and no feature folders import each other in a circle', () => {
  const graph = importGraph()
  assert.ok(graph.size > 50 && graph.has('app.ts'), 'reads the modules of src/')
  assert.deepEqual(layerViolations(graph), [])
})

test('no modules of src/ import each other in a circle', () => {
  assert.deepEqual(valueCircles(importGraph()), [])
})

test(`no production module is over ${MAX_LINES} lines`, () => {
  assert.deepEqual(oversizedModules(), [])
})

test('no import of the web app runs up its layers or closes a circle', () => {
  const graph = webImportGraph()
  assert.ok(
    graph.size > 30 && graph.has('app.tsx') && graph.has('desk/price-list.tsx'),
    'reads the modules of web/src/',
  )
  assert.deepEqual(webLayerViolations(graph), [])
})

test('the web layer check names an upward import, a server module and a circle through a type import', () => {
  const value = (to: string): Edge => ({ to, typeOnly: false })
  const graph = new Map([
    ['pager.tsx', [{ to: 'app.tsx', typeOnly: true }]],
    ['app.tsx', [value('pager.tsx'), value('desk/price-list.tsx')]],
    ['desk/price-list.tsx', [value('pager.tsx'), value('src:http/auth.ts'), value('src:domain/roundings.ts')]],
    ['api/types.ts', [value('i18n/index.ts')]],
    ['i18n/index.ts', []],
  ])
  assert.deepEqual(webLayerViolations(graph), [
    'pager.tsx → app.tsx (shared imports no entry)',
    'desk/price-list.tsx → src:http/auth.ts (the page imports only src/domain)',
    'api/types.ts → i18n/index.ts (api imports no shared)',
    'app.tsx ↔ desk/price-list.tsx ↔ pager.tsx (an import circle)',
  ])
})

test('the layer check names an upward import between layers and catalog rooms, a circle of feature folders', () => {
  const value = (to: string): Edge => ({ to, typeOnly: false })
  const graph = new Map([
    ['http/metrics.ts', [value('catalog/freshness/catalog-state.ts')]],
    ['paged-reads/counted-page.ts', [value('catalog/search/search-query.ts')]],
    ['catalog/kinds/demo.ts', [value('transfer/copy-text.ts')]],
    ['catalog/kinds/kinds.ts', [{ to: 'catalog/search/search-query.ts', typeOnly: true }]],
    ['catalog/search/search.ts', [{ to: 'glass-prices/schemas.ts', typeOnly: true }, value('catalog/kinds/kinds.ts')]],
    ['catalog/facets.ts', []],
    ['glass-prices/routes.ts', [value('catalog/kinds/kinds.ts')]],
    ['transfer/import.ts', [value('catalog/kinds/kinds.ts'), value('app.ts')]],
  ])
  assert.deepEqual(layerViolations(graph), [
    'http/metrics.ts → catalog/freshness/catalog-state.ts (http/ imports no catalog)',
    'paged-reads/counted-page.ts → catalog/search/search-query.ts (paged-reads/ imports no catalog)',
    'catalog/kinds/kinds.ts → catalog/search/search-query.ts (a catalog room imports no room after it)',
    'transfer/import.ts → app.ts (a feature imports no entry point)',
    'catalog/facets.ts (in no room of catalog/)',
    'catalog → transfer → catalog (feature folders import each other)',
    'transfer → catalog → transfer (feature folders import each other)',
  ])
})

test('the circle check names modules that import each other, not through an import erased at build', () => {
  const value = (to: string): Edge => ({ to, typeOnly: false })
  const graph = new Map([
    ['catalog/search/facets.ts', [value('catalog/search-index/service-types.ts')]],
    ['catalog/search-index/service-types.ts', [{ to: 'catalog/search/facets.ts', typeOnly: true }]],
    ['glass-prices/filter.ts', [value('glass-prices/schemas.ts')]],
    ['glass-prices/schemas.ts', [value('glass-prices/routes.ts')]],
    ['glass-prices/routes.ts', [value('glass-prices/filter.ts')]],
  ])
  assert.deepEqual(valueCircles(graph), [
    'glass-prices/filter.ts ↔ glass-prices/routes.ts ↔ glass-prices/schemas.ts (an import circle)',
  ])
})
