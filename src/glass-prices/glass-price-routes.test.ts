import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import {
  ageEntries,
  changeCount,
  clearGlassPrices,
  numberedEntries,
  pricesPath,
  seedEntries,
  storedEntries,
  storedEntry,
  todayIn,
} from '../../test/fixtures/glass-prices.js'
import { buildTestApp, eachDatabase, useTestApp } from '../../test/harness.js'

/* The glass price list's listing and CRUD, through the API, checking the stored state after each write. */

const entry = { manufacturer: 'Safilo', brand: 'Carrera', model: 'CARRERA 8862', price: 11990, purchase: 4800 }

eachDatabase('glass price list: listing and CRUD', (ctx) => {
  const app = useTestApp(ctx, {
    beforeEach: () => clearGlassPrices(ctx.db),
  })

  const list = (query = '') => app().inject({ method: 'GET', url: `${pricesPath}/list${query}` })
  const ids = (response: { json(): { content: { id: number }[] } }) => response.json().content.map((item) => item.id)
  const fieldsOf = (response: { json(): { errors?: { field: string }[] } }) =>
    (response.json().errors ?? []).map((error) => error.field)

  describe('listing', () => {
    test('listing without parameters answers the first 20 entries by id in the Spring page envelope', async () => {
      const seeded = await seedEntries(ctx.db, numberedEntries('Env', 23))
      const response = await list()
      assert.equal(response.statusCode, 200)
      const page = response.json()
      assert.deepEqual(Object.keys(page), [
        'content',
        'pageable',
        'totalPages',
        'totalElements',
        'last',
        'size',
        'number',
        'sort',
        'first',
        'numberOfElements',
        'empty',
      ])
      assert.deepEqual(ids(response), seeded.slice(0, 20))
      assert.deepEqual(page.pageable, {
        pageNumber: 0,
        pageSize: 20,
        sort: { empty: true, sorted: false, unsorted: true },
        offset: 0,
        paged: true,
        unpaged: false,
      })
      assert.equal(page.totalPages, 2)
      assert.equal(page.totalElements, 23)
      assert.equal(page.last, false)
      assert.equal(page.first, true)
      assert.equal(page.size, 20)
      assert.equal(page.number, 0)
      assert.equal(page.numberOfElements, 20)
      assert.equal(page.empty, false)
      assert.deepEqual(Object.keys(page.content[0]), [
        'id',
        'manufacturer',
        'brand',
        'model',
        'lastUpdatedOn',
        'price',
        'purchase',
        'user',
      ])
      assert.deepEqual(page.content[0], {
        id: seeded[0],
        manufacturer: 'Seed',
        brand: 'Env',
        model: 'Env 01',
        lastUpdatedOn: todayIn('Europe/Moscow'),
        price: 100,
        purchase: 50,
        user: 'seed',
      })
    })

    test('listing pages: the last partial page, a page past the end, and size clamped as Spring does', async () => {
      const seeded = await seedEntries(ctx.db, numberedEntries('Pg', 23))
      const lastPage = (await list('?page=2&size=10')).json()
      assert.deepEqual(
        lastPage.content.map((item: { id: number }) => item.id),
        seeded.slice(20),
      )
      assert.equal(lastPage.last, true)
      assert.equal(lastPage.first, false)
      assert.equal(lastPage.totalPages, 3)
      const past = (await list('?page=5&size=10')).json()
      assert.deepEqual(
        [past.content.length, past.number, past.pageable.offset, past.totalElements, past.last, past.empty],
        [0, 5, 50, 23, true, true],
      )
      assert.equal((await list('?size=0')).json().size, 20)
      assert.equal((await list('?size=abc&page=-3')).json().number, 0)
      assert.equal((await list('?size=5000')).json().size, 2000)
      const none = (await list('?manufacturer=no-such-maker')).json()
      assert.deepEqual(
        [none.totalElements, none.totalPages, none.first, none.last, none.empty],
        [0, 0, true, true, true],
      )
    })

    test('listing text filters match case-insensitive substrings, ё as е, % and _ literally; blank is no filter', async () => {
      const [safilo, luxottica, percent] = await seedEntries(ctx.db, [
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'CARRERA 8862', price: 100, purchase: 50 },
        { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB5154 Clubmaster', price: 200, purchase: 90 },
        { manufacturer: 'Ёлка Оптик', brand: '100% Acetate', model: 'x_1', price: 300, purchase: 100 },
      ])
      assert.deepEqual(ids(await list('?manufacturer=%20saf%20')), [safilo])
      assert.deepEqual(ids(await list('?brand=RAY-b')), [luxottica])
      assert.deepEqual(ids(await list('?model=clubMASTER')), [luxottica])
      assert.deepEqual(ids(await list(`?manufacturer=${encodeURIComponent('елка')}`)), [percent])
      assert.deepEqual(ids(await list(`?brand=${encodeURIComponent('0%')}`)), [percent])
      assert.deepEqual(ids(await list(`?brand=${encodeURIComponent('%')}`)), [percent], '% is a literal character')
      assert.deepEqual(ids(await list('?model=x_')), [percent])
      assert.deepEqual(ids(await list('?model=r_')), [], '_ is a literal character')
      assert.deepEqual(ids(await list('?manufacturer=%20%20&brand=')), [safilo, luxottica, percent])
      assert.deepEqual(ids(await list('?manufacturer=a&brand=car&model=8862')), [safilo], 'filters combine with AND')
    })

    test('listing price and purchase ranges are inclusive at both ends', async () => {
      const [a, b, c, d] = await seedEntries(ctx.db, [
        { manufacturer: 'M', brand: 'B', model: 'a', price: '999.99', purchase: 100 },
        { manufacturer: 'M', brand: 'B', model: 'b', price: 1000, purchase: '200.50' },
        { manufacturer: 'M', brand: 'B', model: 'c', price: 2000, purchase: 300 },
        { manufacturer: 'M', brand: 'B', model: 'd', price: '2000.01', purchase: 400 },
      ])
      assert.deepEqual(ids(await list('?priceFrom=1000&priceTo=2000')), [b, c])
      assert.deepEqual(ids(await list('?priceFrom=1000.00')), [b, c, d])
      assert.deepEqual(ids(await list('?priceTo=999.99')), [a])
      assert.deepEqual(ids(await list('?purchaseFrom=200.5&purchaseTo=300')), [b, c])
      assert.deepEqual(ids(await list('?purchaseTo=100')), [a])
      assert.deepEqual(ids(await list('?priceFrom=1000&purchaseTo=300')), [b, c])
      assert.deepEqual(ids(await list('?priceFrom=&priceTo=')), [a, b, c, d], 'blank bounds are no filter')
    })

    test('listing with from greater than to, or a bound that is not a number, is a 400 naming the field', async () => {
      await seedEntries(ctx.db, numberedEntries('Bad', 2))
      for (const [query, field] of [
        ['?priceFrom=2000&priceTo=1000', 'priceFrom'],
        ['?purchaseFrom=10.5&purchaseTo=10.49', 'purchaseFrom'],
        ['?priceFrom=abc', 'priceFrom'],
        ['?purchaseTo=1,5', 'purchaseTo'],
      ] as const) {
        const response = await list(query)
        assert.equal(response.statusCode, 400, query)
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
        assert.deepEqual(fieldsOf(response), [field], query)
      }
    })

    test('listing sorts by every sortColumn in both directions, ties broken by id', async () => {
      const [p1, p2, p3, p4] = await seedEntries(ctx.db, [
        { manufacturer: 'beta', brand: 'B', model: 'm', price: 300, purchase: 10 },
        { manufacturer: 'Alpha', brand: 'z', model: 'm', price: 100, purchase: 40 },
        { manufacturer: 'alpha', brand: 'Y', model: 'm2', price: 300, purchase: 20 },
        { manufacturer: 'Gamma', brand: 'a', model: 'a', price: 200, purchase: 30 },
      ])
      const cases: [string, (number | undefined)[]][] = [
        ['', [p1, p2, p3, p4]],
        ['?sortColumn=ID', [p1, p2, p3, p4]],
        ['?sortColumn=ID&sortDirection=DESC', [p4, p3, p2, p1]],
        ['?sortColumn=PARAMETERS', [p3, p2, p1, p4]],
        ['?sortColumn=PARAMETERS&sortDirection=DESC', [p4, p1, p2, p3]],
        ['?sortColumn=PRICE', [p2, p4, p1, p3]],
        ['?sortColumn=PRICE&sortDirection=ASC', [p2, p4, p1, p3]],
        ['?sortColumn=PRICE&sortDirection=DESC', [p3, p1, p4, p2]],
        ['?sortColumn=PURCHASE', [p1, p3, p4, p2]],
        ['?sortColumn=PURCHASE&sortDirection=DESC', [p2, p4, p3, p1]],
        ['?sortDirection=DESC', [p4, p3, p2, p1]],
      ]
      for (const [query, expected] of cases) {
        const response = await list(query)
        assert.equal(response.statusCode, 200, query)
        assert.deepEqual(ids(response), expected, query)
        assert.equal(response.json().sort.sorted, query !== '', `${query}: the envelope reflects the requested sort`)
        // Filtered (every manufacturer holds an a), the few matches are read whole and sorted: the same order.
        const filtered = `${query}${query ? '&' : '?'}manufacturer=A`
        assert.deepEqual(ids(await list(filtered)), expected, filtered)
      }
      const paged = [
        ...ids(await list('?sortColumn=PRICE&size=2')),
        ...ids(await list('?sortColumn=PRICE&size=2&page=1')),
      ]
      assert.deepEqual(paged, [p2, p4, p1, p3], 'pages of a sort with ties neither overlap nor skip')
    })

    test('listing with a sortColumn or sortDirection outside the enum is a 400 listing the allowed values', async () => {
      for (const [query, field, allowed] of [
        ['?sortColumn=price', 'sortColumn', /ID, PARAMETERS, PRICE, PURCHASE/],
        ['?sortColumn=NAME', 'sortColumn', /ID, PARAMETERS, PRICE, PURCHASE/],
        ['?sortDirection=UP', 'sortDirection', /ASC, DESC/],
      ] as const) {
        const response = await list(query)
        assert.equal(response.statusCode, 400, query)
        const problem = response.json()
        assert.deepEqual(fieldsOf(response), [field])
        assert.match(problem.errors[0].message, allowed)
      }
    })

    test('listing shows lastUpdatedOn as the calendar day in BUSINESS_TIMEZONE and the user of the last change', async () => {
      const [id] = await seedEntries(ctx.db, [entry], 'anna')
      await ageEntries(ctx.db, '2024-03-10T22:30:00Z')
      const moscow = (await list()).json().content[0]
      assert.deepEqual([moscow.id, moscow.lastUpdatedOn, moscow.user], [id, '2024-03-11', 'anna'])
      const utcApp = await buildTestApp(ctx.db, { BUSINESS_TIMEZONE: 'UTC' })
      try {
        const utc = (await utcApp.inject({ method: 'GET', url: `${pricesPath}/list` })).json().content[0]
        assert.equal(utc.lastUpdatedOn, '2024-03-10')
      } finally {
        await utcApp.close()
      }
    })
  })

  describe('create, read, update, delete', () => {
    const create = (payload: unknown) => app().inject({ method: 'POST', url: pricesPath, payload: payload as object })

    test('create answers 200 with the contract shape and an ETag, stores trimmed values and records the change', async () => {
      const response = await create({ ...entry, manufacturer: '  Safilo ', price: '11990.50', purchase: 4800 })
      assert.equal(response.statusCode, 200)
      const body = response.json()
      assert.deepEqual(Object.keys(body), ['id', 'manufacturer', 'brand', 'model', 'price', 'purchase'])
      assert.deepEqual(body, { ...entry, id: body.id, price: 11990.5 })
      assert.equal(response.headers.etag, '"1"')
      const stored = await storedEntry(ctx.db, body.id)
      assert.equal(stored?.manufacturer, 'Safilo')
      assert.equal(stored?.price, '11990.50')
      assert.equal(stored?.updated_by, 'anonymous')
      assert.equal(await changeCount(ctx.db), 1)
    })

    test('create accepts the bounds: 0, 99999999.99, and 255 characters', async () => {
      const long = 'x'.repeat(255)
      const response = await create({ manufacturer: long, brand: 'b', model: 'm', price: 0, purchase: '99999999.99' })
      assert.equal(response.statusCode, 200, response.body)
      assert.deepEqual([response.json().price, response.json().purchase], [0, 99999999.99])
    })

    test('create with missing, null, blank, too long or badly typed fields is a 400 naming each field', async () => {
      const cases: [unknown, string[]][] = [
        [{}, ['manufacturer', 'brand', 'model', 'price', 'purchase']],
        [{ ...entry, manufacturer: null, price: null }, ['manufacturer', 'price']],
        // A number for a text field is its text (Jackson's coercion); an array is not, nor a boolean a price.
        [{ ...entry, brand: ['Carrera'], purchase: true }, ['brand', 'purchase']],
        [{ ...entry, model: '   ', brand: 'x'.repeat(256) }, ['brand', 'model']],
        [{ ...entry, price: 1.234, purchase: -1 }, ['price', 'purchase']],
        [{ ...entry, price: '100000000', purchase: '99999999.999' }, ['price', 'purchase']],
        [{ ...entry, purchase: '12,50' }, ['purchase']],
        [{ ...entry, price: 1e-7 }, ['price']],
      ]
      for (const [payload, fields] of cases) {
        const response = await create(payload)
        assert.equal(response.statusCode, 400, JSON.stringify(payload))
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
        assert.deepEqual(fieldsOf(response).sort(), [...fields].sort(), JSON.stringify(payload))
      }
      assert.equal((await storedEntries(ctx.db)).length, 0, 'nothing was written')
      assert.equal(await changeCount(ctx.db), 0)
    })

    test('create with a body that is not JSON is a 400, with an XML content type a 415', async () => {
      const broken = await app().inject({
        method: 'POST',
        url: pricesPath,
        headers: { 'content-type': 'application/json' },
        payload: '{"manufacturer":',
      })
      assert.equal(broken.statusCode, 400)
      const xml = await app().inject({
        method: 'POST',
        url: pricesPath,
        headers: { 'content-type': 'application/xml' },
        payload: '<entry/>',
      })
      assert.equal(xml.statusCode, 415)
      assert.equal((await storedEntries(ctx.db)).length, 0)
    })

    test('create of an existing manufacturer, brand and model in another case, spacing or ё is a 409 and writes nothing', async () => {
      const first = await create({
        manufacturer: 'Ёлка',
        brand: 'Carrera',
        model: 'CARRERA 8862',
        price: 1,
        purchase: 1,
      })
      assert.equal(first.statusCode, 200)
      const duplicate = await create({
        manufacturer: ' елка ',
        brand: 'CARRERA',
        model: 'carrera 8862',
        price: 2,
        purchase: 2,
      })
      assert.equal(duplicate.statusCode, 409)
      assert.equal(duplicate.json().existingId, first.json().id)
      assert.equal((await storedEntries(ctx.db)).length, 1)
      assert.equal(await changeCount(ctx.db), 1)
    })

    test('read answers the entry with its ETag; a missing id is a 404', async () => {
      const [id] = await seedEntries(ctx.db, [entry])
      const response = await app().inject({ method: 'GET', url: `${pricesPath}/${id}` })
      assert.equal(response.statusCode, 200)
      assert.deepEqual(response.json(), { id, ...entry })
      assert.equal(response.headers.etag, '"1"')
      const missing = await app().inject({ method: 'GET', url: `${pricesPath}/${id! + 1000}` })
      assert.equal(missing.statusCode, 404)
      assert.match(String(missing.headers['content-type']), /^application\/problem\+json/)
      const biggest = await app().inject({ method: 'GET', url: `${pricesPath}/9223372036854775807` })
      assert.equal(biggest.statusCode, 404)
    })

    test('read, update and delete of an id that is not a positive integer are a 400 naming id', async () => {
      for (const id of ['0', '-1', 'abc', '1.5', '9223372036854775808', '1e3']) {
        for (const method of ['GET', 'PUT', 'DELETE'] as const) {
          const response = await app().inject({
            method,
            url: `${pricesPath}/${id}`,
            ...(method === 'PUT' ? { payload: entry } : {}),
          })
          assert.equal(response.statusCode, 400, `${method} ${id}`)
          assert.deepEqual(fieldsOf(response), ['id'], `${method} ${id}`)
        }
      }
      const slash = await app().inject({ method: 'GET', url: `${pricesPath}/1/` })
      assert.equal(slash.statusCode, 404, 'a trailing slash is another path, as in Spring 6')
    })

    test('update replaces the values, bumps the ETag, records what changed and stamps date and user', async () => {
      const [id] = await seedEntries(ctx.db, [entry])
      await ageEntries(ctx.db)
      const response = await app().inject({
        method: 'PUT',
        url: `${pricesPath}/${id}`,
        payload: { ...entry, model: 'CARRERA 8862/N', price: '12990' },
      })
      assert.equal(response.statusCode, 200)
      assert.deepEqual(response.json(), { id, ...entry, model: 'CARRERA 8862/N', price: 12990 })
      assert.equal(response.headers.etag, '"2"')
      const stored = await storedEntry(ctx.db, id!)
      assert.deepEqual(
        [stored?.model, stored?.price, stored?.purchase, stored?.version],
        ['CARRERA 8862/N', '12990.00', '4800.00', 2],
      )
      assert.equal(stored?.updated_by, 'anonymous')
      assert.equal((await list()).json().content[0].lastUpdatedOn, todayIn('Europe/Moscow'))
      const rows = await ctx.db.primary
        .selectFrom('glass_price_change_row')
        .select(['field', 'old_value', 'new_value'])
        .orderBy('field')
        .execute()
      assert.deepEqual(rows, [
        { field: 'model', old_value: 'CARRERA 8862', new_value: 'CARRERA 8862/N' },
        { field: 'price', old_value: '11990.00', new_value: '12990.00' },
      ])
    })

    test('update with the values the entry already holds changes nothing: same ETag, date and history', async () => {
      const [id] = await seedEntries(ctx.db, [entry])
      await ageEntries(ctx.db)
      const response = await app().inject({
        method: 'PUT',
        url: `${pricesPath}/${id}`,
        payload: { ...entry, price: '11990.00' },
      })
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers.etag, '"1"')
      assert.equal((await list()).json().content[0].lastUpdatedOn, '2020-01-15')
      assert.equal(await changeCount(ctx.db), 0)
    })

    test('update to the key of another entry is a 409; changing only the case of its own key is allowed', async () => {
      const [first, second] = await seedEntries(ctx.db, [entry, { ...entry, model: 'CARRERA 1' }])
      const duplicate = await app().inject({
        method: 'PUT',
        url: `${pricesPath}/${second}`,
        payload: { ...entry, model: 'carrera 8862 ' },
      })
      assert.equal(duplicate.statusCode, 409)
      assert.equal(duplicate.json().existingId, first)
      assert.equal((await storedEntry(ctx.db, second!))?.model, 'CARRERA 1')
      const recased = await app().inject({
        method: 'PUT',
        url: `${pricesPath}/${first}`,
        payload: { ...entry, model: 'Carrera 8862' },
      })
      assert.equal(recased.statusCode, 200)
    })

    test('update validates the body as create does, and a missing id is a 404', async () => {
      const [id] = await seedEntries(ctx.db, [entry])
      const invalid = await app().inject({
        method: 'PUT',
        url: `${pricesPath}/${id}`,
        payload: { ...entry, price: -5 },
      })
      assert.equal(invalid.statusCode, 400)
      assert.deepEqual(fieldsOf(invalid), ['price'])
      const missing = await app().inject({ method: 'PUT', url: `${pricesPath}/${id! + 1000}`, payload: entry })
      assert.equal(missing.statusCode, 404)
      assert.equal((await storedEntry(ctx.db, id!))?.price, '11990.00')
    })

    test('If-Match with a stale ETag is a 412 on update and delete and changes nothing; current, * or none pass', async () => {
      const [id] = await seedEntries(ctx.db, [entry])
      const put = (ifMatch: string | undefined, price: number) =>
        app().inject({
          method: 'PUT',
          url: `${pricesPath}/${id}`,
          payload: { ...entry, price },
          headers: ifMatch === undefined ? {} : { 'if-match': ifMatch },
        })
      assert.equal((await put('"1"', 100)).statusCode, 200)
      const stale = await put('"1"', 200)
      assert.equal(stale.statusCode, 412)
      assert.match(String(stale.headers['content-type']), /^application\/problem\+json/)
      assert.equal((await storedEntry(ctx.db, id!))?.price, '100.00')
      assert.equal((await put('"7", W/"2"', 300)).statusCode, 200, 'a list holding the current tag passes')
      assert.equal((await put('*', 400)).statusCode, 200)
      assert.equal((await put(undefined, 500)).statusCode, 200, 'without If-Match the last write wins')
      const staleDelete = await app().inject({
        method: 'DELETE',
        url: `${pricesPath}/${id}`,
        headers: { 'if-match': '"1"' },
      })
      assert.equal(staleDelete.statusCode, 412)
      assert.equal(
        staleDelete.json().detail,
        `Entry ${id} was changed since (If-Match "1"; its ETag is now "5"); read it again`,
      )
      const ahead = await app().inject({ method: 'DELETE', url: `${pricesPath}/${id}`, headers: { 'if-match': '"9"' } })
      assert.equal(ahead.statusCode, 412)
      assert.equal(ahead.json().detail, `Entry ${id} never had the version If-Match names ("9"); its ETag is "5"`)
      assert.ok(await storedEntry(ctx.db, id!), 'the entry is still there')
      const current = (await app().inject({ method: 'GET', url: `${pricesPath}/${id}` })).headers.etag as string
      const deleted = await app().inject({
        method: 'DELETE',
        url: `${pricesPath}/${id}`,
        headers: { 'if-match': current },
      })
      assert.equal(deleted.statusCode, 200)
    })

    test('delete answers 200 with an empty body; the entry is gone and a second delete is a 404', async () => {
      const [id, other] = await seedEntries(ctx.db, [entry, { ...entry, model: 'other' }])
      const response = await app().inject({ method: 'DELETE', url: `${pricesPath}/${id}` })
      assert.equal(response.statusCode, 200)
      assert.equal(response.body, '')
      assert.equal(await storedEntry(ctx.db, id!), undefined)
      assert.ok(await storedEntry(ctx.db, other!), 'other entries stay')
      assert.equal((await app().inject({ method: 'GET', url: `${pricesPath}/${id}` })).statusCode, 404)
      assert.equal((await app().inject({ method: 'DELETE', url: `${pricesPath}/${id}` })).statusCode, 404)
      const { rows } = await sql<{ action: string }>`SELECT action FROM glass_price_change`.execute(ctx.db.primary)
      assert.deepEqual(
        rows.map((row) => row.action),
        ['DELETE'],
      )
    })
  })
})
