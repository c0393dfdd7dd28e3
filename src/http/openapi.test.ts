import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import packageJson from '../../package.json' with { type: 'json' }
import { buildTestApp, eachDatabase, useTestApp } from '../../test/harness.js'
import { PROBLEM_CODES } from './problem-types.js'

/*
 * The generated OpenAPI document and Swagger UI: the document is valid OpenAPI 3.1, describes every operation of
 * the wire contract and every other route completely, and the UI with all its assets is served by the service.
 */

/** The operations of the wire contract (the front end calls exactly these). */
const contractOperations = [
  ...['accessories', 'sunglasses', 'glasses', 'lenses', 'contact-lenses', 'extras', 'semifinished-lenses'].map(
    (kind) => ['post', `/api/v2/good/nomenclature/search/${kind}`] as const,
  ),
  ['get', '/api/v2/glasses/prices/list'],
  ['post', '/api/v2/glasses/prices/list'],
  ['post', '/api/v2/glasses/prices'],
  ['get', '/api/v2/glasses/prices/{id}'],
  ['put', '/api/v2/glasses/prices/{id}'],
  ['delete', '/api/v2/glasses/prices/{id}'],
] as const

const probeOperations = [
  ['get', '/actuator/health'],
  ['get', '/actuator/health/liveness'],
  ['get', '/actuator/health/readiness'],
  ['get', '/actuator/info'],
  ['get', '/actuator/prometheus'],
  ['get', '/actuator/metrics'],
  ['get', '/actuator/metrics/{name}'],
  ['get', '/actuator/loggers'],
  ['get', '/actuator/loggers/{name}'],
  ['post', '/actuator/loggers/{name}'],
] as const

const httpMethods = new Set(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'])

interface Operation {
  operationId?: string
  summary?: string
  tags?: string[]
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>
}
type OpenApiDocument = {
  openapi: string
  info: { title: string; version: string; description?: string }
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown> }
}

function operationsOf(document: OpenApiDocument): [string, string, Operation][] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => httpMethods.has(method))
      .map(([method, operation]): [string, string, Operation] => [method, path, operation]),
  )
}

/** Every `$ref` string anywhere in the value. */
function refsIn(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refsIn(item, found)
  else if (typeof value === 'object' && value !== null) {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.push(inner)
      else refsIn(inner, found)
    }
  }
  return found
}

