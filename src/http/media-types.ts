import type { FastifyRequest } from 'fastify'
import { type Message, message } from '../domain/messages.js'

/* The media types a route's body may have, and the words of a 415 that names them. */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The media types the route's body may have, when not JSON (the route adds their parsers). */
    bodyTypes?: readonly string[]
  }
}

/** The body media types a route reads: its own, else JSON. */
export function bodyTypesOf(request: FastifyRequest): readonly string[] {
  return request.routeOptions.config?.bodyTypes ?? ['application/json']
}

/** Why a body's media type is refused, naming what the route reads. */
export function mediaTypeDetail(request: FastifyRequest): Message {
  const given = request.headers['content-type']
  const wanted = bodyTypesOf(request).join(' or ')
  return given
    ? message('request.mediaType', { given: given.split(';')[0]?.trim() ?? '', wanted })
    : message('request.noMediaType', { wanted })
}
