import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { neutraliseFormula, restoreFormula } from './formula-cells.js'

/* The export's formula neutralisation and the import's inverse. */

test('cells a spreadsheet runs as formulas get a leading quote; others are written as they are', () => {
  for (const text of ['=1+1', '+1', '-RB01', '@SUM(A1)', '\t=1', '\r=1', "'RB"]) {
    assert.equal(neutraliseFormula(text), `'${text}`, JSON.stringify(text))
  }
  for (const text of ['RB01', 'Ray-Ban', ' =x', '', 'a=b']) assert.equal(neutraliseFormula(text), text)
})

test('a quote before anything else in an imported cell is kept', () => {
  assert.equal(restoreFormula("'RB"), "'RB")
  assert.equal(restoreFormula("'"), "'")
  assert.equal(restoreFormula("'-RB01"), '-RB01')
})

test('neutralise then restore gives back every text', () => {
  const alphabet = fc.constantFrom('=', '+', '-', '@', '\t', '\r', "'", 'a', ' ', '1')
  fc.assert(
    fc.property(fc.string({ unit: alphabet, maxLength: 6 }), (text) => {
      assert.equal(restoreFormula(neutraliseFormula(text)), text)
    }),
    { numRuns: 2000 },
  )
})
