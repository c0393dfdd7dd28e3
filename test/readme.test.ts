import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { seedCatalogue } from '../src/demo/demo-catalogue.js'
import { shellBlocks } from './docs.js'
import { buildTestApp, eachDatabase } from './harness.js'

/*
 * The README and docs/ run as written: every shell example that talks to the service with curl is run, in reading
 * order (README.md, then docs/*.md by name, each from top to bottom), against a fresh service holding the demo
 * catalogue `npm start` loads (the same seed and scale, so the same ids), from a directory holding `examples/`.
 * Any answer outside 2xx fails the test: the walkthroughs take their ids from earlier answers, so they must not
 * meet a duplicate, a stale ETag or a missing change. Examples that need another process (the server, the CLI, a
 * token) are left to their own tests.
 */

const README_URL = 'http://127.0.0.1:8080'

/** The `sh` blocks whose every command is a curl call (or a shell variable or function for them). */
function curlExamples(): { where: string; script: string }[] {
  const examples: { where: string; script: string }[] = []
  for (const { path, line, script } of shellBlocks()) {
    const commands = script
      .replace(/\\\n/g, ' ')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'))
    const runnable = commands.every((command) => /^(curl\s|[a-z]+=|[a-z]+\(\)\s*\{)/.test(command))
    if (!runnable || !script.includes('curl') || script.includes('$TOKEN')) continue
    examples.push({ where: `${path}:${line}`, script })
  }
  return examples
}

function runShell(script: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script], { cwd })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }))
  })
}

test('the README and docs/ have curl examples to run, the search, the price list and its files among them', () => {
  const examples = curlExamples()
  assert.ok(examples.length >= 8)
  for (const path of ['/good/nomenclature/search/', '/glasses/prices/list', '/glasses/prices/import', '/export?'])
    assert.ok(
      examples.some(({ script }) => script.includes(path)),
      path,
    )
})

eachDatabase('README and docs/ walkthrough', (ctx) => {
  let app: FastifyInstance
  let base: string
  let work: string
  before(async () => {
    await seedCatalogue(ctx.db, { scale: 3000 })
    app = await buildTestApp(ctx.db)
    await app.listen({ port: 0, host: '127.0.0.1' })
    base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    work = mkdtempSync(join(tmpdir(), 'optics-readme-'))
    symlinkSync(new URL('../examples', import.meta.url).pathname, join(work, 'examples'))
  })
  after(async () => {
    await app?.close()
    if (work) rmSync(work, { recursive: true, force: true })
  })

  test('every curl example answers 2xx, in order, on the demo catalogue', { timeout: 120_000 }, async () => {
    // Each curl call reports its status on standard error, where the examples' own output does not go.
    const prelude = `set -e -o pipefail
curl() { command curl -sS -w '%{stderr}HTTP %{http_code} %{url_effective}\\n' "$@"; }
`
    const script = curlExamples()
      .map(({ where, script }) => `echo "${where}" >&2\n${script}`)
      .join('\n')
      .replaceAll(README_URL, base)
    const result = await runShell(prelude + script, work)
    assert.equal(result.code, 0, result.stderr)
    const calls = result.stderr.split('\n').filter((line) => line.startsWith('HTTP '))
    assert.ok(calls.length >= 20, result.stderr)
    const failed = calls.filter((line) => !/^HTTP 2\d\d /.test(line))
    assert.deepEqual(failed, [], `${result.stderr}\n${result.stdout.slice(-2000)}`)
    // The three `curl -OJ` downloads took three names.
    assert.equal(readdirSync(work).filter((name) => name.startsWith('glass-prices-')).length, 3)
  })
})
