import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import Fastify, { type FastifyInstance } from 'fastify'
import { pino } from 'pino'
import { clearGlassPrices, pricesPath } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import { glasses } from '../catalog/kinds/kinds.js'
import { SearchIndexThread } from '../catalog/search-index/index-thread.js'
import { seedCatalogue } from '../demo/demo-catalogue.js'
import { isMessage } from '../domain/messages.js'
import { registerErrorHandler } from './error-handler.js'
import { ProblemError } from './problem.js'

/*
 * A refusal raised far from the request (on the index's own thread, in one line of an uploaded file) travels as a
 * message key and its values, and is put into words only where it is answered: Russian for a client that asks for
 * Russian, English for one that asks for English, with the same `messageKey` for both. Nothing reads the words
 * back: the error itself holds the key.
 */

eachDatabase('a message raised deep reaches the client in its language, with its key', (ctx) => {
  let thread: SearchIndexThread
  let refusal: unknown
  let edge: FastifyInstance

  before(async () => {
    await seedCatalogue(ctx.db, { scale: 20, kinds: [glasses] })
    thread = new SearchIndexThread(ctx.db, pino({ level: 'silent' }), { timezone: 'UTC' })
    await thread.catchUp()
    refusal = await thread
      .search(glasses, {
        byPriceList: true,
        filters: {},
        page: { page: 0, size: 5, sort: [{ property: 'id', direction: 'asc', ignoreCase: false }] },
      })
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    // The problem handler alone, answering the refusal the index thread sent back.
    edge = Fastify()
    registerErrorHandler(edge)
    edge.get('/deep', async () => {
      throw refusal
    })
    await edge.ready()
  })
  after(async () => {
    await edge?.close()
    await thread?.close()
  })

  test('the index thread sends its refusal back as a key and values, not as words', () => {
    assert.ok(refusal instanceof ProblemError, 'the refusal crosses back as a problem')
    assert.ok(isMessage(refusal.detail))
    assert.equal(refusal.detail.key, 'validation.field')
    const [fieldError] = refusal.extra.errors ?? []
    assert.equal(fieldError?.field, 'sort')
    assert.ok(fieldError && isMessage(fieldError.message))
    assert.equal(fieldError.message.key, 'validation.sort')
    // The logs and the command line read it in English.
    assert.match(refusal.message, /^sort: cannot sort by 'id'; allowed: /)
  })

  test('the same refusal answers ru in Russian and en in English, with its key', async () => {
    const ask = (language: string) => edge.inject({ url: '/deep', headers: { 'accept-language': language } })
    const russian = await ask('ru')
    const english = await ask('en')
    assert.equal(russian.statusCode, 400)
    assert.equal(russian.headers['content-language'], 'ru')
    assert.equal(english.headers['content-language'], 'en')
    const ru = russian.json()
    const en = english.json()
    assert.equal(ru.code, 'invalid-request')
    assert.equal(ru.messageKey, 'validation.field')
    assert.equal(en.messageKey, 'validation.field')
    assert.equal(ru.title, 'Некорректный запрос')
    assert.equal(en.title, 'Bad Request')
    assert.equal(ru.error, 'Bad Request')
    assert.match(ru.detail, /^sort: нельзя сортировать по «id»; можно по: /)
    assert.match(en.detail, /^sort: cannot sort by 'id'; allowed: /)
    assert.equal(ru.message, ru.detail)
    assert.match(ru.errors[0].message, /^нельзя сортировать по «id»; можно по: /)
    assert.match(en.errors[0].message, /^cannot sort by 'id'; allowed: /)
  })
})

eachDatabase('an import line refused deep in the file reaches the client in its language, with its key', (ctx) => {
  const app = useTestApp(ctx, { env: { MESSAGES_LANGUAGE: 'en' }, beforeEach: () => clearGlassPrices(ctx.db) })

  test('each line in Russian for ru and in English for en; the detail names its key', async () => {
    const csv = 'manufacturer;brand;model;price;purchase\nA;B;C;-1;1\n'
    const upload = (language: string) =>
      app().inject({
        method: 'POST',
        url: `${pricesPath}/import`,
        headers: { 'content-type': 'text/csv', 'accept-language': language },
        payload: csv,
      })
    const russian = (await upload('ru')).json()
    const english = (await upload('en')).json()
    assert.equal(russian.code, 'import-rejected')
    assert.equal(russian.messageKey, 'import.problems')
    assert.equal(english.messageKey, 'import.problems')
    assert.equal(russian.detail, 'В файле 1 ошибка; ничего не записано')
    assert.equal(english.detail, 'The file has 1 problem; nothing was written')
    assert.deepEqual(russian.problems, [{ line: 2, column: 'price', message: 'не может быть отрицательным' }])
    assert.deepEqual(english.problems, [{ line: 2, column: 'price', message: 'must not be negative' }])
  })
})
