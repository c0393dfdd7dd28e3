import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import { pathOf } from './problem.js'

/* The routes of the application: behind 405's `Allow`, OPTIONS, and the tests that walk every route. */

/** A route as registered: its method, URL pattern and options (schema, config). */
export interface KnownRoute {
  readonly method: string
  readonly url: string
  readonly options: {
    readonly schema?: Record<string, unknown> | undefined
    readonly config?: FastifyContextConfig | undefined
  }
}

/** The order methods are listed in `Allow`. */
const methodOrder = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']

/**
 * Every route of the application (registered after {@link registerRouteTable}), and which methods a concrete path
 * has, asked of Fastify's own router. Catch-all `*` routes (the CORS preflight) match every path, so they are
 * listed but do not make a path known.
 */
class RouteTable {
  readonly routes: KnownRoute[] = []
  /** The methods with a route other than `*`. */
  private readonly methods = new Set<string>()
  /** The methods with a `*` route, whose match of a whole path means nothing. */
  private readonly catchAll = new Set<string>()
  private readonly seen = new Set<string>()

  constructor(private readonly app: FastifyInstance) {}

  add(method: string | string[], url: string, options: KnownRoute['options']): void {
    for (const one of Array.isArray(method) ? method : [method]) {
      const key = `${one} ${url}`
      if (this.seen.has(key)) continue
      this.seen.add(key)
      this.routes.push({ method: one, url, options })
      if (url === '*' || url === '/*') this.catchAll.add(one)
      else this.methods.add(one)
    }
  }

  /** The methods the path answers (HEAD wherever GET is, and OPTIONS); empty for an unknown path. */
  methodsFor(url: string): string[] {
    const path = pathOf(url)
    const found = new Set<string>()
    for (const method of this.methods) {
      const match = this.app.findRoute({ method, url: path })
      if (!match || hasEmptyParameter(match.params)) continue
      if (this.catchAll.has(method) && isWholePath(match.params, path)) continue
      found.add(method)
    }
    if (found.size === 0) return []
    if (found.has('GET')) found.add('HEAD')
    found.add('OPTIONS')
    return [...found].sort((a, b) => rank(a) - rank(b))
  }
}

/** Whether a path parameter matched an empty segment (the catch-all `*` aside). */
export function hasEmptyParameter(params: unknown): boolean {
  if (params === null || typeof params !== 'object') return false
  return Object.entries(params).some(([name, value]) => name !== '*' && value === '')
}

/** Whether the parameters are those of a `*` route matching the whole path. */
function isWholePath(params: unknown, path: string): boolean {
  if (params === null || typeof params !== 'object') return false
  const entries = Object.entries(params)
  return entries.length === 1 && entries[0]?.[0] === '*' && entries[0][1] === path.slice(1)
}

function rank(method: string): number {
  const index = methodOrder.indexOf(method)
  return index === -1 ? methodOrder.length : index
}

const routeTables = new WeakMap<FastifyInstance, RouteTable>()

/** Starts the route table of an app: every route registered after this call is added to it. */
export function registerRouteTable(app: FastifyInstance): RouteTable {
  const routes = new RouteTable(app)
  routeTables.set(app, routes)
  app.addHook('onRoute', (route) => {
    routes.add(route.method, route.url, { schema: route.schema && { ...route.schema }, config: route.config })
  })
  return routes
}

/** Every route of an app built with {@link registerRouteTable}: method, URL pattern, schema and config. */
export function routesOf(app: FastifyInstance): readonly KnownRoute[] {
  return routeTables.get(app)?.routes ?? []
}
