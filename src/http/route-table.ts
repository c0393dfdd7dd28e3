import type { FastifyContextConfig, FastifyInstance } from 'fastify'
import FindMyWay, { type HTTPMethod } from 'find-my-way'
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
 * Every route of the application (registered after {@link registerRouteTable}), and a router of their patterns
 * that tells which methods a concrete path has. Catch-all `*` routes (the CORS preflight) match every path, so
 * they are listed but do not make a path known.
 */
class RouteTable {
  readonly routes: KnownRoute[] = []
  private readonly router = FindMyWay({ ignoreTrailingSlash: false })
  private readonly methods = new Set<string>()
  private readonly seen = new Set<string>()

  add(method: string | string[], url: string, options: KnownRoute['options']): void {
    for (const one of Array.isArray(method) ? method : [method]) {
      const key = `${one} ${url}`
      if (this.seen.has(key)) continue
      this.seen.add(key)
      this.routes.push({ method: one, url, options })
      if (url === '*') continue
      this.router.on(one as HTTPMethod, url, () => {})
      this.methods.add(one)
    }
  }

  /** The methods the path answers (HEAD wherever GET is, and OPTIONS); empty for an unknown path. */
  methodsFor(url: string): string[] {
    const path = pathOf(url)
    const found = new Set<string>()
    for (const method of this.methods) {
      const match = this.router.find(method as HTTPMethod, path)
      if (match && !hasEmptyParameter(match.params)) found.add(method)
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

function rank(method: string): number {
  const index = methodOrder.indexOf(method)
  return index === -1 ? methodOrder.length : index
}

const routeTables = new WeakMap<FastifyInstance, RouteTable>()

/** Starts the route table of an app: every route registered after this call is added to it. */
export function registerRouteTable(app: FastifyInstance): RouteTable {
  const routes = new RouteTable()
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
