import assert from 'node:assert/strict'
import { test } from 'node:test'
import {
  catalogues,
  joinTexts,
  type MessageKey,
  type MessageValues,
  message,
  messageOf,
  messageText,
  negotiateLanguage,
  placeholdersOf,
  render,
} from './messages.js'

/* Problem details in Russian or English: the negotiation and the catalogue's grammar. */

test('Accept-Language picks ru or en by weight, regions counted as their language, else the fallback', () => {
  const cases: [string | undefined, 'en' | 'ru', 'en' | 'ru'][] = [
    [undefined, 'ru', 'ru'],
    ['', 'en', 'en'],
    ['ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7', 'en', 'ru'],
    ['en-GB, ru;q=0.5', 'ru', 'en'],
    ['de, fr;q=0.8', 'ru', 'ru'],
    ['ru;q=0, en;q=0.1', 'ru', 'en'],
    ['*', 'en', 'en'],
  ]
  for (const [header, fallback, expected] of cases) {
    assert.equal(negotiateLanguage(header, fallback), expected, String(header))
  }
})

test('the catalogue words counts in each language and keeps words not in it in English', () => {
  const ru = (key: MessageKey, values: MessageValues = {}) => render(messageOf(key, values), 'ru')
  assert.equal(ru('import.problems', { count: 1 }), 'В файле 1 ошибка; ничего не записано')
  assert.equal(ru('import.problems', { count: 3 }), 'В файле 3 ошибки; ничего не записано')
  assert.equal(
    ru('import.problemsListed', { count: 112, listed: 100 }),
    'В файле 112 ошибок (показаны первые 100); ничего не записано',
  )
  assert.equal(messageText('import.problems', { count: 1 }), 'The file has 1 problem; nothing was written')
  assert.equal(ru('import.decimals', { scale: 2 }), 'больше 2 знаков после запятой')
  assert.equal(ru('import.fieldCount', { count: 1, header: 5 }), '1 поле, а в заголовке 5')
  assert.equal(ru('import.notNumber', { value: '12,5' }), 'должно быть числом (получено «12,5»)')
  assert.equal(render('something new', 'ru'), 'something new')
  assert.equal(render(message('validation.required'), 'en'), 'is required')
})

test('a message is its key and values, plain data: a value it names but is not given is refused where it is made (by type, and when the key is known only at run time)', () => {
  const made = message('entry.notFound', { id: 7 })
  assert.deepEqual(structuredClone(made), { key: 'entry.notFound', values: { id: 7 } })
  assert.equal(render(structuredClone(made), 'ru'), 'Нет позиции прайс-листа оправ с id 7')
  assert.throws(() => messageOf('entry.notFound'), /message value id is missing/)
  // @ts-expect-error: the key's values are typed, and entry.notFound takes an id
  assert.throws(() => message('entry.notFound', { count: 1 }), /message value id is missing/)
})

test('the Russian and English catalogues have the same keys, and each key the same values in both', () => {
  assert.deepEqual(Object.keys(catalogues.ru).sort(), Object.keys(catalogues.en).sort())
  for (const [key, english] of Object.entries(catalogues.en)) {
    assert.deepEqual(placeholdersOf(catalogues.ru[key as MessageKey]), placeholdersOf(english), key)
  }
})

test('every message comes out in both languages with its values, and nothing left unfilled', () => {
  for (const [key, english] of Object.entries(catalogues.en) as [MessageKey, string][]) {
    // Counts are numbers (5 picks the plural of both languages); other values are distinct words without spaces.
    const values: Record<string, string | number> = Object.fromEntries(
      placeholdersOf(english).map((name, index) => [name, `v${index}x`]),
    )
    for (const match of english.matchAll(/\{(\w+)\|/g)) values[match[1] ?? ''] = 5
    for (const language of ['en', 'ru'] as const) {
      const words = render(messageOf(key, values), language)
      assert.doesNotMatch(words, /\{\w+(\|[^}]*)?\}/, `${key} (${language})`)
      for (const value of Object.values(values)) {
        if (typeof value === 'string') assert.ok(words.includes(value), `${key} (${language}) shows ${value}`)
      }
    }
  }
})

test('a detail quoting field errors is in one language throughout, the field names kept', () => {
  const errors = joinTexts(
    [
      ['price', ' ', message('validation.number')],
      ['round', ' ', message('validation.oneOf', { allowed: 'UP, DOWN' })],
    ],
    '; ',
  )
  const detail = message('validation.invalidBody', { errors })
  assert.equal(
    render(detail, 'ru'),
    'Ошибки в теле запроса: price должно быть числом; round должно быть одним из: UP, DOWN',
  )
  assert.equal(render(detail, 'en'), 'Invalid request body: price must be a number; round must be one of UP, DOWN')
  const field = message('validation.field', { field: 'sort', message: message('validation.blank') })
  assert.equal(render(field, 'ru'), 'sort: не может быть пустым')
})
