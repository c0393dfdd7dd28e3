import { STATUS_CODES } from 'node:http'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import packageJson from '../../package.json' with { type: 'json' }
import { needsToken, READ_ROLE, WRITE_ROLE } from './auth.js'
import { ProblemSchema } from './schemas.js'

/*
 * The OpenAPI 3.1 document is generated from the route schemas (never hand-written): @fastify/swagger collects
 * every route registered after it. Shared schemas (`app.addSchema`, e.g. `Problem`) become `components.schemas`
 * under their `$id`, and references to them point there. Served where springdoc served it (`/v3/api-docs`), with
 * Swagger UI at `/swagger-ui`, its assets from the installed package, so the documentation works offline.
 */

const API_DOCS_PATH = '/v3/api-docs'
const SWAGGER_UI_PATH = '/swagger-ui'

const PROBLEM_MEDIA_TYPE = 'application/problem+json'
const problem = ProblemSchema as unknown as { readonly $id: string; readonly description: string }
const PROBLEM_REF = `#/components/schemas/${problem.$id}`

type JsonObject = Record<string, unknown>

const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The generator's placeholder when a response schema has no description of its own. */
const GENERATED_DESCRIPTION = 'Default Response'

/**
 * Finishes the generated responses: problem responses leave the service as `application/problem+json`
 * (problem.ts), while the generator documents every response as `application/json`; and a response without a
 * description of its own (or with the shared Problem schema's) is described by its status text.
 */
function finishResponses(document: JsonObject): JsonObject {
  for (const pathItem of Object.values((document.paths as JsonObject | undefined) ?? {})) {
    if (!isObject(pathItem)) continue
    for (const operation of Object.values(pathItem)) {
      if (!isObject(operation) || !isObject(operation.responses)) continue
      for (const [status, response] of Object.entries(operation.responses)) {
        if (!isObject(response)) continue
        const json = isObject(response.content) ? response.content['application/json'] : undefined
        const isProblem = isObject(json) && isObject(json.schema) && json.schema.$ref === PROBLEM_REF
        if (
          response.description === GENERATED_DESCRIPTION ||
          (isProblem && response.description === problem.description)
        ) {
          response.description = STATUS_CODES[Number(status)] ?? response.description
        }
        if (isProblem) response.content = { [PROBLEM_MEDIA_TYPE]: json }
      }
    }
  }
  return document
}

const BEARER_SCHEME = 'bearerAuth'

/**
 * With authentication on (`AUTH_MODE=jwt`), documents the Bearer token: a security scheme, required by every
 * operation that needs it (under `/api`, the log levels, and with `ACTUATOR_AUTH` the information and metrics) and
 * by none of the others (probes, the documentation itself), so Swagger UI's "Authorize" button sends it where it
 * is needed.
 */
function documentAuthentication(document: JsonObject, actuatorAuth: boolean): JsonObject {
  const components = (isObject(document.components) ? document.components : {}) as JsonObject
  components.securitySchemes = {
    [BEARER_SCHEME]: {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
      description: `A token of the configured issuer; writes of prices and the log levels also need the role ${WRITE_ROLE}, and with AUTH_PRICES_READ=on the glass price list's reads need ${READ_ROLE}.`,
    },
  }
  document.components = components
  for (const [path, pathItem] of Object.entries((document.paths as JsonObject | undefined) ?? {})) {
    if (!isObject(pathItem)) continue
    for (const operation of Object.values(pathItem)) {
      if (isObject(operation) && isObject(operation.responses)) {
        operation.security = needsToken(path, actuatorAuth) ? [{ [BEARER_SCHEME]: [] }] : []
      }
    }
  }
  return document
}

/**
 * Registers the document generator, `GET /v3/api-docs` and Swagger UI. Call it before registering the routes it
 * must describe, and after the shared schemas are added.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Optics catalog API',
        version: packageJson.version,
        description:
          'Goods nomenclature search of seven product kinds and the glass-frame price list of an optical retail ' +
          'chain. Paging and page envelope as Spring Data; errors are RFC 9457 problem details ' +
          '(`application/problem+json`).',
      },
      tags: [
        { name: 'nomenclature', description: 'Search of the seven product kinds, and matview freshness' },
        { name: 'glass price list', description: 'The glass-frame price list: CRUD, bulk change, history' },
        { name: 'operations', description: 'Probes, information and metrics (Spring Boot Actuator paths)' },
      ],
    },
    // Shared schemas keep their `$id` as their name under components.schemas (instead of `def-0`).
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => String(json.$id ?? `def-${index}`),
    },
    transformObject: (generated) => {
      const document = finishResponses((generated as { openapiObject: JsonObject }).openapiObject)
      const { auth } = app.config
      return auth.mode === 'jwt' ? documentAuthentication(document, auth.actuatorAuth) : document
    },
  })

  await app.register(swaggerUi, {
    routePrefix: SWAGGER_UI_PATH,
    uiConfig: { docExpansion: 'list', deepLinking: true },
  })

  app.get(API_DOCS_PATH, { schema: { hide: true } }, async () => app.swagger())

  // springdoc's address of the UI, kept for bookmarks.
  app.get('/swagger-ui.html', { schema: { hide: true } }, async (_request, reply) =>
    reply.redirect(`${SWAGGER_UI_PATH}/`),
  )
}
