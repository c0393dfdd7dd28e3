import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { checkDecimal, compareDecimal, markupPercent, parseDecimal } from './decimal.js'
import { isMessage, render } from './messages.js'

/* Decimal inputs read exactly from their text: no float ever decides a scale, a bound or an order. */

test('parseDecimal reads numbers and numeric strings to canonical text', () => {
  const cases: [number | string, string | undefined][] = [
    [1500, '1500'],
    ['1500.00', '1500'],
    [' +0012.3400 ', '12.34'],
    [1.15, '1.15'],
    [-0, '0'],
    ['-0.0', '0'],
    ['-12.5', '-12.5'],
    ['.5', '0.5'],
    ['5.', '5'],
    [1e-7, '0.0000001'],
    [1.5e21, '1500000000000000000000'],
    ['2E3', '2000'],
    ['', undefined],
    ['.', undefined],
    ['1,5', undefined],
    ['abc', undefined],
    ['1e999', undefined],
    [Number.NaN, undefined],
    [Number.POSITIVE_INFINITY, undefined],
  ]
  for (const [input, expected] of cases) assert.equal(parseDecimal(input)?.text, expected, String(input))
})

test('checkDecimal enforces scale and bounds on the digits, naming what is wrong', () => {
  const money = { min: '0', max: '99999999.99', scale: 2 }
  const problem = (input: number | string, rule: Parameters<typeof checkDecimal>[1]) => {
    const checked = checkDecimal(input, rule)
    return isMessage(checked) ? render(checked) : undefined
  }
  assert.equal(problem('99999999.99', money), undefined)
  assert.equal(problem('99999999.991', money), 'must have at most 2 decimal places')
  assert.equal(problem('100000000', money), 'must be between 0 and 99999999.99')
  assert.equal(problem(-0.01, money), 'must be between 0 and 99999999.99')
  assert.equal(problem(0, { above: '0' }), 'must be greater than 0')
  assert.equal(problem('1.10', { scale: 1 }), undefined, 'trailing zeros are no scale')
  assert.equal(problem('x', money), 'must be a number')
})

test('compareDecimal orders decimal text exactly as the numbers it denotes', () => {
  const decimal = fc
    .tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.integer({ min: 0, max: 6 }))
    .map(([negative, digits, scale]) => {
      const text = digits.toString().padStart(scale + 1, '0')
      const body = scale === 0 ? text : `${text.slice(0, -scale)}.${text.slice(-scale)}`
      return { text: `${negative ? '-' : ''}${body}`, value: (negative ? -digits : digits) * 10n ** BigInt(6 - scale) }
    })
  fc.assert(
    fc.property(decimal, decimal, (a, b) => {
      const expected = a.value < b.value ? -1 : a.value > b.value ? 1 : 0
      assert.equal(Math.sign(compareDecimal(parseDecimal(a.text)!, parseDecimal(b.text)!)), expected)
    }),
  )
  // Equal negatives are equal: 0, not -0. A random pair hits this only now and then, so it is pinned here.
  assert.equal(compareDecimal(parseDecimal('-0.000013')!, parseDecimal('-0.000013')!), 0)
  assert.equal(compareDecimal(parseDecimal('-1.5')!, parseDecimal('-1.50')!), 0)
  assert.equal(compareDecimal(parseDecimal('-0')!, parseDecimal('0')!), 0)
})

test('markupPercent is (price − purchase) / purchase × 100 exactly, rounded halves away from zero', () => {
  assert.equal(markupPercent(150, 100), '50.0')
  assert.equal(markupPercent('14990', '6200'), '141.8')
  assert.equal(markupPercent(1, 3), '-66.7')
  assert.equal(markupPercent('100', '100.00'), '0.0')
  // 0.05 % and −0.05 % exactly: halves go away from zero, where a float of 100.05 / 100 would not be exact.
  assert.equal(markupPercent('100.05', '100'), '0.1')
  assert.equal(markupPercent('99.95', '100'), '-0.1')
  assert.equal(markupPercent('99.99', '100'), '0.0')
  assert.equal(markupPercent('0', '0.01'), '-100.0')
  assert.equal(markupPercent('99999999.99', '0.01'), '999999999800.0')
  assert.equal(markupPercent('2', '3', 2), '-33.33')
  assert.equal(markupPercent(5, 0), undefined)
  assert.equal(markupPercent('5', 'x'), undefined)
})

test('markupPercent agrees with exact rational arithmetic for any prices of two decimals', () => {
  const cents = fc.bigInt({ min: 0n, max: 9_999_999_999n })
  fc.assert(
    fc.property(cents, cents, (price, purchase) => {
      const text = (units: bigint) => `${units / 100n}.${String(units % 100n).padStart(2, '0')}`
      const markup = markupPercent(text(price), text(purchase))
      if (purchase === 0n) return markup === undefined
      // Tenths of a percent: (price − purchase) × 1000 / purchase, to the nearest, halves away from zero.
      const numerator = (price - purchase) * 1000n
      const twice = (2n * (numerator < 0n ? -numerator : numerator)) / purchase
      const tenths = (twice + 1n) / 2n
      const expected = (numerator < 0n && tenths > 0n ? -tenths : tenths).toString()
      return parseDecimal(markup!)!.text === parseDecimal(`${expected.slice(0, -1) || '0'}.${expected.slice(-1)}`)!.text
    }),
  )
})
