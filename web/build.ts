import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

/*
 * `npm run build:web`: the web app built into dist/web by Vite, unless the build there is current. Beside it,
 * dist/web-build.json records the files the last build read (every module of the bundle outside node_modules,
 * plus the lockfile, the configurations and this script) and a hash of their contents; when the hash of those
 * files is still the same, the build is skipped. Any change to them (or `--force`) builds again.
 */

const checkout = fileURLToPath(new URL('..', import.meta.url))
const output = resolve(checkout, 'dist/web')
const record = resolve(checkout, 'dist/web-build.json')
/** Read by every build besides the bundle's modules: what installs, configures and drives Vite. */
const alwaysRead = [
  'package-lock.json',
  'tsconfig.json',
  'web/tsconfig.json',
  'web/vite.config.ts',
  'web/build.ts',
  'web/index.html',
  ...publicFiles(),
]

/** Vite's public directory (copied as it is, no module of the bundle), when there is one. */
function publicFiles(): string[] {
  const directory = resolve(checkout, 'web/public')
  if (!existsSync(directory)) return []
  return readdirSync(directory, { recursive: true, encoding: 'utf8' })
    .map((name) => resolve(directory, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => relative(checkout, path))
}

interface BuildRecord {
  readonly hash: string
  readonly inputs: readonly string[]
}

/** The hash of the files' paths and contents; undefined when one of them is gone. */
function hashOf(inputs: readonly string[]): string | undefined {
  const hash = createHash('sha256')
  for (const input of [...inputs].sort()) {
    const path = resolve(checkout, input)
    if (!existsSync(path)) return undefined
    hash.update(`${input}\0`).update(readFileSync(path)).update('\0')
  }
  return hash.digest('hex')
}

function readRecord(): BuildRecord | undefined {
  try {
    const parsed: unknown = JSON.parse(readFileSync(record, 'utf8'))
    if (parsed === null || typeof parsed !== 'object' || !('hash' in parsed) || !('inputs' in parsed)) return undefined
    const { hash, inputs } = parsed
    if (typeof hash !== 'string' || !Array.isArray(inputs)) return undefined
    return { hash, inputs: inputs.filter((input): input is string => typeof input === 'string') }
  } catch {
    return undefined
  }
}

function isCurrent(): boolean {
  const last = readRecord()
  return last !== undefined && existsSync(resolve(output, 'index.html')) && hashOf(last.inputs) === last.hash
}

if (process.argv.includes('--force') || !isCurrent()) {
  const modules = new Set<string>()
  rmSync(record, { force: true })
  // Vite is loaded only to build: checking a current build stays quick.
  const { build } = await import('vite')
  await build({
    root: resolve(checkout, 'web'),
    logLevel: 'warn',
    plugins: [
      {
        name: 'record-inputs',
        buildEnd() {
          for (const id of this.getModuleIds()) modules.add(id)
        },
      },
    ],
  })
  const inputs = new Set(alwaysRead)
  for (const id of modules) {
    const path = id.split('?')[0] ?? ''
    if (id.startsWith('\0') || path.includes('/node_modules/') || !existsSync(path)) continue
    inputs.add(relative(checkout, path))
  }
  const hash = hashOf([...inputs])
  if (hash !== undefined) writeFileSync(record, `${JSON.stringify({ hash, inputs: [...inputs].sort() }, null, 1)}\n`)
}
