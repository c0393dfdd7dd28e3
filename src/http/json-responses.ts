import type { FastifyInstance } from 'fastify'

/*
 * JSON answers carry `Content-Type: application/json` without a charset parameter, as Spring's Jackson converter
 * sends them (JSON is UTF-8 by definition, RFC 8259; the parameter means nothing to it). Fastify adds
 * `charset=utf-8` to the JSON it serialises; this removes it. Problem details keep their own type.
 */

const FASTIFY_JSON = /^application\/json;\s*charset=utf-8$/i

/** Registers the hook that answers JSON as `application/json`, no parameter. */
export function registerJsonContentType(app: FastifyInstance): void {
  app.addHook('onSend', async (_request, reply, payload) => {
    const type = reply.getHeader('content-type')
    if (typeof type === 'string' && FASTIFY_JSON.test(type)) reply.header('content-type', 'application/json')
    return payload
  })
}
