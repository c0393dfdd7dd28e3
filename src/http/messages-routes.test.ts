import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { clearGlassPrices, pricesPath, seedEntries } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'

/*
 * The service of a Russian chain (MESSAGES_LANGUAGE=ru) speaks Russian to a client that asks for nothing, and
 * English to one that asks for it: one representative message of every group, its `code`, `type`, field and
 * column names unchanged, and Spring's `error` the English reason phrase.
 */

eachDatabase('messages in Russian by default, in English on request', (ctx) => {
  const app = useTestApp(ctx, {
    env: { MESSAGES_LANGUAGE: 'ru' },
    beforeEach: () => clearGlassPrices(ctx.db),
  })

  const entry = { manufacturer: 'Luxottica', brand: 'Ray-Ban', model: 'RB5154', price: 12990, purchase: 6500 }
  const send = (
    method: 'GET' | 'POST' | 'PUT',
    url: string,
    options: { body?: unknown; csv?: string; headers?: Record<string, string> } = {},
  ) =>
    app().inject({
      method,
      url,
      headers: { ...(options.csv === undefined ? {} : { 'content-type': 'text/csv' }), ...options.headers },
      ...(options.csv === undefined
        ? options.body === undefined
          ? {}
          : { payload: options.body as object }
        : { payload: options.csv }),
    })
  /** The human texts of an answer, and the members that never change with the language. */
  const words = (response: LightMyRequestResponse) => {
    const body = response.json()
    return {
      status: response.statusCode,
      language: response.headers['content-language'],
      title: body.title,
      error: body.error,
      detail: body.detail,
      message: body.message,
      code: body.code,
    }
  }

  test('validation: the detail and each field error in Russian; Accept-Language: en switches to English', async () => {
    const russian = await send('POST', pricesPath, { body: { ...entry, price: 12.345 } })
    assert.deepEqual(words(russian), {
      status: 400,
      language: 'ru',
      title: 'Некорректный запрос',
      error: 'Bad Request',
      detail: 'Ошибки в позиции: price не больше 2 знаков после запятой',
      message: 'Ошибки в позиции: price не больше 2 знаков после запятой',
      code: 'invalid-request',
    })
    assert.deepEqual(russian.json().errors, [{ field: 'price', message: 'не больше 2 знаков после запятой' }])
    const schema = await send('POST', pricesPath, { body: { ...entry, model: undefined } })
    assert.equal(schema.json().detail, 'Ошибки в теле запроса: model обязательное значение')

    const english = await send('POST', pricesPath, {
      body: { ...entry, price: 12.345 },
      headers: { 'accept-language': 'en-GB,en;q=0.9,ru;q=0.5' },
    })
    assert.deepEqual(words(english), {
      status: 400,
      language: 'en',
      title: 'Bad Request',
      error: 'Bad Request',
      detail: 'Invalid entry: price must have at most 2 decimal places',
      message: 'Invalid entry: price must have at most 2 decimal places',
      code: 'invalid-request',
    })
  })

  test('Accept-Language: q weights decide; a language the service does not speak gets the default', async () => {
    const languageFor = async (header: string) =>
      (await send('GET', `${pricesPath}/999999`, { headers: { 'accept-language': header } })).headers[
        'content-language'
      ]
    assert.equal(await languageFor('ru;q=0.3, en;q=0.8'), 'en')
    assert.equal(await languageFor('en;q=0.3, ru;q=0.8'), 'ru')
    assert.equal(await languageFor('de-DE, fr;q=0.9'), 'ru')
    assert.equal(
      (await send('GET', `${pricesPath}/999999`, { headers: { 'accept-language': 'de' } })).json().detail,
      'Нет позиции прайс-листа оправ с id 999999',
    )
  })

  test('404: an unknown entry and an unknown path', async () => {
    assert.deepEqual(words(await send('GET', `${pricesPath}/999999`)), {
      status: 404,
      language: 'ru',
      title: 'Не найдено',
      error: 'Not Found',
      detail: 'Нет позиции прайс-листа оправ с id 999999',
      message: 'Нет позиции прайс-листа оправ с id 999999',
      code: 'entry-not-found',
    })
    assert.equal((await send('GET', '/api/v2/nothing')).json().detail, 'Нет ресурса GET /api/v2/nothing')
    const english = await send('GET', '/api/v2/nothing', { headers: { 'accept-language': 'en' } })
    assert.equal(english.json().detail, 'No resource at GET /api/v2/nothing')
  })

  test('409: a duplicate entry names its keys and the entry that holds them', async () => {
    const [id] = await seedEntries(ctx.db, [entry])
    assert.deepEqual(words(await send('POST', pricesPath, { body: entry })), {
      status: 409,
      language: 'ru',
      title: 'Конфликт',
      error: 'Conflict',
      detail: `Позиция Luxottica / Ray-Ban / RB5154 уже есть в прайс-листе (id ${id})`,
      message: `Позиция Luxottica / Ray-Ban / RB5154 уже есть в прайс-листе (id ${id})`,
      code: 'duplicate-key',
    })
  })

  test('412: a stale If-Match says the entry was changed since it was read', async () => {
    const [id] = await seedEntries(ctx.db, [entry])
    const path = `${pricesPath}/${id}`
    const changed = await send('PUT', path, { body: { ...entry, price: 13990 } })
    assert.equal(changed.statusCode, 200, changed.body)
    const stale = await send('PUT', path, { body: { ...entry, price: 14990 }, headers: { 'if-match': '"1"' } })
    assert.deepEqual(words(stale), {
      status: 412,
      language: 'ru',
      title: 'Условие не выполнено',
      error: 'Precondition Failed',
      detail: `Позиция ${id} изменена после того, как вы её прочитали (If-Match "1"; её ETag теперь "2"); прочитайте её заново`,
      message: `Позиция ${id} изменена после того, как вы её прочитали (If-Match "1"; её ETag теперь "2"); прочитайте её заново`,
      code: 'stale-etag',
    })
  })

  test('look-alike keys: a key with a bidi control is refused in Russian, the field named', async () => {
    const response = await send('POST', pricesPath, { body: { ...entry, model: 'RB\u202e5154' } })
    assert.equal(response.statusCode, 400)
    assert.deepEqual(response.json().errors, [
      {
        field: 'model',
        message: 'не может содержать управляющие символы направления текста (U+202A–U+202E, U+2066–U+2069)',
      },
    ])
  })

  test('import: each problem by line and column in Russian, counted in Russian', async () => {
    await seedEntries(ctx.db, [entry])
    const header = 'manufacturer;brand;model;price;purchase\n'
    const response = await send('POST', `${pricesPath}/import`, { csv: `${header}A;B;C;-1;1\nA;B;D;1;1,555\n` })
    assert.deepEqual(words(response), {
      status: 422,
      language: 'ru',
      title: 'Необрабатываемые данные',
      error: 'Unprocessable Entity',
      detail: 'В файле 2 ошибки; ничего не записано',
      message: 'В файле 2 ошибки; ничего не записано',
      code: 'import-rejected',
    })
    assert.deepEqual(response.json().problems, [
      { line: 2, column: 'price', message: 'не может быть отрицательным' },
      { line: 3, column: 'purchase', message: 'больше 2 знаков после запятой' },
    ])
    const existing = `${header}Luxottica;Ray-Ban;RB5154;1;1\n`
    const known = await send('POST', `${pricesPath}/import`, { csv: existing })
    assert.equal(known.json().detail, 'В файле 1 ошибка; ничего не записано')
    assert.match(
      known.json().problems[0].message,
      /^такие ключи и границы уже есть в прайс-листе \(id \d+\): режим upsert обновит цены$/,
    )
    const english = await send('POST', `${pricesPath}/import`, { csv: existing, headers: { 'accept-language': 'en' } })
    assert.equal(english.json().detail, 'The file has 1 problem; nothing was written')
    assert.match(
      english.json().problems[0].message,
      /^the keys and bounds are already in the price list \(id \d+\): the mode upsert updates its prices$/,
    )
  })

  test('bulk change: the dry run gives its reasons in the language of the request', async () => {
    await seedEntries(ctx.db, [entry])
    const rule = { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.1, round: 'TENS' }
    const nothing = await send('POST', `${pricesPath}/list?dryRun=true&model=nothing-like-this`, { body: rule })
    assert.equal(nothing.headers['content-language'], 'ru')
    assert.deepEqual(nothing.json().reasons, [
      { code: 'nothing-selected', message: 'Под фильтры и диапазон цен не попала ни одна позиция' },
    ])
    const refused = await send('POST', `${pricesPath}/list?dryRun=true`, { body: { ...rule, coefficient: 0.0001 } })
    assert.deepEqual(refused.json().reasons, [
      {
        code: 'bulk-change-rejected',
        message:
          'У 1 выбранной позиции price стал бы 0 или меньше либо больше 99999999.99 (см. rejected): запрос будет ' +
          'отклонён (422) и ничего не изменит',
      },
    ])
    const english = await send('POST', `${pricesPath}/list?dryRun=true&model=nothing-like-this`, {
      body: rule,
      headers: { 'accept-language': 'en' },
    })
    assert.equal(english.headers['content-language'], 'en')
    assert.equal(english.json().reasons[0].message, 'The filters and the price band select no entry')
  })
})
