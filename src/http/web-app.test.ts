import assert from 'node:assert/strict'
import { test } from 'node:test'
import { buildTestApp, eachDatabase, useTestApp } from '../../test/harness.js'
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
    assert.equal(response.headers['content-security-policy'], webAppContentSecurityPolicy())
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
    assert.equal(response.headers['content-security-policy'], webAppContentSecurityPolicy())
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

  test('the page and its configuration are not in the OpenAPI document', async () => {
    const document = (await app().inject({ method: 'GET', url: '/v3/api-docs' })).json()
    assert.ok(!Object.keys(document.paths).some((path) => path === '/' || path.startsWith('/assets')))
    assert.ok(!Object.keys(document.paths).includes('/web-config.json'))
  })

  test('without authentication the page is told there is no sign-in, and calls only its own origin', async () => {
    const response = await app().inject({ method: 'GET', url: '/web-config.json' })
    assert.equal(response.statusCode, 200)
    assert.match(String(response.headers['content-type']), /^application\/json/)
    assert.equal(response.headers['cache-control'], 'no-cache')
    assert.deepEqual(response.json(), { auth: 'none' })
    const page = await app().inject({ method: 'GET', url: '/' })
    assert.match(String(page.headers['content-security-policy']), /(^|; )connect-src 'self'(;|$)/)
  })

  test('in the demo mode the page is told so, and there is no sign-in', async () => {
    const demo = await buildTestApp(ctx.db, { AUTH_MODE: 'demo', HOST: '0.0.0.0' })
    try {
      assert.deepEqual((await demo.inject({ method: 'GET', url: '/web-config.json' })).json(), { auth: 'demo' })
      assert.equal((await demo.inject({ method: 'GET', url: '/api/v2/good/nomenclature/kinds' })).statusCode, 200)
    } finally {
      await demo.close()
    }
  })

  test('with the sign-in configured the page gets the provider, and may call its origin and no other', async () => {
    const signedIn = await buildTestApp(ctx.db, {
      AUTH_MODE: 'jwt',
      AUTH_JWKS_URL: 'https://id.example/realms/shops/protocol/openid-connect/certs',
      AUTH_ISSUER: 'https://id.example/realms/shops',
      WEB_OIDC_CLIENT_ID: 'optics-catalog-web',
    })
    try {
      // Served without a token: the page needs it to sign in.
      const response = await signedIn.inject({ method: 'GET', url: '/web-config.json' })
      assert.equal(response.statusCode, 200)
      assert.deepEqual(response.json(), {
        auth: 'oidc',
        issuer: 'https://id.example/realms/shops',
        clientId: 'optics-catalog-web',
        scopes: 'openid profile',
      })
      const page = await signedIn.inject({ method: 'GET', url: '/' })
      assert.equal(page.statusCode, 200)
      const policy = String(page.headers['content-security-policy'])
      assert.match(policy, /(^|; )connect-src 'self' https:\/\/id\.example(;|$)/)
      assert.match(policy, /(^|; )script-src 'self'(;|$)/)
      // The API still allows nothing and still wants a token.
      const api = await signedIn.inject({ method: 'GET', url: '/api/v2/good/nomenclature/kinds' })
      assert.equal(api.statusCode, 401)
      assert.match(String(api.headers['content-security-policy']), /^default-src 'none'/)
    } finally {
      await signedIn.close()
    }
  })

  test('with tokens required but no client for the page, it is told the sign-in is unavailable', async () => {
    const tokensOnly = await buildTestApp(ctx.db, {
      AUTH_MODE: 'jwt',
      AUTH_JWKS_URL: 'https://id.example/realms/shops/protocol/openid-connect/certs',
      AUTH_ISSUER: 'https://id.example/realms/shops',
    })
    try {
      assert.deepEqual((await tokensOnly.inject({ method: 'GET', url: '/web-config.json' })).json(), {
        auth: 'unavailable',
      })
      const page = await tokensOnly.inject({ method: 'GET', url: '/' })
      assert.match(String(page.headers['content-security-policy']), /(^|; )connect-src 'self'(;|$)/)
    } finally {
      await tokensOnly.close()
    }
  })
})
