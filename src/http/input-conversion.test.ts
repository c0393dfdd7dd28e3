import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { InjectOptions, LightMyRequestResponse } from 'fastify'
import { samples } from '../../test/fixtures/catalog.js'
import { clearGlassPrices, pricesPath, seedEntries, storedEntries } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import { insertPriceEntries, insertSkus, refreshMatview } from '../catalog/freshness/catalog-repository.js'
import { kinds } from '../catalog/kinds/kinds.js'

/*
 * Requests read the way the Spring service read them (Jackson's coercions for bodies, Spring's conversions for
 * query parameters): one test per row of the table of what is converted, each asserting that the converted request
 * is answered exactly as its canonical form is (same status, same body, same data written), and that what Jackson
 * and Spring refuse stays refused.
 */

const searchPath = (kind: string) => `/api/v2/good/nomenclature/search/${kind}`
const listPath = `${pricesPath}/list`

/** The glass price list every test starts from: prices that a filter, a sort and a re-rounding all tell apart. */
const glassSeeds = [
  { manufacturer: 'Seed', brand: 'Truevision', model: 'TV 1307', price: 1245, purchase: 600 },
  { manufacturer: 'Seed', brand: 'Other', model: 'OT 2000', price: 1300, purchase: 700 },
  { manufacturer: 'Seed', brand: 'Other', model: 'OT 3000', price: 99, purchase: 40 },
  { manufacturer: 'Seed', brand: 'Other', model: 'OT 4000', price: 5000, purchase: 2500 },
]

/** The parts of an answer that must not differ between a converted request and its canonical form. */
function answerOf(response: LightMyRequestResponse): { status: number; type: unknown; body: unknown } {
  const body = response.body === '' ? '' : response.json()
  if (body && typeof body === 'object') delete (body as Record<string, unknown>).timestamp
  return { status: response.statusCode, type: response.headers['content-type'], body }
}

function assertRefused(response: LightMyRequestResponse, field: string | undefined, said: string): void {
  assert.equal(response.statusCode, 400, `${said}: ${response.body}`)
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/, said)
  const body = response.json() as { errors?: { field: string }[]; code: string }
  if (field !== undefined) {
    assert.equal(body.code, 'invalid-request', said)
    assert.deepEqual(
      (body.errors ?? []).map((e) => e.field),
      [field],
      said,
    )
  } else {
    assert.equal(body.code, 'malformed-body', said)
  }
}

