import assert from 'node:assert/strict'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { posix } from 'node:path'
import { test } from 'node:test'
import GithubSlugger from 'github-slugger'
import { Lexer, type Token, walkTokens } from 'marked'
import { type Document, documents, projectRoot } from './docs.js'

/*
 * Every relative link and image of README.md and docs/*.md leads somewhere: its file exists, and its `#anchor`
 * names a heading of that file as GitHub makes a heading's anchor (its text lower-cased, punctuation dropped,
 * spaces as hyphens; a repeated one numbered -1, -2, …). Links with a scheme (http:, https:, mailto:) are not
 * followed.
 */

/** A heading's text as it is shown: code spans without their backticks, links and emphasis by their text. */
function shownText(tokens: Token[]): string {
  return tokens
    .map((token) => {
      if ('tokens' in token && token.tokens) return shownText(token.tokens)
      if (token.type === 'html') return ''
      return 'text' in token ? token.text : ''
    })
    .join('')
}

/** The anchors GitHub gives a document's headings, in order. */
export function headingAnchors(markdown: string): Set<string> {
  const slugger = new GithubSlugger()
  const anchors = new Set<string>()
  walkTokens(Lexer.lex(markdown), (token) => {
    if (token.type === 'heading') anchors.add(slugger.slug(shownText(token.tokens ?? [])))
  })
  return anchors
}

/** The targets of a document's links and images, outside code blocks and code spans. */
function linkTargets(markdown: string): string[] {
  const targets: string[] = []
  walkTokens(Lexer.lex(markdown), (token) => {
    if (token.type === 'link' || token.type === 'image') targets.push(token.href)
  })
  return targets
}

/**
 * The relative links of `docs` that lead nowhere, as `file: target (why)`. `read` gives a file's text by its path
 * from the project's root: a string for a Markdown file, null for any other file or a folder, undefined when there
 * is none.
 */
export function brokenLinks(docs: Document[], read: (path: string) => string | null | undefined): string[] {
  const broken: string[] = []
  for (const doc of docs) {
    for (const target of linkTargets(doc.text)) {
      if (/^([a-z][a-z0-9+.-]*:|\/\/)/i.test(target)) continue
      const hash = target.indexOf('#')
      const file = decodeURIComponent(hash === -1 ? target : target.slice(0, hash))
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1))
      const path = file === '' ? doc.path : posix.normalize(posix.join(posix.dirname(doc.path), file))
      const fail = (why: string) => broken.push(`${doc.path}: ${target} (${why})`)
      if (path.startsWith('../') || path.startsWith('/')) {
        fail('outside the project')
        continue
      }
      const text = file === '' ? doc.text : read(path)
      if (text === undefined) fail(`no file ${path}`)
      else if (anchor !== undefined && text === null) fail(`${path} is not a Markdown file`)
      else if (anchor !== undefined && text !== null && !headingAnchors(text).has(anchor))
        fail(`no heading of ${path} has the anchor #${anchor}`)
    }
  }
  return broken
}

/** A file of the project by its path from the root. */
function readProjectFile(path: string): string | null | undefined {
  const full = `${projectRoot}${path}`
  if (!existsSync(full)) return undefined
  return statSync(full).isFile() && path.endsWith('.md') ? readFileSync(full, 'utf8') : null
}

test('anchors are made from headings as GitHub makes them', () => {
  const anchors = headingAnchors(
    [
      '# optics-catalog',
      '## Inputs: what is converted',
      "## The price manager's desk",
      '### `POST …/import`: Uploading the glass price list over HTTP',
      '## Paging',
      '## Paging',
      '```sh',
      '# {"not":"a heading"}',
      '```',
      '## What keeps the SQL path fast at a million goods',
      '## Scenarios (a)–(i) with the result caches off',
    ].join('\n\n'),
  )
  assert.deepEqual(
    [...anchors],
    [
      'optics-catalog',
      'inputs-what-is-converted',
      'the-price-managers-desk',
      'post-import-uploading-the-glass-price-list-over-http',
      'paging',
      'paging-1',
      'what-keeps-the-sql-path-fast-at-a-million-goods',
      'scenarios-ai-with-the-result-caches-off',
    ],
  )
})

test('a link to a missing file, a missing heading or a heading of a file that is not Markdown is found', () => {
  const files: Record<string, string | null> = {
    'docs/api.md': '# The API\n\n## Paging\n',
    'docs/screenshots/desk.png': null,
  }
  const docs: Document[] = [
    {
      path: 'README.md',
      text: [
        '[ok](docs/api.md) [ok](docs/api.md#paging) [ok](#the-readme) ![ok](docs/screenshots/desk.png)',
        '[gone](docs/jobs.md) [gone](docs/api.md#jobs) [gone](#paging) [gone](docs/screenshots/desk.png#x)',
        '[not followed](https://example.com/x#y) `[code](nowhere.md)`',
        '# The README',
      ].join('\n\n'),
    },
    { path: 'docs/web-app.md', text: '[ok](api.md#paging) [ok](../README.md#the-readme) [gone](../../x.md)' },
  ]
  assert.deepEqual(
    brokenLinks(docs, (path) => (path === 'README.md' ? docs[0]?.text : files[path])),
    [
      'README.md: docs/jobs.md (no file docs/jobs.md)',
      'README.md: docs/api.md#jobs (no heading of docs/api.md has the anchor #jobs)',
      'README.md: #paging (no heading of README.md has the anchor #paging)',
      'README.md: docs/screenshots/desk.png#x (docs/screenshots/desk.png is not a Markdown file)',
      'docs/web-app.md: ../../x.md (outside the project)',
    ],
  )
})

test('every relative link and anchor of the README and docs/ resolves', () => {
  const docs = documents()
  assert.ok(docs.length >= 2, 'the README and docs/')
  const links = docs.flatMap((doc) => linkTargets(doc.text)).filter((target) => !/^[a-z]+:/i.test(target))
  assert.ok(links.length >= 50, `only ${links.length} relative links`)
  assert.deepEqual(brokenLinks(docs, readProjectFile), [])
})
