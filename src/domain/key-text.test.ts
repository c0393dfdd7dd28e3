import assert from 'node:assert/strict'
import { test } from 'node:test'
import { canonicalText, hasLoneSurrogate, keyTextProblem } from './key-text.js'
import { render } from './messages.js'

/* The one form of keys (no database: the SQL twin is checked in look-alike-keys.test.ts on both databases). */

test('canonicalText makes five look-alike spellings one text', () => {
  const spellings = ['Café 01', 'Cafe\u0301 01', 'Caf\u200Bé 01', 'Café\u00A001', 'Café\u202F01']
  assert.deepEqual(new Set(spellings.map(canonicalText)), new Set(['Café 01']))
})

test('canonicalText removes every invisible character it names and keeps visible ones', () => {
  assert.equal(canonicalText('\uFEFFa\u00ADb\u061Cc\u180Ed\u200Ce\u200Df\u200Eg\u200Fh\u2060i\u2064j'), 'abcdefghij')
  assert.equal(canonicalText('Ёлка\u2007Ø'), 'Ёлка Ø')
})

test('canonicalText is idempotent and leaves ASCII as it is, untrimmed', () => {
  for (const text of ['  Ray-Ban  ', 'Cafe\u0301\u00A0', 'x\u200B\u200By', '한국어 \u1100\u1161']) {
    assert.equal(canonicalText(canonicalText(text)), canonicalText(text))
  }
  assert.equal(canonicalText('  Ray-Ban\t'), '  Ray-Ban\t')
})

test('keyTextProblem refuses bidi controls, U+FFFD and unpaired surrogates, and nothing else', () => {
  assert.match(render(keyTextProblem('RB\u202E4512') ?? ''), /bidirectional/)
  assert.match(render(keyTextProblem('\u2066x\u2069') ?? ''), /bidirectional/)
  assert.match(render(keyTextProblem('CA \uFFFD') ?? ''), /UTF-8/)
  assert.match(render(keyTextProblem('CA \uD800') ?? ''), /unpaired surrogate/)
  assert.equal(keyTextProblem('Ёлка 😎 Café'), undefined)
  assert.equal(keyTextProblem('plain'), undefined)
})

test('hasLoneSurrogate tells a pair from a lone half', () => {
  assert.equal(hasLoneSurrogate('😎'), false)
  assert.equal(hasLoneSurrogate('\uD83D'), true)
  assert.equal(hasLoneSurrogate('x\uDE0E'), true)
  assert.equal(hasLoneSurrogate('ascii'), false)
})