eachDatabase('OpenAPI document and Swagger UI', (ctx) => {
  const app = useTestApp(ctx)
  let document: OpenApiDocument
  before(async () => {
    const response = await app().inject({ url: '/v3/api-docs' })
    assert.equal(response.statusCode, 200)
    assert.match(String(response.headers['content-type']), /^application\/json/)
    document = response.json()
  })

  test('the document at /v3/api-docs is valid OpenAPI 3.1', async () => {
    assert.match(document.openapi, /^3\.1\./)
    const validator = new Validator()
    const result = await validator.validate(structuredClone(document) as never)
    assert.deepEqual(result.errors ?? [], [], 'the validator found errors')
    assert.equal(result.valid, true)
  })

  test('the document names the service, its version from package.json and what it does', () => {
    assert.equal(document.info.version, packageJson.version)
    assert.match(document.info.title, /optics/i)
    assert.ok((document.info.description ?? '').length > 20)
  })

  test('every operation of the wire contract is documented with its method', () => {
    for (const [method, path] of contractOperations) {
      assert.ok(document.paths[path]?.[method], `${method.toUpperCase()} ${path} is missing`)
    }
  })

  test('the probes, metrics and log levels are documented', () => {
    for (const [method, path] of probeOperations) {
      assert.ok(document.paths[path]?.[method], `${method.toUpperCase()} ${path} is missing`)
    }
  })

  test('every operation has tags, a unique operationId, a summary and a success and error responses', () => {
    const seen = new Map<string, string>()
    for (const [method, path, operation] of operationsOf(document)) {
      const where = `${method.toUpperCase()} ${path}`
      assert.ok(operation.tags && operation.tags.length > 0, `${where} has no tags`)
      assert.ok(operation.summary, `${where} has no summary`)
      assert.ok(operation.operationId, `${where} has no operationId`)
      assert.ok(
        !seen.has(operation.operationId),
        `${where} repeats the operationId of ${seen.get(operation.operationId)}`,
      )
      seen.set(operation.operationId, where)
      const statuses = Object.keys(operation.responses ?? {})
      assert.ok(
        statuses.some((status) => status.startsWith('2')),
        `${where} documents no success response`,
      )
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        assert.notEqual(response.description, 'Default Response', `${where} ${status} has no description`)
      }
    }
    assert.ok(seen.size >= contractOperations.length + probeOperations.length)
  })

  test('every operation under /api documents its error responses as problem details', () => {
    for (const [method, path, operation] of operationsOf(document)) {
      if (!path.startsWith('/api/')) continue
      const errors = Object.entries(operation.responses ?? {}).filter(([status]) => /^[45]/.test(status))
      assert.ok(errors.length > 0, `${method.toUpperCase()} ${path} documents no error response`)
      for (const [status, response] of errors) {
        assert.deepEqual(
          response.content,
          { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
          `${method.toUpperCase()} ${path} ${status}`,
        )
      }
    }
  })

  test('the shared Problem schema is a component, and every reference resolves within the document', () => {
    const problem = document.components.schemas.Problem as { properties?: Record<string, unknown> }
    assert.ok(problem, 'components.schemas.Problem is missing')
    assert.deepEqual(Object.keys(problem.properties ?? {}).sort(), [
      'code',
      'detail',
      'error',
      'errors',
      'instance',
      'message',
      'messageKey',
      'path',
      'status',
      'timestamp',
      'title',
      'type',
    ])
    const code = problem.properties?.code as { enum?: string[]; description?: string }
    assert.deepEqual(code.enum, PROBLEM_CODES, 'every kind of refusal is documented')
    for (const name of PROBLEM_CODES) assert.ok(code.description?.includes(`\`${name}\``), name)
    const refs = refsIn(document)
    assert.ok(refs.length > 0)
    for (const ref of refs) {
      assert.match(ref, /^#\/components\/schemas\//, `unresolved reference ${ref}`)
      const name = ref.slice('#/components/schemas/'.length)
      assert.ok(document.components.schemas[name], `${ref} points to nothing`)
    }
  })

  test('a search operation documents its body, the paging parameters and the item fields of its kind', () => {
    const search = document.paths['/api/v2/good/nomenclature/search/lenses']?.post as Operation & {
      requestBody?: { content?: Record<string, { schema?: { required?: string[]; properties?: object } }> }
      parameters?: { name: string; in: string }[]
    }
    const body = search.requestBody?.content?.['application/json']?.schema
    assert.deepEqual(body?.required, ['byPriceList'])
    assert.ok(Object.keys(body?.properties ?? {}).includes('refractionIndex'))
    assert.deepEqual(
      (search.parameters ?? []).filter((parameter) => parameter.in === 'query').map((parameter) => parameter.name),
      ['page', 'size', 'sort'],
    )
    const page = search.responses?.['200']?.content?.['application/json']?.schema as {
      properties?: { content?: { items?: { properties?: object } } }
    }
    assert.ok(Object.keys(page?.properties?.content?.items?.properties ?? {}).includes('sphereFrom'))
  })

  test('Swagger UI answers HTML at /swagger-ui and /swagger-ui/, and every asset it names loads from the service', async () => {
    for (const page of ['/swagger-ui', '/swagger-ui/']) {
      const response = await app().inject({ url: page })
      assert.equal(response.statusCode, 200, page)
      assert.match(String(response.headers['content-type']), /^text\/html/)
      const assets = [...response.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!)
      assert.ok(assets.some((asset) => asset.endsWith('swagger-ui-bundle.js')))
      assert.ok(assets.some((asset) => asset.endsWith('swagger-ui.css')))
      for (const asset of assets) {
        const url = new URL(asset, `http://service${page}`)
        assert.equal(url.host, 'service', `${asset} is not served by the service (the UI must work offline)`)
        const loaded = await app().inject({ url: url.pathname })
        assert.equal(loaded.statusCode, 200, `${url.pathname} (named by ${page})`)
        assert.ok(loaded.rawPayload.length > 0, `${url.pathname} is empty`)
      }
    }
  })

  test('Swagger UI loads the same document as /v3/api-docs', async () => {
    const initializer = await app().inject({ url: '/swagger-ui/static/swagger-initializer.js' })
    assert.equal(initializer.statusCode, 200)
    assert.match(initializer.body, /resolveUrl\('\.\/json'\)/)
    const json = await app().inject({ url: '/swagger-ui/json' })
    assert.equal(json.statusCode, 200)
    assert.deepEqual(json.json(), document)
  })

  test("springdoc's /swagger-ui.html redirects to the UI", async () => {
    const response = await app().inject({ url: '/swagger-ui.html' })
    assert.equal(response.statusCode, 302)
    assert.equal(response.headers.location, '/swagger-ui/')
  })
})

eachDatabase('OpenAPI document with authentication on', (ctx) => {
  const app = useTestApp(ctx, {
    env: {
      AUTH_MODE: 'jwt',
      AUTH_JWT_SECRET: 'a-shared-secret-of-at-least-32-characters',
    },
  })

  test('documents the Bearer token, needed under /api and for the log levels only, and stays valid OpenAPI 3.1', async () => {
    const response = await app().inject({ url: '/v3/api-docs' })
    assert.equal(response.statusCode, 200, 'the document itself needs no token')
    const document = response.json() as OpenApiDocument & {
      components: { securitySchemes?: Record<string, { type: string; scheme: string }> }
    }
    assert.deepEqual(
      Object.values(document.components.securitySchemes ?? {}).map(({ type, scheme }) => ({ type, scheme })),
      [{ type: 'http', scheme: 'bearer' }],
    )
    const [scheme] = Object.keys(document.components.securitySchemes ?? {})
    for (const [method, path, operation] of operationsOf(document)) {
      const { security } = operation as { security?: Record<string, string[]>[] }
      const needed = path.startsWith('/api/') || path.startsWith('/actuator/loggers')
      assert.deepEqual(security, needed ? [{ [scheme!]: [] }] : [], `${method.toUpperCase()} ${path}`)
    }
    const result = await new Validator().validate(structuredClone(document) as never)
    assert.deepEqual(result.errors ?? [], [])
  })
})

eachDatabase('OpenAPI document with authentication off', (ctx) => {
  test('declares no security scheme, since no operation needs a token', async () => {
    const app = await buildTestApp(ctx.db)
    try {
      const document = (await app.inject({ url: '/v3/api-docs' })).json() as OpenApiDocument & {
        components: { securitySchemes?: unknown }
      }
      assert.equal(document.components.securitySchemes, undefined)
      assert.ok(operationsOf(document).every(([, , operation]) => !('security' in operation)))
    } finally {
      await app.close()
    }
  })
})
