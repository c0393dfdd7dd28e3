import assert from 'node:assert/strict'
import { before, test } from 'node:test'
import fc from 'fast-check'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { type Kysely, sql } from 'kysely'
import { samples } from '../test/fixtures/catalog.js'
import { numberedEntries, seedEntries } from '../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../test/harness.js'
import { insertPriceEntries, insertSkus, refreshMatview } from './catalog/freshness/catalog-repository.js'
import { kinds } from './catalog/kinds/kinds.js'
import type { Tables } from './db/tables.js'
import { type KnownRoute, routesOf } from './http/route-table.js'

/*
 * Property-based robustness of the whole API. For every route the application registers (read from its route
 * table, so routes added later are fuzzed too), generated requests — odd path values, query strings, JSON of any
 * shape, wrong types, huge numbers, NUL characters, long and nested values, wrong content types, other methods —
 * must never produce a 5xx; every 4xx must be problem details; and a refused request must leave every table of
 * the database exactly as it was.
 */

/** Runs per property; `FUZZ_RUNS` raises it for a longer hunt. */
const RUNS = Math.floor(Number(process.env.FUZZ_RUNS)) || 100

/** One checksum over every row of every table of the schema the suite works in. */
async function databaseChecksum(db: Kysely<Tables>): Promise<string> {
  const { rows: tables } = await sql<{ name: string }>`
    SELECT table_name AS name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`.execute(db)
  const parts = tables.map(
    ({ name }) =>
      sql`SELECT ${name} AS name, md5(coalesce(string_agg(t::text, '|' ORDER BY t::text), '')) AS sum FROM ${sql.table(name)} t`,
  )
  const { rows } = await sql<{ name: string; sum: string }>`${sql.join(parts, sql` UNION ALL `)}`.execute(db)
  return rows
    .map((row) => `${row.name}:${row.sum}`)
    .sort()
    .join(',')
}

/** Values meant to break things: huge, tiny, non-numeric numbers, NUL, long or odd text, and structure. */
const nastyScalar = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '1e400',
    '-1e400',
    'NaN',
    'Infinity',
    '9'.repeat(300),
    `0.${'0'.repeat(200)}1`,
    '%',
    '_',
    "'; DROP TABLE glasses_price; --",
    'ё',
    'x'.repeat(10_000),
    '9223372036854775808',
    '-1',
    '0',
    '1.005',
    'TENS',
    'RETAIL',
    'PURCHASE',
    'HUNDREDS',
  ),
  fc.integer(),
  fc.double(),
  fc.constantFrom(1e300, -1e300, 1e-300, Number.MAX_SAFE_INTEGER, 2 ** 63, 0.1 + 0.2, -0, 99_999_999.99, 1.15),
  fc.boolean(),
  fc.constant(null),
)
const nastyValue = fc.oneof(
  { weight: 4, arbitrary: nastyScalar },
  { weight: 1, arbitrary: fc.array(nastyScalar, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 8 }), nastyScalar, { maxKeys: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
)

const pathSegment = fc.oneof(
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
  fc.integer({ min: 1, max: 12 }).map(String),
  fc.constantFrom('0', '-1', '1.5', '99999999999999999999', '9223372036854775807', '%00', '%E0%A4%A', 'list', '%2F'),
)

function propertyNames(schema: unknown): string[] {
  const properties = (schema as { properties?: Record<string, unknown> } | undefined)?.properties
  return properties ? Object.keys(properties) : []
}

const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** A generated request aimed at one route: its path with generated values, query, body, headers, maybe another method. */
function requestFor(route: KnownRoute): fc.Arbitrary<InjectOptions & { url: string; method: string }> {
  const names = (part: string) => propertyNames(route.options.schema?.[part])
  const queryNames = [...names('querystring'), 'page', 'size', 'sort']
  const bodyNames = names('body')
  const segments = route.url.split('/').filter((segment) => segment.startsWith(':') || segment === '*').length

  const query = fc.array(fc.tuple(fc.oneof(fc.constantFrom(...queryNames), fc.string({ maxLength: 8 })), nastyScalar), {
    maxLength: 5,
  })
  const objectBody = fc
    .array(
      fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...bodyNames, 'extra') }, fc.string()), nastyValue),
      {
        maxLength: 8,
      },
    )
    .map((pairs) => JSON.stringify(Object.fromEntries(pairs)))
  const body = fc.oneof(
    { weight: 6, arbitrary: objectBody },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 5 }).map((value) => JSON.stringify(value) ?? 'null') },
    { weight: 1, arbitrary: fc.string() },
    { weight: 1, arbitrary: fc.constantFrom('{', '{"a":', '[1,2', '{"__proto__":{"x":1}}', '', 'null', '\u0000') },
  )
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant('application/json') },
    {
      weight: 2,
      arbitrary: fc.constantFrom(undefined, 'text/plain', 'application/xml', 'application/vnd.x+json', 'text/csv'),
    },
  )
  const method = fc.oneof(
    { weight: 9, arbitrary: fc.constant(route.method) },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD') },
  )

  return fc
    .record({
      method,
      values: fc.array(pathSegment, { minLength: segments, maxLength: segments }),
      query,
      body: fc.option(body, { nil: undefined, freq: 5 }),
      contentType,
      ifMatch: fc.option(fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('"1"', '*', 'W/"1"')), {
        nil: undefined,
      }),
    })
    .map(({ method, values, query, body, contentType, ifMatch }) => {
      let index = 0
      const path = route.url
        .split('/')
        .map((segment) => (segment.startsWith(':') || segment === '*' ? (values[index++] ?? '1') : segment))
        .join('/')
      const search = new URLSearchParams()
      for (const [name, value] of query) search.append(name, String(value))
      const headers: Record<string, string> = {}
      if (ifMatch !== undefined) headers['if-match'] = ifMatch
      const sendsBody = body !== undefined && bodyMethods.has(method)
      if (sendsBody && contentType !== undefined) headers['content-type'] = contentType
      const queryText = search.toString()
      return {
        method: method as InjectOptions['method'] & string,
        url: queryText ? `${path}?${queryText}` : path,
        headers,
        ...(sendsBody ? { payload: body } : {}),
      }
    })
}

