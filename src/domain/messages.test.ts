import assert from 'node:assert/strict'
import { test } from 'node:test'
import { catalogues, type MessageKey, messageText, negotiateLanguage, placeholdersOf, translate } from './messages.js'

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

test('the catalogue words counts in Russian and keeps unknown messages in English', () => {
  assert.equal(translate('The file has 1 problem; nothing was written', 'ru'), 'В файле 1 ошибка; ничего не записано')
  assert.equal(translate('The file has 3 problems; nothing was written', 'ru'), 'В файле 3 ошибки; ничего не записано')
  assert.equal(
    translate('The file has 112 problems (the first 100 listed); nothing was written', 'ru'),
    'В файле 112 ошибок (показаны первые 100); ничего не записано',
  )
  assert.equal(translate('has more than 2 decimals', 'ru'), 'больше 2 знаков после запятой')
  assert.equal(translate('has 1 field, the header has 5', 'ru'), '1 поле, а в заголовке 5')
  assert.equal(translate("must be a number (got '12,5')", 'ru'), 'должно быть числом (получено «12,5»)')
  assert.equal(translate('something new', 'ru'), 'something new')
  assert.equal(translate('is required', 'en'), 'is required')
})

test('the Russian and English catalogues have the same keys, and each key the same values in both', () => {
  assert.deepEqual(Object.keys(catalogues.ru).sort(), Object.keys(catalogues.en).sort())
  for (const [key, english] of Object.entries(catalogues.en)) {
    assert.deepEqual(placeholdersOf(catalogues.ru[key as MessageKey]), placeholdersOf(english), key)
  }
})

test('every English message reads back as its key and values, and so comes out in Russian', () => {
  for (const [key, english] of Object.entries(catalogues.en) as [MessageKey, string][]) {
    // Counts are numbers (5 picks the plural of both languages); other values are distinct words without spaces.
    const values = Object.fromEntries(placeholdersOf(english).map((name, index) => [name, `v${index}x`]))
    for (const match of english.matchAll(/\{(\w+)\|/g)) values[match[1] ?? ''] = '5'
    assert.equal(translate(messageText(key, values), 'ru'), messageText(key, values, 'ru'), key)
  }
})

test('a detail quoting field errors is Russian throughout, the field names kept', () => {
  assert.equal(
    translate('Invalid request body: price must be a number; round must be one of UP, DOWN', 'ru'),
    'Ошибки в теле запроса: price должно быть числом; round должно быть одним из: UP, DOWN',
  )
  assert.equal(translate('sort: must not be blank', 'ru'), 'sort: не может быть пустым')
})
