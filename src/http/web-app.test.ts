import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import { webAppContentSecurityPolicy, webAppDirectory } from './web-app.js'

/* The built web app (npm run build; the test runner builds it for this file) served at `/` beside the API. */

test('the web app is built where the service looks for it', () => {
  assert.ok(webAppDirectory(), 'dist/web/index.html is missing: run npm run build')
})

eachDatabase('web app', (ctx) => {
  const app = useTestApp(ctx)

  test('/ answers the page with its own content security policy, revalidated on every load', async () => {
    const response = await app().inject({ method: 'GET', url: '/' })
    assert.equal(response.statusCode, 200)
    assert.match(String(response.headers['content-type']), /^text\/html/)
    assert.equal(response.headers['content-security-policy'], webAppContentSecurityPolicy)
    assert.equal(response.headers['cache-control'], 'no-cache')
    assert.match(response.body, /<script type="module" crossorigin src="\/assets\/[^"]+\.js"><\/script>/)
    assert.doesNotMatch(response.body, /<script>|<script type="module">/, 'no inline script')
  })

  test('the page script loads as JavaScript under the same policy and is cached for good', async () => {
    const page = await app().inject({ method: 'GET', url: '/' })
    const script = /src="(\/assets\/[^"]+\.js)"/.exec(page.body)?.[1]
    assert.ok(script)
    const response = await app().inject({ method: 'GET', url: script })
    assert.equal(response.statusCode, 200)
    assert.match(String(response.headers['content-type']), /javascript/)
    assert.equal(response.headers['content-security-policy'], webAppContentSecurityPolicy)
    assert.equal(response.headers['cache-control'], 'public, max-age=31536000, immutable')
  })

  test('the API keeps its policy that allows nothing, and unknown paths stay problem 404s', async () => {
    const api = await app().inject({ method: 'GET', url: '/api/v2/good/nomenclature/kinds' })
    assert.equal(api.statusCode, 200)
    assert.match(String(api.headers['content-security-policy']), /^default-src 'none'/)
    const unknown = await app().inject({ method: 'GET', url: '/no-such-page' })
    assert.equal(unknown.statusCode, 404)
    assert.match(String(unknown.headers['content-type']), /^application\/problem\+json/)
    assert.match(String(unknown.headers['content-security-policy']), /^default-src 'none'/)
  })

  test('the page is not in the OpenAPI document', async () => {
    const document = (await app().inject({ method: 'GET', url: '/v3/api-docs' })).json()
    assert.ok(!Object.keys(document.paths).some((path) => path === '/' || path.startsWith('/assets')))
  })
})
