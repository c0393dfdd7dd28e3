import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { runCli } from '../src/cli.js'
import { projectRoot, shellBlocks } from './docs.js'
import { eachDatabase } from './harness.js'

/*
 * The command-line examples of the README and docs/ run as written: every `npm run cli -- …` line of their `sh`
 * blocks, in reading order (README.md, then docs/*.md by name), through the CLI's own entry (`runCli`, what `npm run cli` calls) against a fresh database: an
 * empty data directory on the embedded database, the suite's fresh schema on the server. Files are read and
 * written in a directory holding `examples/`; a `| head` keeps the first ten lines. Each must exit 0.
 */

/** Commands for the embedded database's directory alone. */
const embeddedOnly = new Set(['backup', 'restore'])

/** The `npm run cli -- …` lines, each with the file and line it is on. */
function cliExamples(): { line: string; command: string }[] {
  const examples: { line: string; command: string }[] = []
  for (const { path, line: first, script } of shellBlocks()) {
    for (const [offset, line] of script.split('\n').entries()) {
      if (line.startsWith('npm run cli -- ')) examples.push({ line: `${path}:${first + offset}`, command: line })
    }
  }
  return examples
}

test('the README and docs/ have command-line examples to run: seed, refresh, migrate, import, export, backup and restore', () => {
  const commands = cliExamples().map(({ command }) => command.split(/\s+/)[4])
  for (const command of ['seed', 'refresh', 'migrate', 'import', 'export', 'backup', 'restore'])
    assert.ok(commands.includes(command), command)
})

eachDatabase('README and docs/ command line', (ctx) => {
  let work: string
  let env: Record<string, string>
  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'optics-readme-cli-'))
    symlinkSync(join(projectRoot, 'examples'), join(work, 'examples'))
    if (ctx.target === 'postgres') {
      const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(ctx.db.primary)
      const url = new URL(process.env.TEST_DATABASE_URL ?? '')
      url.searchParams.set('options', `-c search_path=${rows[0]?.schema},public`)
      env = { DATABASE_URL: url.toString() }
    } else {
      env = { DATA_DIR: join(work, 'data') }
    }
  })
  after(() => rmSync(work, { recursive: true, force: true }))

  /** Runs one command line through the CLI's entry, as `npm run cli -- …` does, and collects what it prints. */
  async function run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    let stdout = ''
    let stderr = ''
    const sink = (write: (text: string) => void) =>
      new Writable({
        write(chunk, _encoding, done) {
          write(String(chunk))
          done()
        },
      }) as unknown as NodeJS.WriteStream
    const code = await runCli(argv, {
      stdout: sink((text) => {
        stdout += text
      }),
      stderr: sink((text) => {
        stderr += text
      }),
      env: { LOG_LEVEL: 'silent', ...env },
    })
    return { code, stdout, stderr }
  }

  test('every `npm run cli` example exits 0, in order, on a fresh database', { timeout: 280_000 }, async () => {
    const output: string[] = []
    // The embedded database as a service that has run once leaves it.
    if (ctx.target === 'pglite') assert.equal((await run(['migrate'])).code, 0)
    for (const { line, command } of cliExamples()) {
      const [words = '', pipe] = command.replace(/\s+#.*$/, '').split('|')
      assert.ok(!/["'$`\\]/.test(words), `${line}: the test splits a command on spaces only`)
      const argv = words
        .trim()
        .split(/\s+/)
        .slice(4)
        .map((word) => (/\.(csv|xlsx|tar\.gz)$/.test(word) ? join(work, word) : word))
      const { code, stdout, stderr } = await run(argv)
      if (ctx.target === 'postgres' && embeddedOnly.has(argv[0] ?? '')) {
        // The docs say so: on a server the embedded database's backup and restore refuse and name pg_dump's kin.
        assert.equal(code, 2, `${line}: ${command}\n${stderr}`)
        assert.match(stderr, /with DATABASE_URL use pg_/)
        continue
      }
      assert.equal(code, 0, `${line}: ${command}\n${stderr}`)
      output.push(pipe?.trim() === 'head' ? stdout.split('\n').slice(0, 10).join('\n') : stdout)
    }
    const all = output.join('\n')
    assert.match(all, /glasses: 3000 SKUs/)
    assert.match(all, /glasses prices: \d+ rows imported \(\d+ added, \d+ updated, \d+ unchanged\)/)
    assert.ok(existsSync(join(work, 'glass-prices.xlsx')), 'the XLSX export was written')
    if (ctx.target === 'pglite') assert.match(all, /restored into/)
  })
})
