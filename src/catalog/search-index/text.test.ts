import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { asciiNorm, CopyTextParser, compareCodePoints, normProbeCharacters, ProbedNorm } from './text.js'

describe('search index: text as PostgreSQL sees it', () => {
  test('code point order puts a character beyond U+FFFF after every character of U+E000…U+FFFF', () => {
    const texts = ['\u{1F600}', '\uFF21', 'z', 'Ж', 'a', '']
    assert.deepEqual([...texts].sort(compareCodePoints), ['', 'a', 'z', 'Ж', '\uFF21', '\u{1F600}'])
    // JavaScript's own order differs exactly there.
    assert.deepEqual([...texts].sort(), ['', 'a', 'z', 'Ж', '\u{1F600}', '\uFF21'])
    assert.equal(compareCodePoints('ab', 'abc') < 0, true)
    assert.equal(compareCodePoints('abc', 'abc'), 0)
  })

  test('ASCII is normalised here (spaces trimmed, lower case); other text is left to the database', () => {
    assert.equal(asciiNorm('  Ray-Ban\t '), 'ray-ban\t')
    assert.equal(asciiNorm('Ёжик'), undefined)
    assert.equal(asciiNorm('Caf\u00e9'), undefined)
  })

  test('COPY text output: tabs split fields, \\N is NULL, escapes are undone, lines may span chunks', () => {
    const rows: (string | null)[][] = []
    const parser = new CopyTextParser((fields) => rows.push(fields))
    for (const chunk of ['1\tRay\\tBan\t\\N\n2\tа\\\\б', '\tc\\nd\n3\t\t\\N']) parser.push(chunk)
    parser.end()
    assert.deepEqual(rows, [
      ['1', 'Ray\tBan', null],
      ['2', 'а\\б', 'c\nd'],
      ['3', '', null],
    ])
  })
})

test('ProbedNorm normalises here only text whose every character the database was seen to agree on', () => {
  const characters = normProbeCharacters()
  // A database that agrees everywhere but on `Ж` (left as it is) and `İ`.
  const answers = characters.map((character) =>
    character === 'Ж' || character === 'İ' ? character : character.toLowerCase().replace(/ё/g, 'е'),
  )
  const probed = new ProbedNorm(characters, answers)
  assert.equal(probed.asciiAgrees, true)
  assert.equal(probed.norm('  ЧЁРНЫЙ Ray-Ban № 5 '), 'черный ray-ban № 5')
  assert.equal(probed.norm('ЖЁЛТЫЙ'), undefined, 'Ж: the database must say')
  assert.equal(probed.norm('İzmir'), undefined)
  assert.equal(probed.norm('漢字'), undefined, 'a character never asked about')
  assert.equal(probed.norm('\u00a0a\u00a0'), '\u00a0a\u00a0', 'no-break spaces stay, as btrim keeps them')

  const turkish = new ProbedNorm(
    characters,
    characters.map((character) => (character === 'I' ? 'ı' : character.toLowerCase())),
  )
  assert.equal(turkish.asciiAgrees, false)
})
