import type { FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller, set by the authentication hook; undefined when authentication is off. */
    principal?: { readonly name: string; readonly roles: readonly string[] }
  }
}

/** The name written as `user` on price changes: the authenticated principal, or `anonymous` without auth. */
export function principalName(request: FastifyRequest): string {
  return request.principal?.name ?? 'anonymous'
}