eachDatabase('inputs read as Spring read them', (ctx) => {
  const app = useTestApp(ctx, {
    setup: async () => {
      for (const kind of kinds) {
        const { entry, sku } = samples[kind.path]!
        await insertPriceEntries(ctx.db.primary, kind, [entry])
        await insertSkus(ctx.db.primary, kind, [sku])
        await refreshMatview(ctx.db.primary, kind)
      }
    },
    beforeEach: async () => {
      await clearGlassPrices(ctx.db)
      await seedEntries(ctx.db, glassSeeds)
    },
  })

  const inject = (options: InjectOptions) => app().inject(options)
  const search = (kind: string, body: unknown, query = '') =>
    inject({
      method: 'POST',
      url: `${searchPath(kind)}${query}`,
      headers: { 'content-type': 'application/json' },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    })

  /** Asserts the converted request is answered exactly as the canonical one, and returns that answer. */
  async function assertSame(converted: InjectOptions, canonical: InjectOptions, said: string) {
    const expected = answerOf(await inject(canonical))
    assert.equal(expected.status, 200, `${said}: the canonical request answers ${JSON.stringify(expected.body)}`)
    assert.deepEqual(answerOf(await inject(converted)), expected, said)
    return expected.body as Record<string, unknown> & { totalElements?: number; content?: Record<string, unknown>[] }
  }

  const searchRequest = (kind: string, body: unknown, query = ''): InjectOptions => ({
    method: 'POST',
    url: `${searchPath(kind)}${query}`,
    headers: { 'content-type': 'application/json' },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  })
  const bulkRequest = (body: Record<string, unknown>, query = '?dryRun=true'): InjectOptions => ({
    method: 'POST',
    url: `${listPath}${query}`,
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify(body),
  })
  const bulkBase = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', round: 'TENS' }

  describe('bulk change body: "" and blank numbers are null (row 1)', () => {
    for (const field of ['coefficient', 'difference', 'priceFrom', 'priceTo']) {
      for (const value of ['', ' ', '\t \n', 'null', ' null ']) {
        test(`${field}: ${JSON.stringify(value)} previews exactly as null`, async () => {
          const preview = await assertSame(
            bulkRequest({ ...bulkBase, [field]: value }),
            bulkRequest({ ...bulkBase, [field]: null }),
            `${field}=${JSON.stringify(value)}`,
          )
          // The canonical re-round changes 1245 → 1250 and 99 → 100: the comparison is not of two empty answers.
          assert.equal(preview.changedCount, 2)
        })
      }
    }

    test('the issue\'s body ("coefficient": "", "difference": " ", "priceFrom": "", "priceTo": "") writes exactly what nulls write', async () => {
      const apply = async (body: Record<string, unknown>) => {
        await clearGlassPrices(ctx.db)
        await seedEntries(ctx.db, glassSeeds)
        const response = await inject(bulkRequest(body, ''))
        assert.equal(response.statusCode, 200, response.body)
        assert.equal(response.headers['x-changed-count'], '2')
        return (await storedEntries(ctx.db)).map(({ model, price, purchase }) => ({ model, price, purchase }))
      }
      const converted = await apply({ ...bulkBase, coefficient: '', difference: ' ', priceFrom: '', priceTo: '' })
      const canonical = await apply({
        ...bulkBase,
        coefficient: null,
        difference: null,
        priceFrom: null,
        priceTo: null,
      })
      assert.deepEqual(converted, canonical)
      assert.deepEqual(
        canonical.map((entry) => Number(entry.price)),
        [1250, 1300, 100, 5000],
      )
    })
  })

  describe('search body: "" and blank number filters are no filter (row 2)', () => {
    for (const kind of kinds) {
      for (const filter of kind.filters.filter((f) => f.match !== 'substring')) {
        for (const value of ['', '  ', 'null']) {
          test(`${kind.path}: ${filter.name} ${JSON.stringify(value)} searches exactly as null`, async () => {
            for (const byPriceList of [false, true]) {
              const page = await assertSame(
                searchRequest(kind.path, { byPriceList, [filter.name]: value }),
                searchRequest(kind.path, { byPriceList, [filter.name]: null }),
                `${kind.path} ${filter.name}=${JSON.stringify(value)} byPriceList=${byPriceList}`,
              )
              assert.ok((page.totalElements ?? 0) >= 1)
            }
          })
        }
      }
    }
  })

  describe('query enums: empty is absent, values are trimmed (rows 3 and 7)', () => {
    const rows: [string, string][] = [
      ['sortColumn=', ''],
      ['sortColumn=&sortDirection=', ''],
      ['sortColumn=%20PRICE%20', 'sortColumn=PRICE'],
      ['sortColumn=PRICE+&sortDirection=%09DESC', 'sortColumn=PRICE&sortDirection=DESC'],
      ['sortColumn=&sortDirection=DESC', 'sortDirection=DESC'],
    ]
    for (const [converted, canonical] of rows) {
      test(`?${converted} lists exactly as ?${canonical}`, async () => {
        const page = await assertSame(
          { method: 'GET', url: `${listPath}?${converted}` },
          { method: 'GET', url: `${listPath}?${canonical}` },
          converted,
        )
        assert.equal(page.totalElements, glassSeeds.length)
      })
    }

    test('sortColumn=%20PRICE%20 really sorts by price', async () => {
      const page = answerOf(await inject({ method: 'GET', url: `${listPath}?sortColumn=%20PRICE%20` })).body as {
        content: { price: number }[]
      }
      assert.deepEqual(
        page.content.map((entry) => entry.price),
        [99, 1245, 1300, 5000],
      )
    })

    for (const refused of ['sortColumn=price', 'sortColumn=%20', 'sortColumn=NAME', 'sortDirection=desc']) {
      test(`?${refused} stays refused, naming the parameter`, async () => {
        const response = await inject({ method: 'GET', url: `${listPath}?${refused}` })
        assertRefused(response, refused.split('=')[0], refused)
      })
    }
  })

  describe('search body: byPriceList read as Jackson reads booleans (row 4)', () => {
    const accepted: [unknown, boolean][] = [
      ['true', true],
      ['TRUE', true],
      ['True', true],
      [' true ', true],
      ['false', false],
      ['FALSE', false],
      ['False', false],
      [1, true],
      [2, true],
      [-1, true],
      [0, false],
    ]
    for (const [value, canonical] of accepted) {
      test(`byPriceList ${JSON.stringify(value)} searches exactly as ${canonical}`, async () => {
        await assertSame(
          searchRequest('lenses', { byPriceList: value }),
          searchRequest('lenses', { byPriceList: canonical }),
          JSON.stringify(value),
        )
      })
    }

    for (const value of [null, 'yes', 'no', 'tRUE', '', ' ', 'null', [true], { value: true }, 1.5, 'on', '1']) {
      test(`byPriceList ${JSON.stringify(value)} stays refused, naming the field`, async () => {
        assertRefused(await search('lenses', { byPriceList: value }), 'byPriceList', JSON.stringify(value))
      })
    }
  })

  describe('text fields given numbers or booleans take their text (row 5)', () => {
    const rows: [Record<string, unknown>, Record<string, unknown>, number][] = [
      [{ model: 1307 }, { model: '1307' }, 1],
      [{ brand: true }, { brand: 'true' }, 1],
      [{ brand: false }, { brand: 'false' }, 0],
      [{ model: 2000, brand: 'other' }, { model: '2000', brand: 'other' }, 1],
    ]
    for (const [converted, canonical, total] of rows) {
      test(`search ${JSON.stringify(converted)} searches exactly as ${JSON.stringify(canonical)}`, async () => {
        const page = await assertSame(
          searchRequest('glasses', { byPriceList: true, ...converted }),
          searchRequest('glasses', { byPriceList: true, ...canonical }),
          JSON.stringify(converted),
        )
        assert.equal(page.totalElements, total)
      })
    }

    test('create with "model": 424242 stores the text "424242", as "model": "424242" does', async () => {
      const entry = { manufacturer: 'Safilo', brand: 'Carrera', price: 100, purchase: 50 }
      const created = await inject({ method: 'POST', url: pricesPath, payload: { ...entry, model: 424242 } })
      assert.equal(created.statusCode, 200, created.body)
      assert.equal(created.json().model, '424242')
      assert.equal((await storedEntries(ctx.db)).find((e) => e.model === '424242')?.brand, 'Carrera')
      // The canonical text is the same entry: a duplicate.
      const again = await inject({ method: 'POST', url: pricesPath, payload: { ...entry, model: '424242' } })
      assert.equal(again.statusCode, 409)
      assert.equal(again.json().code, 'duplicate-key')
    })

    for (const [written, text] of [
      ['1.50', '1.50'],
      ['1e3', '1e3'],
      ['12345678901234567890', '12345678901234567890'],
      ['-0.0', '-0.0'],
    ]) {
      test(`create with "model": ${written} (a JSON number) stores the text as written, "${text}"`, async () => {
        const created = await inject({
          method: 'POST',
          url: pricesPath,
          headers: { 'content-type': 'application/json' },
          payload: `{"manufacturer":"M","brand":"B","model":${written},"price":1,"purchase":1}`,
        })
        assert.equal(created.statusCode, 200, created.body)
        assert.equal(created.json().model, text)
        assert.ok((await storedEntries(ctx.db)).some((entry) => entry.model === text))
      })
    }

    test('update with "brand": true stores "true"', async () => {
      const [first] = await storedEntries(ctx.db)
      const updated = await inject({
        method: 'PUT',
        url: `${pricesPath}/${first!.id}`,
        payload: { manufacturer: 'Seed', brand: true, model: first!.model, price: 10, purchase: 5 },
      })
      assert.equal(updated.statusCode, 200, updated.body)
      assert.equal(updated.json().brand, 'true')
    })

    for (const value of [['TV'], { text: 'TV' }]) {
      test(`a text field given ${JSON.stringify(value)} stays refused`, async () => {
        assertRefused(await search('glasses', { byPriceList: true, model: value }), 'model', JSON.stringify(value))
        const created = await inject({
          method: 'POST',
          url: pricesPath,
          payload: { manufacturer: 'M', brand: 'B', model: value, price: 1, purchase: 1 },
        })
        assertRefused(created, 'model', JSON.stringify(value))
      })
    }
  })

  describe('query numbers: whitespace stripped, exponents read (rows 6 and 8)', () => {
    const rows: [string, string][] = [
      ['priceFrom=1%20300', 'priceFrom=1300'],
      ['priceFrom=1+300', 'priceFrom=1300'],
      ['priceFrom=%091%20300%0A', 'priceFrom=1300'],
      ['priceFrom=1.3e3', 'priceFrom=1300'],
      ['priceFrom=13E2', 'priceFrom=1300'],
      ['priceTo=1%20300.00&purchaseFrom=0.6e3', 'priceTo=1300&purchaseFrom=600'],
      ['priceFrom=', ''],
      ['priceFrom=%20', ''],
    ]
    for (const [converted, canonical] of rows) {
      test(`?${converted} lists exactly as ?${canonical || '(nothing)'}`, async () => {
        const page = await assertSame(
          { method: 'GET', url: `${listPath}?${converted}` },
          { method: 'GET', url: `${listPath}?${canonical}` },
          converted,
        )
        if (canonical === 'priceFrom=1300') assert.equal(page.totalElements, 2)
      })
    }

    test('the bulk change reads its query filters the same way', async () => {
      const body = { ...bulkBase, coefficient: 2 }
      const preview = await assertSame(
        bulkRequest(body, '?dryRun=true&priceFrom=1%20300&priceTo=1.3e3'),
        bulkRequest(body, '?dryRun=true&priceFrom=1300&priceTo=1300'),
        'bulk query',
      )
      assert.equal(preview.selectedCount, 1)
    })

    for (const [value, canonical] of [
      ['yes', 'true'],
      ['ON', 'true'],
      ['1', 'true'],
      ['no', 'false'],
      ['off', 'false'],
      ['0', 'false'],
      ['', 'false'],
    ]) {
      test(`dryRun=${value} is dryRun=${canonical}`, async () => {
        const body = { ...bulkBase, coefficient: 2 }
        const converted = await inject(bulkRequest(body, `?dryRun=${value}&model=OT%203000`))
        assert.equal(converted.statusCode, 200, converted.body)
        const stored = (await storedEntries(ctx.db)).find((entry) => entry.model === 'OT 3000')
        assert.equal(Number(stored?.price), canonical === 'true' ? 99 : 200)
        assert.equal(converted.body === '', canonical === 'false')
      })
    }

    for (const refused of [
      'priceFrom=1%C2%A0300',
      'priceFrom=1,300',
      'priceFrom=abc',
      'purchaseTo=1e',
      'dryRun=maybe',
    ]) {
      test(`?${refused} stays refused, naming the parameter`, async () => {
        const method = refused.startsWith('dryRun') ? 'POST' : 'GET'
        const response = await inject(
          method === 'POST' ? bulkRequest(bulkBase, `?${refused}`) : { method, url: `${listPath}?${refused}` },
        )
        assertRefused(response, refused.split('=')[0], refused)
      })
    }
  })

  describe('body numbers: numeric strings trimmed and read with exponents, "null" is null (row 8)', () => {
    test('create with "price": "1.29e3" stores exactly what "price": 1290 stores', async () => {
      const entry = { manufacturer: 'Safilo', brand: 'Carrera', purchase: ' 4.8e2 ' }
      const converted = await inject({
        method: 'POST',
        url: pricesPath,
        payload: { ...entry, model: 'A', price: '1.29e3' },
      })
      const canonical = await inject({
        method: 'POST',
        url: pricesPath,
        payload: { ...entry, model: 'B', price: 1290, purchase: 480 },
      })
      assert.equal(converted.statusCode, 200, converted.body)
      assert.equal(canonical.statusCode, 200, canonical.body)
      const { id: _a, model: _ma, ...convertedEntry } = converted.json()
      const { id: _b, model: _mb, ...canonicalEntry } = canonical.json()
      assert.deepEqual(convertedEntry, canonicalEntry)
      const stored = await storedEntries(ctx.db)
      assert.equal(stored.find((e) => e.model === 'A')?.price, stored.find((e) => e.model === 'B')?.price)
      assert.equal(Number(stored.find((e) => e.model === 'A')?.price), 1290)
    })

    const searchRows: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['lenses', { refractionIndex: 'null' }, { refractionIndex: null }],
      ['lenses', { refractionIndex: '1.6e0' }, { refractionIndex: 1.6 }],
      ['lenses', { refractionIndex: ' 16E-1 ', diameter: ' 70 ' }, { refractionIndex: 1.6, diameter: 70 }],
      ['contact-lenses', { curvatureRadius: '0.84e1' }, { curvatureRadius: 8.4 }],
    ]
    for (const [kind, converted, canonical] of searchRows) {
      test(`${kind} ${JSON.stringify(converted)} searches exactly as ${JSON.stringify(canonical)}`, async () => {
        for (const byPriceList of [false, true]) {
          await assertSame(
            searchRequest(kind, { byPriceList, ...converted }),
            searchRequest(kind, { byPriceList, ...canonical }),
            JSON.stringify(converted),
          )
        }
        // The canonical filter matches the sample, and a different value does not: the filter is applied.
        const miss = await search(kind, {
          byPriceList: false,
          ...canonical,
          ...(kind === 'lenses' ? { refractionIndex: 1.74 } : { curvatureRadius: 9 }),
        })
        if (Object.values(canonical).some((value) => value !== null)) assert.equal(miss.json().totalElements, 0)
      })
    }

    test('a JSON number a float cannot hold is read by its digits, as BigDecimal reads it: no float detour', async () => {
      const post = (payload: string) =>
        inject({ method: 'POST', url: pricesPath, headers: { 'content-type': 'application/json' }, payload })
      // 11990.000000000000001 is 11990 as a float, but has 15 decimals: refused exactly as its text is.
      for (const price of ['11990.000000000000001', '"11990.000000000000001"']) {
        const response = await post(`{"manufacturer":"M","brand":"B","model":"X","price":${price},"purchase":1}`)
        assertRefused(response, 'price', price)
      }
      const coefficient = await inject({
        method: 'POST',
        url: `${listPath}?dryRun=true`,
        headers: { 'content-type': 'application/json' },
        payload:
          '{"priceTypeBase":"RETAIL","priceTypeChange":"RETAIL","round":"TENS","coefficient":1.0000000000000000001}',
      })
      assertRefused(coefficient, 'coefficient', 'coefficient')
      // 1.6000000000000000001 is not 1.6: the lens of index 1.6 is not found, as with the text.
      await assertSame(
        searchRequest('lenses', '{"byPriceList":false,"refractionIndex":1.6000000000000000001}'),
        searchRequest('lenses', { byPriceList: false, refractionIndex: '1.6000000000000000001' }),
        'refractionIndex',
      )
      const found = await search('lenses', '{"byPriceList":false,"refractionIndex":1.6000000000000000001}')
      assert.equal(found.json().totalElements, 0)
      assert.equal((await search('lenses', '{"byPriceList":false,"refractionIndex":1.60}')).json().totalElements, 1)
    })

    test('the bulk change reads "coefficient": " 1.15 " and "difference": "-1e1" as 1.15 and -10', async () => {
      await assertSame(
        bulkRequest({ ...bulkBase, coefficient: ' 1.15 ', difference: '-1e1' }),
        bulkRequest({ ...bulkBase, coefficient: 1.15, difference: -10 }),
        'coefficient and difference',
      )
    })

    for (const [field, value] of [
      ['price', '1 290'],
      ['price', '12,90'],
      ['price', 'NaN'],
      ['price', true],
      ['price', [1290]],
      ['price', { value: 1290 }],
      ['price', ''],
      ['price', 'null'],
      ['purchase', null],
    ] as const) {
      test(`create with "${field}": ${JSON.stringify(value)} stays refused, naming the field`, async () => {
        const payload = { manufacturer: 'M', brand: 'B', model: 'X', price: 10, purchase: 5, [field]: value }
        assertRefused(await inject({ method: 'POST', url: pricesPath, payload }), field, JSON.stringify(value))
        assert.equal((await storedEntries(ctx.db)).length, glassSeeds.length)
      })
    }

    for (const value of [[70], { value: 70 }, true, 'seventy']) {
      test(`search "diameter": ${JSON.stringify(value)} stays refused`, async () => {
        assertRefused(
          await search('lenses', { byPriceList: false, diameter: value }),
          'diameter',
          JSON.stringify(value),
        )
      })
    }
  })

  describe('search sort: parts of dots only are dropped (row 9)', () => {
    const rows: [string, string][] = [
      ['sort=.', ''],
      ['sort=.,ASC', ''],
      ['sort=..,desc', ''],
      ['sort=.,retailPrice,desc', 'sort=retailPrice,desc'],
      ['sort=retailPrice,.,desc', 'sort=retailPrice,desc'],
      ['sort=.&sort=brand', 'sort=brand'],
    ]
    for (const [converted, canonical] of rows) {
      test(`?${converted} searches exactly as ?${canonical || '(no sort)'}`, async () => {
        const page = await assertSame(
          searchRequest('lenses', { byPriceList: true }, `?${converted}`),
          searchRequest('lenses', { byPriceList: true }, canonical ? `?${canonical}` : ''),
          converted,
        )
        assert.equal((page.sort as { sorted: boolean }).sorted, canonical !== '')
      })
    }

    test('?sort=nope stays refused', async () => {
      const response = await search('lenses', { byPriceList: true }, '?sort=nope')
      assert.equal(response.statusCode, 400)
    })
  })

  describe('a trailing slash never matches {id} (row 10)', () => {
    for (const method of ['GET', 'POST', 'PUT', 'DELETE'] as const) {
      test(`${method} ${pricesPath}/ is a 404, and changes nothing`, async () => {
        const response = await inject({
          method,
          url: `${pricesPath}/`,
          ...(method === 'POST' || method === 'PUT'
            ? { payload: { manufacturer: 'M', brand: 'B', model: 'X', price: 1, purchase: 1 } }
            : {}),
        })
        assert.equal(response.statusCode, 404, response.body)
        assert.equal(response.json().code, 'not-found')
        assert.equal((await storedEntries(ctx.db)).length, glassSeeds.length)
      })
    }

    test(`OPTIONS ${pricesPath}/ is a 404 too, while ${pricesPath}/1 answers its methods`, async () => {
      assert.equal((await inject({ method: 'OPTIONS', url: `${pricesPath}/` })).statusCode, 404)
      assert.equal((await inject({ method: 'OPTIONS', url: `${pricesPath}/1` })).statusCode, 200)
    })
  })

  describe('JSON answers are application/json without a charset (row 11)', () => {
    const answers: [string, () => Promise<LightMyRequestResponse>][] = [
      ['a search', () => search('lenses', { byPriceList: false })],
      ['facets', () => inject(searchRequest('lenses/facets', { byPriceList: false }))],
      ['the listing', () => inject({ method: 'GET', url: listPath })],
      ['an entry', async () => inject({ method: 'GET', url: `${pricesPath}/${(await storedEntries(ctx.db))[0]!.id}` })],
      [
        'a create',
        () =>
          inject({
            method: 'POST',
            url: pricesPath,
            payload: { manufacturer: 'M', brand: 'B', model: 'N', price: 1, purchase: 1 },
          }),
      ],
      ['a bulk change preview', () => inject(bulkRequest(bulkBase))],
      ['the changes', () => inject({ method: 'GET', url: `${pricesPath}/changes` })],
      ['the status', () => inject({ method: 'GET', url: '/api/v2/good/nomenclature/status' })],
      [
        'suggestions',
        () => inject({ method: 'GET', url: '/api/v2/good/nomenclature/suggest?kind=lenses&field=brand&q=var' }),
      ],
      ['the health probe', () => inject({ method: 'GET', url: '/actuator/health' })],
      ['the OpenAPI document', () => inject({ method: 'GET', url: '/v3/api-docs' })],
    ]
    for (const [what, send] of answers) {
      test(`${what}: Content-Type application/json`, async () => {
        const response = await send()
        assert.equal(response.statusCode, 200, response.body)
        assert.equal(response.headers['content-type'], 'application/json')
        assert.doesNotThrow(() => response.json())
      })
    }

    test('a problem keeps application/problem+json', async () => {
      const response = await inject({ method: 'GET', url: `${pricesPath}/999999` })
      assert.equal(response.statusCode, 404)
      assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
    })
  })

  describe('what Jackson refuses stays refused', () => {
    const malformed = [
      '{"byPriceList": true /* a comment */}',
      '{"byPriceList": true, // a comment\n}',
      '{"byPriceList": true,}',
      "{'byPriceList': true}",
      '{"byPriceList": \'true\'}',
      '{byPriceList: true}',
    ]
    for (const payload of malformed) {
      test(`${JSON.stringify(payload)} is malformed JSON (400)`, async () => {
        assertRefused(await search('lenses', payload), undefined, payload)
      })
    }

    for (const round of ['whole', 'Tens', ' TENS', 'ROUND', '']) {
      test(`"round": ${JSON.stringify(round)} stays refused`, async () => {
        assertRefused(await inject(bulkRequest({ ...bulkBase, round })), 'round', JSON.stringify(round))
      })
    }

    for (const priceTypeBase of ['retail', 'WHOLESALE', '', null]) {
      test(`"priceTypeBase": ${JSON.stringify(priceTypeBase)} stays refused`, async () => {
        const response = await inject(bulkRequest({ ...bulkBase, priceTypeBase }))
        assertRefused(response, 'priceTypeBase', JSON.stringify(priceTypeBase))
      })
    }

    test('unknown fields stay ignored', async () => {
      await assertSame(
        searchRequest('lenses', { byPriceList: false, colour: 'red', diameterr: 'x', nested: { a: [1] } }),
        searchRequest('lenses', { byPriceList: false }),
        'unknown fields',
      )
    })
  })
})
