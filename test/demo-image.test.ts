import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { sql } from 'kysely'
import { eachDatabase, listeningPort, projectRoot, spawnServer } from './harness.js'

/*
 * The image as `docker run -p 8080:8080 -e AUTH_MODE=demo optics-catalog` starts it, without Docker: the service
 * with the final stage's environment read from the Dockerfile (HOST=0.0.0.0, DATA_DIR, …), the demo mode added,
 * nothing else. It must listen on every address, load the demo catalogue into its empty database, tell the web app
 * it is a demo, and say so in its log; the same environment without AUTH_MODE stops at once, naming the demo mode.
 */

/** The `ENV` of the Dockerfile's last stage (the image that runs), as name → value. */
function imageEnvironment(): Record<string, string> {
  const dockerfile = readFileSync(join(projectRoot, 'Dockerfile'), 'utf8').replace(/\\\n\s*/g, ' ')
  const lines = dockerfile.split('\n')
  const lastStage = lines.findLastIndex((line) => /^FROM\s/i.test(line))
  const env: Record<string, string> = {}
  for (const line of lines.slice(lastStage)) {
    const match = /^ENV\s+(.*)$/i.exec(line.trim())
    if (!match) continue
    for (const [, name, value] of match[1]!.matchAll(/([A-Z_][A-Z0-9_]*)=(\S+)/g)) env[name!] = value!
  }
  return env
}

test("the Dockerfile's running stage listens on every address and keeps its data under /data", () => {
  const env = imageEnvironment()
  assert.equal(env.HOST, '0.0.0.0')
  assert.equal(env.PORT, '8080')
  assert.equal(env.DATA_DIR, '/data')
  assert.equal(env.AUTH_MODE, undefined, 'the image must not open itself: the demo mode is asked for with -e')
  // The search index's snapshot in a directory the unprivileged user owns (the app's own is root's).
  const snapshots = env.SEARCH_INDEX_SNAPSHOT_DIR ?? ''
  assert.match(snapshots, /^\/var\/cache\/optics-catalog\//)
  assert.match(
    readFileSync(join(projectRoot, 'Dockerfile'), 'utf8'),
    /chown node:node [^\n]*\/var\/cache\/optics-catalog\n/,
  )
})

describe('the image without AUTH_MODE', () => {
  test('stops at once with one line that names AUTH_MODE=jwt and AUTH_MODE=demo', async () => {
    const run = promisify(execFile)(process.execPath, ['--import', 'tsx', join(projectRoot, 'src', 'server.ts')], {
      cwd: projectRoot,
      env: { PATH: process.env.PATH ?? '', ...imageEnvironment(), PORT: '0' },
    })
    const failed = (await run.then(
      () => assert.fail('the server started'),
      (error: unknown) => error,
    )) as { code: number; stderr: string }
    assert.equal(failed.code, 2)
    assert.equal(failed.stderr.trim().split('\n').length, 1)
    assert.match(failed.stderr, /AUTH_MODE: 'none' is allowed only on a loopback HOST \(got HOST=0\.0\.0\.0\)/)
    assert.match(failed.stderr, /AUTH_MODE=jwt/)
    assert.match(failed.stderr, /AUTH_MODE=demo/)
  })
})

eachDatabase('the image in its demo mode', (ctx) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'optics-demo-image-'))
  after(() => rmSync(dataDir, { recursive: true, force: true }))

  test('listens on every address, loads the demo catalogue and tells the page and the log it is a demo', async () => {
    let database: Record<string, string> = { DATA_DIR: dataDir }
    if (ctx.target === 'postgres') {
      const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(ctx.db.primary)
      const url = new URL(process.env.TEST_DATABASE_URL!)
      url.searchParams.set('options', `-c search_path=${rows[0]!.schema},public`)
      database = { DATABASE_URL: url.toString() }
    }
    const child = spawnServer({
      ...imageEnvironment(),
      ...database,
      // Not the image's cache directory: this machine's.
      SEARCH_INDEX_SNAPSHOT_DIR: 'off',
      PORT: '0',
      AUTH_MODE: 'demo',
      // Not set, as in the image: the demo mode loads the demo catalogue into an empty database of either kind.
      DEMO_DATA: '',
      DEMO_SCALE: '40',
    })
    let log = ''
    child.stdout.on('data', (chunk: Buffer) => {
      log += chunk.toString()
    })
    try {
      const port = await listeningPort(child)
      // Every address: one of the machine's own beyond the loopback answers too, when it has one.
      const outward = Object.values(networkInterfaces())
        .flat()
        .find((address) => address?.family === 'IPv4' && !address.internal)
      if (outward) assert.equal((await fetch(`http://${outward.address}:${port}/web-config.json`)).status, 200)
      assert.match(log, /demo mode \(AUTH_MODE=demo\): no authentication/)
      const base = `http://127.0.0.1:${port}`
      const config = await (await fetch(`${base}/web-config.json`)).json()
      assert.deepEqual(config, { auth: 'demo' })
      // The demo's goods answer a search without a token.
      const response = await fetch(`${base}/api/v2/good/nomenclature/search/glasses?size=1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"byPriceList": false}',
      })
      assert.equal(response.status, 200)
      const page = (await response.json()) as { totalElements: number }
      assert.ok(page.totalElements > 0, 'the demo catalogue is loaded')
    } finally {
      child.kill('SIGTERM')
      await new Promise((resolve) => child.once('exit', resolve))
    }
  })
})
