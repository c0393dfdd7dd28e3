import type { FastifyContextConfig, FastifyInstance, FastifySchema } from 'fastify'

/**
 * Documents on every route the problems answered before its handler runs (see {@link withEdgeProblems}). Register
 * before the routes (and before the route table, which keeps each route's schema as documented).
 */
export function documentEdgeProblems(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (route.schema) route.schema = withEdgeProblems(route.url, route.schema, route.config)
  })
}

/**
 * Adds to a route's documented responses the problems answered before its handler runs, so the OpenAPI document
 * shows them without every route listing them: on the API 401 (with authentication on) and 429 (with a rate
 * limit), 403 on its writes (the role), 401 and 403 on the log levels (always behind the role with authentication
 * on), and 413 and 415 wherever a body is read.
 */
function withEdgeProblems(url: string, schema: FastifySchema, config: FastifyContextConfig | undefined): FastifySchema {
  const statuses: number[] = []
  if (url.startsWith('/api/')) statuses.push(401, 429)
  if (url.startsWith('/api/') && (config?.writesCatalog || config?.readsPurchasePrices)) statuses.push(403)
  if (url.startsWith('/actuator/loggers')) statuses.push(401, 403)
  if (schema.body) statuses.push(413, 415)
  const response = { ...(schema.response as Record<string, unknown> | undefined) }
  let added = false
  for (const status of statuses) {
    if (response[status] === undefined) {
      response[status] = { $ref: 'Problem' }
      added = true
    }
  }
  return added ? { ...schema, response } : schema
}
