import { spawnSync } from 'node:child_process'
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

const result = spawnSync(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${Math.max(2, availableParallelism())}`,
    '--test-timeout=900000',
    ...files,
  ],
  { stdio: 'inherit', env: { ...process.env, TEST_PGLITE_TEMPLATE: template } },
)
rmSync(work, { recursive: true, force: true })
process.exit(result.status ?? 1)
