import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type MessageKey, translate } from '../i18n/index.js'
import {
  describeChange,
  describeFormula,
  describeScheduledUpload,
  effectiveInstant,
  isDecimalOrBlank,
  normaliseDecimal,
} from './formula.js'

const ru = (key: MessageKey, values?: Record<string, string | number>) => translate('ru', key, values)
const en = (key: MessageKey, values?: Record<string, string | number>) => translate('en', key, values)

test('a decimal is read as the manager types it: a comma is a point, thousands spaces are dropped', () => {
  assert.equal(normaliseDecimal('1,15'), '1.15')
  assert.equal(normaliseDecimal(' 12\u00a0990,5 '), '12990.5')
  assert.equal(normaliseDecimal('-10'), '-10')
  for (const valid of ['', '  ', '3 000', '2,5', '-10', '+4', '.5']) assert.equal(isDecimalOrBlank(valid), true, valid)
  for (const invalid of ['1,1x', 'abc', '1.2.3', '--1', '1e3']) assert.equal(isDecimalOrBlank(invalid), false, invalid)
})

test('the formula in words names the base, the changed price, the coefficient, the difference and the rounding', () => {
  const body = {
    priceTypeBase: 'PURCHASE',
    priceTypeChange: 'RETAIL',
    coefficient: '2,5',
    difference: '-10',
    round: 'TENS',
  } as const
  assert.equal(
    describeFormula(body, ru),
    'Новая розничная цена = закупочная цена × 2.5 − 10 ₽, с округлением до десятков рублей (половина — вверх).',
  )
  assert.equal(
    describeFormula(body, en),
    'New retail price = purchase price × 2.5 − 10 RUB, rounded to tens of roubles (halves up).',
  )
})

test('a blank coefficient and a zero or blank difference are left out of the words; a plus difference is added', () => {
  assert.equal(
    describeFormula({ priceTypeBase: 'RETAIL', priceTypeChange: 'PURCHASE', difference: '0,00', round: 'WHOLE' }, en),
    'New purchase price = retail price, rounded to whole roubles (halves up).',
  )
  assert.equal(
    describeFormula(
      { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: '1.1', difference: '+250', round: 'HUNDREDS' },
      en,
    ),
    'New retail price = retail price × 1.1 + 250 RUB, rounded to hundreds of roubles (halves up).',
  )
})

test('a percentage, a price ending and its direction, and the effective time are said in words', () => {
  const body = {
    priceTypeBase: 'RETAIL',
    priceTypeChange: 'RETAIL',
    percent: '10',
    round: 'ENDS_90',
    direction: 'UP',
  } as const
  assert.equal(
    describeFormula(body, en),
    'New retail price = retail price + 10 %, rounded to a price ending in …90 (upwards).',
  )
  assert.equal(
    describeFormula(body, ru),
    'Новая розничная цена = розничная цена + 10 %, с округлением до цены, оканчивающейся на …90 (в большую сторону).',
  )
  assert.equal(
    describeFormula({ ...body, percent: '-15', round: 'ENDS_99', direction: 'NEAREST' }, en),
    'New retail price = retail price − 15 %, rounded to a price ending in …99 (halves up).',
  )
  const scheduled = describeFormula({ ...body, effectiveAt: '2026-12-01T06:00:00.000Z' }, en)
  assert.match(scheduled, /\(upwards\)\. Takes effect .*2026.*\.$/)
})

test('a bulk change of the change log in words: formula, then selection, decimals as the language writes them', () => {
  const change = {
    action: 'BULK_CHANGE',
    parameters: {
      filter: { brand: 'Ray-Ban', purchaseFrom: '1000.5' },
      priceTypeBase: 'PURCHASE',
      priceTypeChange: 'RETAIL',
      coefficient: '2.5',
      difference: '-10',
      round: 'TENS',
      priceFrom: '3000',
      priceTo: '5000',
    },
  } as const
  assert.equal(
    describeChange(change, ru),
    'розница = закупка × 2,5 − 10, до десятков; бренд «Ray-Ban»; закупка от 1000,5; закупка от 3000 до 5000',
  )
  assert.equal(
    describeChange(change, en),
    'retail = purchase × 2.5 − 10, to tens; brand «Ray-Ban»; purchase from 1000.5; purchase from 3000 to 5000',
  )
  assert.equal(
    describeChange(
      { action: 'BULK_CHANGE', parameters: { priceTypeBase: 'RETAIL', priceTypeChange: 'PURCHASE', round: 'WHOLE' } },
      ru,
    ),
    'закупка = розница, до рублей',
  )
})

test('an upload of the change log is its mode in words; what has no words is left to the recorded parameters', () => {
  assert.equal(
    describeChange({ action: 'IMPORT', parameters: { mode: 'upsert', replace: false } }, ru),
    'режим «обновить»',
  )
  assert.equal(describeChange({ action: 'REVERT', parameters: { batch: 4 } }, ru), undefined)
  assert.equal(describeChange({ action: 'BULK_CHANGE', parameters: { round: 'SOMETIMES' } }, ru), undefined)
})

test('the change log says a percentage, a price ending upwards and an exact selection in words', () => {
  const change = {
    action: 'BULK_CHANGE',
    parameters: {
      filter: { brand: 'Ray-Ban', exact: ['brand'] },
      priceTypeBase: 'RETAIL',
      priceTypeChange: 'RETAIL',
      percent: '10',
      round: 'ENDS_90',
      direction: 'UP',
    },
  } as const
  assert.equal(
    describeChange(change, ru),
    'розница = розница + 10 %, окончание …90 (в большую сторону); бренд точно «Ray-Ban»',
  )
})

test('a scheduled upload is said by its file and its mode, as the change log says an upload', () => {
  const parameters = { fileName: 'prices.csv', size: 120, format: 'csv', mode: 'upsert', conflicts: 0 }
  assert.equal(describeScheduledUpload(parameters, ru), 'Загрузка файла «prices.csv», режим «обновить»')
  assert.equal(describeScheduledUpload(parameters, en), 'Upload of the file “prices.csv”, mode “update”')
  assert.equal(describeScheduledUpload({ mode: 'replace' }, ru), 'Загрузка файла, режим «заменить»')
  assert.equal(describeScheduledUpload({ fileName: 'a.xlsx', mode: 'odd' }, ru), 'Загрузка файла «a.xlsx»')
  assert.equal(describeScheduledUpload({ size: 1 }, ru), undefined)
})

test('the picked local date and time is sent as an instant; a blank or unreadable one is at once', () => {
  const local = '2030-03-01T09:30:00'
  assert.equal(effectiveInstant(local), new Date(2030, 2, 1, 9, 30, 0).toISOString())
  assert.equal(effectiveInstant(''), undefined)
  assert.equal(effectiveInstant('not a date'), undefined)
})
