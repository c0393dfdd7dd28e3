import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import { buildTestApp, eachDatabase } from '../test/harness.js'
import { openDatabase } from './db/database.js'

/*
 * The CLI as a user runs it: a child process reading the same configuration as the server. On the embedded
 * database it gets a data directory of its own (the suite's is open in this process); on the server it works in
 * the suite's schema through the connection string.
 */

const execute = promisify(execFile)
const cliPath = new URL('./cli.ts', import.meta.url).pathname

interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

eachDatabase('command line', (ctx) => {
  let work: string
  let env: Record<string, string>

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'optics-cli-'))
    if (ctx.target === 'postgres') {
      const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(ctx.db.primary)
      const url = new URL(process.env.TEST_DATABASE_URL!)
      url.searchParams.set('options', `-c search_path=${rows[0]!.schema},public`)
      env = { DATABASE_URL: url.toString() }
    } else {
      env = { DATA_DIR: join(work, 'data') }
    }
  })
  after(() => rmSync(work, { recursive: true, force: true }))

  const cli = async (...args: string[]): Promise<CliRun> => {
    try {
      const { stdout, stderr } = await execute(process.execPath, ['--import', 'tsx', cliPath, ...args], {
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
      })
      return { code: 0, stdout, stderr }
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string }
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
    }
  }

  test('seed at a tiny scale loads the kinds asked for; again without --replace it refuses in one line', async () => {
    const seeded = await cli('seed', '--scale', '30', '--kinds', 'glasses,lenses', '--seed', '3')
    assert.equal(seeded.code, 0, seeded.stderr)
    assert.match(
      seeded.stdout,
      /^glasses: 30 SKUs, \d+ price-list entries in [\d.]+ s \(load [\d.]+ s, matview [\d.]+ s\)\nlenses: 30 SKUs/,
    )
    assert.deepEqual(
      seeded.stderr
        .split('\n')
        .filter((line) => line.startsWith('seed glasses'))
        .map((line) => line.replace(/, \d+ rows\/s\)$/, ')')),
      ['seed glasses: 100% (30 rows)'],
      'a quick seed prints one progress line off a terminal',
    )

    const again = await cli('seed', '--scale', '30', '--kinds', 'glasses')
    assert.equal(again.code, 1)
    assert.equal(again.stderr, 'optics-catalog: glasses already holds data; seed --replace replaces it\n')

    const replaced = await cli('seed', '--scale', '20', '--kinds', 'glasses', '--replace')
    assert.equal(replaced.code, 0, replaced.stderr)
    assert.match(replaced.stdout, /^glasses: 20 SKUs/)
  })

  test('import reports each problem with its line and exits 1; a valid file imports; export writes it back', async () => {
    const bad = join(work, 'bad.csv')
    writeFileSync(bad, 'manufacturer;brand;model;price;purchase\nSafilo;Carrera;CA 1;12,5;-1\n')
    const rejected = await cli('import', 'glasses', 'prices', bad)
    assert.equal(rejected.code, 1)
    assert.equal(
      rejected.stderr.split('\n').filter(Boolean).slice(-2).join('\n'),
      `${bad}: line 2, column purchase: must not be negative\noptics-catalog: import failed: 1 problem(s); nothing was written`,
    )

    const good = new URL('../examples/glasses-prices.csv', import.meta.url).pathname
    const imported = await cli('import', 'glasses', 'prices', good, '--replace')
    assert.equal(imported.code, 0, imported.stderr)
    assert.match(imported.stdout, /^glasses prices: \d+ rows imported, replacing \d+ in/)

    const exported = join(work, 'out.csv')
    const result = await cli('export', 'glasses', 'prices', exported)
    assert.equal(result.code, 0, result.stderr)
    assert.equal(readFileSync(exported, 'utf8'), readFileSync(good, 'utf8'))

    const dryRun = await cli('import', 'glasses', 'prices', good, '--dry-run')
    assert.equal(dryRun.code, 1, 'appending the same entries again conflicts')
    assert.match(
      dryRun.stderr,
      /line 2: the keys and bounds are already in the price list \(id \d+\): the mode upsert updates its prices/,
    )

    const upserted = await cli('import', 'glasses', 'prices', good, '--mode', 'upsert')
    assert.equal(upserted.code, 0, upserted.stderr)
    assert.match(upserted.stdout, /^glasses prices: 14 rows imported \(0 added, 0 updated, 14 unchanged\) in/)
    const workbook = join(work, 'out.xlsx')
    assert.equal((await cli('export', 'glasses', 'prices', workbook)).code, 0)
    const fromXlsx = await cli('import', 'glasses', 'prices', workbook, '--mode', 'upsert')
    assert.equal(fromXlsx.code, 0, fromXlsx.stderr)
    assert.match(fromXlsx.stdout, /^glasses prices: 14 rows imported \(0 added, 0 updated, 14 unchanged\) in/)
    const badMode = await cli('import', 'glasses', 'prices', good, '--mode', 'merge')
    assert.equal(badMode.code, 2)
  })

  test('import of the glass price list is one change of its history, revertable as an upload over HTTP is', async () => {
    const file = join(work, 'two-new.csv')
    writeFileSync(file, 'manufacturer,brand,model,price,purchase\nCliCo,Cli,CLI 1,100,50\nCliCo,Cli,CLI 2,200.5,90\n')
    const imported = await cli('import', 'glasses', 'prices', file)
    assert.equal(imported.code, 0, imported.stderr)
    const batch = Number(/recorded as change (\d+) of the history/.exec(imported.stdout)?.[1])
    assert.ok(batch > 0, imported.stdout)

    // The embedded database is the command's own data directory: opened here once the command has let it go.
    const db = ctx.target === 'pglite' ? await openDatabase({ dataDir: env.DATA_DIR }) : ctx.db
    const app = await buildTestApp(db)
    try {
      const changes = (await app.inject({ method: 'GET', url: '/api/v2/glasses/prices/changes' })).json()
      const change = changes.content.find((c: { id: number }) => c.id === batch)
      assert.equal(change?.action, 'IMPORT', JSON.stringify(changes.content[0]))
      assert.equal(change.user, 'cli')
      assert.equal(change.changedCount, 2)
      const listed = async () =>
        (await app.inject({ method: 'GET', url: '/api/v2/glasses/prices/list?manufacturer=CliCo' })).json()
          .totalElements
      assert.equal(await listed(), 2)
      const revert = await app.inject({ method: 'POST', url: `/api/v2/glasses/prices/changes/${batch}/revert` })
      assert.equal(revert.statusCode, 200, revert.body)
      assert.equal(revert.json().restoredCount, 2)
      assert.equal(await listed(), 0)
    } finally {
      await app.close()
      if (db !== ctx.db) await db.close()
    }
  })

  test('an upsert of an old version is refused naming --overwrite-conflicts; --skip-conflicts keeps the newer price', async () => {
    const header = 'manufacturer,brand,model,price,purchase,version,changedAt'
    const file = join(work, 'versions.csv')
    writeFileSync(file, `${header}\nVerCo,Ver,VER 1,100,50,,\n`)
    assert.equal((await cli('import', 'glasses', 'prices', file)).code, 0)
    writeFileSync(file, `${header}\nVerCo,Ver,VER 1,150,50,1,\n`)
    assert.equal((await cli('import', 'glasses', 'prices', file, '--mode', 'upsert')).code, 0, 'at its version')
    writeFileSync(file, `${header}\nVerCo,Ver,VER 1,120,50,1,\n`)
    const refused = await cli('import', 'glasses', 'prices', file, '--mode', 'upsert')
    assert.equal(refused.code, 1)
    assert.match(
      refused.stderr,
      /import refused: 1 row of the file carries .* --overwrite-conflicts 1 .* --skip-conflicts/,
    )
    const skipped = await cli('import', 'glasses', 'prices', file, '--mode', 'upsert', '--skip-conflicts')
    assert.equal(skipped.code, 0, skipped.stderr)
    assert.match(skipped.stdout, /0 added, 0 updated/)
    const both = await cli('import', 'glasses', 'prices', file, '--overwrite-conflicts', '1', '--skip-conflicts')
    assert.equal(both.code, 2)
  })

  test('usage errors exit 2 with one line and the usage', async () => {
    for (const args of [['frobnicate'], ['import', 'hats', 'prices', 'x.csv'], ['seed', '--scale', 'many']]) {
      const result = await cli(...args)
      assert.equal(result.code, 2, args.join(' '))
      assert.match(result.stderr, /^optics-catalog: .+\nusage: npm run cli/)
    }
    const missing = await cli('import', 'glasses', 'prices', join(work, 'missing.csv'))
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /^optics-catalog: import failed: cannot read .*missing\.csv\n$/)
  })
})