function describeRequest(request: InjectOptions & { url: string; method: string }, response: LightMyRequestResponse) {
  const payload = typeof request.payload === 'string' ? request.payload.slice(0, 300) : ''
  return `${request.method} ${request.url.slice(0, 300)} ${JSON.stringify(request.headers)} ${payload} → ${response.statusCode} ${response.body.slice(0, 300)}`
}

function assertProblemBody(response: LightMyRequestResponse, said: string): void {
  const body = response.json() as Record<string, unknown>
  assert.equal(body.status, response.statusCode, said)
  for (const key of ['type', 'title', 'detail', 'instance']) assert.equal(typeof body[key], 'string', said)
  if (body.errors !== undefined) {
    assert.ok(Array.isArray(body.errors), said)
    for (const error of body.errors as Record<string, unknown>[]) {
      assert.equal(typeof error.field, 'string', said)
      assert.equal(typeof error.message, 'string', said)
    }
  }
}

eachDatabase('fuzzing every route', (ctx) => {
  let routes: readonly KnownRoute[]
  const app = useTestApp(ctx)
  const authApp = useTestApp(ctx, {
    env: { AUTH_MODE: 'jwt', AUTH_JWT_SECRET: 'a-shared-secret-of-at-least-32-characters' },
  })

  before(async () => {
    for (const kind of kinds) {
      const sample = samples[kind.path]
      if (!sample) continue
      await insertPriceEntries(ctx.db.primary, kind, [sample.entry], 'seed')
      await insertSkus(ctx.db.primary, kind, [sample.sku])
    }
    await seedEntries(ctx.db, numberedEntries('Fuzz', 10))
    for (const kind of kinds) await refreshMatview(ctx.db.primary, kind)
    routes = routesOf(app()).filter((route) => route.url !== '*')
  })

  test('the route table lists every route of the API', () => {
    const listed = new Set(routes.map((route) => `${route.method} ${route.url}`))
    for (const expected of [
      'POST /api/v2/good/nomenclature/search/lenses',
      'GET /api/v2/glasses/prices/list',
      'POST /api/v2/glasses/prices/list',
      'PUT /api/v2/glasses/prices/:id',
      'POST /api/v2/glasses/prices/changes/:batch/revert',
      'GET /actuator/health',
    ]) {
      assert.ok(listed.has(expected), expected)
    }
    assert.ok(routes.length >= 15)
  })

  test('generated requests never get a 5xx; refusals are problem details and change nothing', async () => {
    const anyRequest = fc.constantFrom(...routes).chain(requestFor)
    let refused = 0
    let accepted = 0
    // The state before each request: unchanged by a refusal, read again after anything accepted.
    let before = await databaseChecksum(ctx.db.primary)
    await fc.assert(
      fc.asyncProperty(anyRequest, async (request) => {
        const response = await app().inject(request)
        const said = describeRequest(request, response)
        if (response.statusCode < 400) {
          accepted++
          before = await databaseChecksum(ctx.db.primary)
          return
        }
        assert.ok(response.statusCode < 500, said)
        refused++
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/, said)
        // HEAD has the headers of GET and no body.
        if (request.method !== 'HEAD') assertProblemBody(response, said)
        assert.equal(await databaseChecksum(ctx.db.primary), before, `a refused request changed data: ${said}`)
      }),
      { numRuns: RUNS },
    )
    // The generator reaches both sides, or the property says little.
    assert.ok(refused > RUNS / 4, `refused ${refused}`)
    assert.ok(accepted > 0, `accepted ${accepted}`)
  })

  test('without a valid token every API request is a 401 and changes nothing', async () => {
    const apiRoutes = routesOf(authApp()).filter((route) => route.url.startsWith('/api/'))
    const forged = fc.oneof(
      fc.constant(undefined),
      fc.string().map((text) => `Bearer ${text}`),
      fc
        .tuple(fc.base64String({ minLength: 4 }), fc.base64String({ minLength: 4 }), fc.base64String())
        .map((parts) => `Bearer ${parts.join('.')}`),
      fc.constantFrom('Basic YWRtaW46YWRtaW4=', 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'),
    )
    const request = fc
      .tuple(fc.constantFrom(...apiRoutes).chain(requestFor), forged)
      .map(([options, authorization]) =>
        authorization === undefined ? options : { ...options, headers: { ...options.headers, authorization } },
      )
      .filter((options) => options.method !== 'OPTIONS')
    const before = await databaseChecksum(ctx.db.primary)
    await fc.assert(
      fc.asyncProperty(request, async (options) => {
        const response = await authApp().inject(options)
        const said = describeRequest(options, response)
        // A URL that does not decode is refused before anything else (400); every other request needs a token.
        assert.ok([400, 401].includes(response.statusCode), said)
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/, said)
        assert.equal(await databaseChecksum(ctx.db.primary), before, said)
      }),
      { numRuns: Math.ceil(RUNS / 3) },
    )
  })
})
