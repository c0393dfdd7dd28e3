import assert from 'node:assert/strict'
import { test } from 'node:test'
import { kinds } from '../../../src/catalog/kinds/kinds.js'
import { kindForm } from '../../../src/catalog/search/kind-form-routes.js'
import { readPrescription } from '../../../src/catalog/search/prescription.js'
import { checkNumber, transposedPrescription } from './prescription.js'

/*
 * The page checks a prescription as the API does: for every prescription field of every kind, the page accepts
 * a value exactly when the API does, and says the same transposition the API searches with.
 */

const samples = [
  '-2.75',
  '2.5',
  '+1.25',
  '0',
  '30',
  '-30',
  '30.25',
  '-2.7',
  '1.1',
  '90',
  '180',
  '181',
  '-1',
  '45.5',
  'abc',
]

test('the page accepts a prescription value exactly when the API does, for every kind', () => {
  let checked = 0
  for (const kind of kinds) {
    for (const field of kindForm(kind).fields.filter((candidate) => candidate.input === 'prescription')) {
      for (const value of samples) {
        const api = (() => {
          try {
            readPrescription(kind, { [field.name]: value })
            return true
          } catch {
            return false
          }
        })()
        assert.equal(checkNumber(field, value).ok, api, `${kind.path}.${field.name} = ${value}`)
        checked++
      }
    }
  }
  assert.ok(checked >= 7 * samples.length)
})

test('a typographic minus (−, ‒, –) is a minus: the page sends what the API reads as the same power', () => {
  let checked = 0
  for (const kind of kinds) {
    for (const field of kindForm(kind).fields.filter((candidate) => candidate.role === 'sphere')) {
      const expected = readPrescription(kind, { [field.name]: '-2.25' })
      for (const minus of ['\u2212', '\u2012', '\u2013']) {
        const check = checkNumber(field, ` ${minus}2,25`)
        assert.deepEqual(check, { ok: true, value: '-2.25' }, `${kind.path}.${field.name} ${minus}`)
        assert.deepEqual(readPrescription(kind, { [field.name]: check.value }), expected)
        checked++
      }
    }
  }
  assert.ok(checked >= 3)
})

test('a plus cylinder is transposed on the page as the API transposes it', () => {
  for (const kind of kinds) {
    const fields = kindForm(kind).fields
    const roles = new Map(fields.filter((field) => field.role).map((field) => [field.role, field.name]))
    const cylinder = roles.get('cylinder')
    if (!cylinder) continue
    const values: Record<string, string> = { [cylinder]: '1.25' }
    if (roles.get('sphere')) values[roles.get('sphere')!] = '-2'
    if (roles.get('axis')) values[roles.get('axis')!] = '30'
    const page = transposedPrescription(fields, values)
    const api = readPrescription(kind, values)
    assert.ok(page, kind.path)
    for (const [name, value] of Object.entries(page))
      assert.equal(Number(value), Number(api[name]), `${kind.path}.${name}`)
    assert.equal(transposedPrescription(fields, { [cylinder]: '-1.25' }), undefined)
  }
})
