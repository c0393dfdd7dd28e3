import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import { eachDatabase, testConfig, useTestApp } from '../../test/harness.js'
import { seedCatalogue } from '../demo/demo-catalogue.js'

/*
 * The OpenAPI document's examples are real: on the demo catalogue the service loads at first start, every
 * operation that reads, sent with all its examples at once (as Swagger UI's "Try it out" sends them), answers 2xx
 * with something in it. Every path and query parameter and every request body has an example, and every example
 * is valid against its own schema, also those of the writes, which are not sent. Headers have none: a fixed
 * Idempotency-Key or If-Match would make a second "Try it out" a replay or a 412.
 */

interface Parameter {
  name: string
  in: 'path' | 'query' | 'header'
  schema?: Record<string, unknown>
  example?: unknown
}
interface Media {
  schema?: Record<string, unknown>
  example?: unknown
}
interface Operation {
  operationId: string
  parameters?: Parameter[]
  requestBody?: { content: Record<string, Media> }
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, unknown> }
}

const methods = new Set(['get', 'post', 'put', 'delete'])

/**
 * Operations that write (sent, they would change the catalogue or the service), or that name a job, a scheduled
 * change or a change's entries, which the demo catalogue does not hold: their examples are checked, not sent. The bulk change and the
 * upload are sent: their examples are dry runs.
 */
const notSent = new Set([
  'createGlassPrice',
  'updateGlassPrice',
  'deleteGlassPrice',
  'revertGlassPriceChange',
  'cancelScheduledGlassPriceChange',
  'getScheduledGlassPriceChange',
  'listGlassPriceChangeEntries',
  'getGlassPriceJob',
  'setLoggerLevel',
])

/** Reads that list the API's own writes: a fresh demo catalogue has none, so they answer 2xx and may be empty. */
const listsOfWrites = new Set(['listGlassPriceChanges', 'listScheduledGlassPriceChanges', 'glassPriceHistory'])

/** A binary body (the XLSX upload) has no example a document can carry. */
const binaryMedia = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet'

function operationsOf(document: OpenApiDocument): { method: string; path: string; operation: Operation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => methods.has(method))
      .map(([method, operation]) => ({ method, path, operation })),
  )
}

/**
 * Whether an answer has something in it: a page with items; else a non-empty list, a non-blank text or a number
 * other than 0 anywhere in it (a count of 0, `false` and null are nothing).
 */
function hasContent(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0
  if (value !== null && typeof value === 'object') {
    if ('content' in value && Array.isArray(value.content)) return value.content.length > 0
    return Object.values(value).some(hasContent)
  }
  if (typeof value === 'string') return value.trim() !== ''
  return typeof value === 'number' && value !== 0
}

eachDatabase('OpenAPI examples on the demo catalogue', (ctx) => {
  const app = useTestApp(ctx, { setup: () => seedCatalogue(ctx.db, { scale: testConfig().demoScale }) })
  let document: OpenApiDocument
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ;(addFormats as unknown as (ajv: Ajv2020) => void)(ajv)
  ajv.addFormat('decimal', true)

  before(async () => {
    document = (await app().inject({ url: '/v3/api-docs' })).json()
    ajv.addSchema({ $id: 'components', $defs: document.components.schemas })
  })

  /** Whether `example` is valid against `schema`, whose component references point into the document. */
  const validates = (schema: Record<string, unknown>, example: unknown): string | undefined => {
    const resolved = JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"components#/$defs/'))
    const validate = ajv.compile(resolved)
    return validate(example) ? undefined : ajv.errorsText(validate.errors)
  }

  test('every path and query parameter and every request body has an example valid against its schema', () => {
    const missing: string[] = []
    const invalid: string[] = []
    for (const { method, path, operation } of operationsOf(document)) {
      const where = `${method.toUpperCase()} ${path}`
      for (const parameter of operation.parameters ?? []) {
        if (parameter.example === undefined) {
          if (parameter.in !== 'header') missing.push(`${where} ${parameter.in} ${parameter.name}`)
          continue
        }
        const error = validates(parameter.schema ?? {}, parameter.example)
        if (error) invalid.push(`${where} ${parameter.name}: ${error}`)
      }
      for (const [type, media] of Object.entries(operation.requestBody?.content ?? {})) {
        if (type === binaryMedia) continue
        if (media.example === undefined) {
          missing.push(`${where} body ${type}`)
          continue
        }
        const error = validates(media.schema ?? {}, media.example)
        if (error) invalid.push(`${where} body ${type}: ${error}`)
      }
    }
    assert.deepEqual(missing, [], 'without an example')
    assert.deepEqual(invalid, [], 'an example its schema refuses')
  })

  test('the seven kinds search and count facets with the example of their descriptor', () => {
    const search = document.paths['/api/v2/good/nomenclature/search/lenses']?.post
    const facets = document.paths['/api/v2/good/nomenclature/search/lenses/facets']?.post
    const example = search?.requestBody?.content['application/json']?.example
    assert.deepEqual(example, { byPriceList: false, manufacturer: 'Essilor', refractionIndex: 1.6, sphere: -2.5 })
    assert.deepEqual(facets?.requestBody?.content['application/json']?.example, example)
  })

  test("every read, sent with its examples as Swagger UI's Try it out sends them, answers 2xx with content", async () => {
    const failures: string[] = []
    let sent = 0
    // The metrics' example names the requests, which have been counted by now.
    await app().inject({ url: '/actuator/health' })
    for (const { method, path, operation } of operationsOf(document)) {
      if (notSent.has(operation.operationId)) continue
      if (method !== 'get' && method !== 'post') continue
      const response = await sendExample(app(), method, path, operation)
      sent++
      const where = `${method.toUpperCase()} ${path} (${operation.operationId}): ${response.statusCode}`
      if (response.statusCode < 200 || response.statusCode >= 300) {
        failures.push(`${where} ${response.body.slice(0, 300)}`)
        continue
      }
      if (listsOfWrites.has(operation.operationId)) continue
      const json = /json/.test(String(response.headers['content-type']))
      const content = json ? hasContent(response.json()) : response.body.trim().split('\n').length > 1
      if (!content) failures.push(`${where} is empty: ${response.body.slice(0, 300)}`)
    }
    assert.deepEqual(failures, [])
    assert.ok(sent >= 30, `${sent} operations sent`)
  })
})

/** Sends an operation with every example it documents: path and query parameters, headers and the body. */
function sendExample(app: FastifyInstance, method: string, path: string, operation: Operation) {
  let url = path
  const query = new URLSearchParams()
  const headers: Record<string, string> = {}
  for (const parameter of operation.parameters ?? []) {
    if (parameter.example === undefined) continue
    const values = Array.isArray(parameter.example) ? parameter.example : [parameter.example]
    if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, encodeURIComponent(String(values[0])))
    else if (parameter.in === 'query') for (const value of values) query.append(parameter.name, String(value))
    else headers[parameter.name] = String(values[0])
  }
  const content = Object.entries(operation.requestBody?.content ?? {}).find(([, media]) => media.example !== undefined)
  const search = query.size > 0 ? `?${query}` : ''
  if (!content) return app.inject({ method: method === 'get' ? 'GET' : 'POST', url: `${url}${search}`, headers })
  const [type, media] = content
  return app.inject({
    method: 'POST',
    url: `${url}${search}`,
    headers: { ...headers, 'content-type': type },
    payload: typeof media.example === 'string' ? media.example : JSON.stringify(media.example),
  })
}
