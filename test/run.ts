import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { buildPgliteTemplate } from './harness.js'

/*
 * `npm test`: builds the migrated PGlite template once (and the web app, when a selected test serves it), then
 * runs every `*.test.ts` under src/, test/, bench/ and web/ with Node's test runner. Arguments narrow the run to
 * files whose path contains one of them.
 */

function findTests(directory: string): string[] {
  const found: string[] = []
  for (const name of readdirSync(directory)) {
    const path = join(directory, name)
    if (name === 'node_modules' || name.startsWith('.')) continue
    if (statSync(path).isDirectory()) found.push(...findTests(path))
    else if (name.endsWith('.test.ts')) found.push(relative(process.cwd(), path))
  }
  return found
}

const filters = process.argv.slice(2)
const files = ['src', 'test', 'bench', 'web']
  .flatMap((directory) => {
    try {
      return findTests(directory)
    } catch {
      return []
    }
  })
  .filter((file) => filters.length === 0 || filters.some((filter) => file.includes(filter)))
  .sort()

if (!process.env.TEST_DATABASE_URL) {
  process.stdout.write('TEST_DATABASE_URL is not set: suites run on PGlite only; the PostgreSQL half is skipped.\n')
}

// The tests of the served web app need it built (what `npm run build` does for `npm start`): once, here, so the
// test files running in parallel never build it at the same time.
const servesWebApp = (file: string) => file.startsWith(join('test', 'browser')) || file.endsWith('web-app.test.ts')
if (files.some(servesWebApp)) {
  const build = spawnSync('npm', ['run', 'build:web', '--silent'], { stdio: 'inherit' })
  if (build.status !== 0) process.exit(build.status ?? 1)
}

const work = mkdtempSync(join(tmpdir(), 'optics-test-run-'))
const template = join(work, 'template')
await buildPgliteTemplate(template)

/**
 * Runs `tests` with Node's test runner, its report passed through as it comes; resolves with the exit status, the
 * report, and the files whose process died outside any test with V8's own fatal error.
 */
function runTests(tests: readonly string[]): Promise<{ status: number; report: string; crashed: string[] }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      `--test-concurrency=${Math.max(2, availableParallelism())}`,
      '--test-timeout=900000',
      ...tests,
    ],
    { stdio: ['inherit', 'pipe', 'pipe'], env: { ...process.env, TEST_PGLITE_TEMPLATE: template } },
  )
  let report = ''
  child.stdout.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk)
    report += chunk.toString('utf8')
  })
  child.stderr.on('data', (chunk: Buffer) => {
    process.stderr.write(chunk)
    report += chunk.toString('utf8')
  })
  return new Promise((resolve) => {
    child.on('close', (code) => {
      // A file's process that ended outside its tests is reported as the file itself, failed.
      const failedFiles = tests.filter((file) => report.includes(`✖ ${file} (`))
      const crashed = /# Fatal error in .*\n# Check failed: /.test(report) ? failedFiles : []
      resolve({ status: code ?? 1, report, crashed })
    })
  })
}

/** The count of failed tests in a report's summary. */
const failures = (report: string) => Number(/ℹ fail (\d+)/.exec(report)?.[1] ?? Number.NaN)

let { status, report, crashed } = await runTests(files)
// V8 in Node.js 22–26 may abort a process that starts and stops many PGlite (WebAssembly) instances, at random and
// rarely ("Check failed: jit_page_->allocations_.erase(addr) == 1"; nodejs/node#64500, open). Where that crash is
// the run's only failure, its files run again once, said aloud; any failure of theirs then fails the run.
if (status !== 0 && crashed.length > 0 && failures(report) === crashed.length) {
  process.stdout.write(
    `\nNode.js aborted with V8's fatal error (nodejs/node#64500) in ${crashed.join(', ')}, outside any test; ` +
      'run again once:\n\n',
  )
  ;({ status, report, crashed } = await runTests(crashed))
}
rmSync(work, { recursive: true, force: true })
process.exit(status)
