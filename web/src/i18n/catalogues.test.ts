import assert from 'node:assert/strict'
import { test } from 'node:test'
import { en } from './en.js'
import { ru } from './ru.js'

const placeholders = (text: string): string[] => [...text.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!).sort()

test('the Russian and English catalogues have the same keys', () => {
  assert.deepEqual(Object.keys(en).sort(), Object.keys(ru).sort())
})

test('every text of both catalogues is filled and names the same placeholders in both languages', () => {
  for (const [key, russian] of Object.entries(ru)) {
    const english = en[key as keyof typeof ru]
    assert.ok(russian.trim() && english.trim(), `${key} is empty`)
    assert.deepEqual(placeholders(english), placeholders(russian), `${key}: placeholders differ`)
  }
})
