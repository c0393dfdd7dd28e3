import assert from 'node:assert/strict'
import type { Server } from 'node:http'
import { after, before, test } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { exportJWK, generateKeyPair } from 'jose'
import Provider, { type Configuration } from 'oidc-provider'
import type { Page } from 'playwright-core'
import { seedCatalogue } from '../../src/demo/demo-catalogue.js'
import { buildTestApp, freePort } from '../harness.js'
import { browserSuite, ConsoleErrors } from './browser.js'

/*
 * The web app's sign-in in a real browser (Debian's Chromium through playwright-core) at a real OpenID Connect
 * provider (oidc-provider, its own login form), which issues JWT access tokens for the service's audience signed
 * with a key the service reads from its JWKS: a writer (`prices:write`) and a reader (`prices:read`) sign in and
 * out; the page shows the name, goes read-only for the reader, sends the token as Bearer, renews the writer's
 * with the refresh token, keeps the screen when the reader's (without one) runs out, and comes back to the screen
 * it left after each trip to the provider. The service writes with the writer's token and refuses the
 * reader's, on each database (the write and its recorded user are the database's).
 */

const CLIENT_ID = 'optics-catalog-web'
const AUDIENCE = 'optics-catalog'
/** The resource indicator (an absolute URI) of the service at the provider; its tokens are for AUDIENCE. */
const RESOURCE = 'urn:optics-catalog:api'
/**
 * Short, so the test sees the page renew the writer's token (at three quarters of its life) and see the reader's
 * run out (10 s before its end) without waiting long; long enough for the steps between on a loaded machine.
 */
const ACCESS_TOKEN_SECONDS = 30

const users: Record<string, { name: string; roles: string[] }> = {
  writer: { name: 'Анна Писарева', roles: ['prices:write'] },
  reader: { name: 'Борис Читаев', roles: ['prices:read'] },
}

/** A provider for the page at `appOrigin`: a public client with PKCE, consent taken as given (a first party). */
async function startProvider(issuer: string, appOrigin: string, port: number): Promise<Server> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'test-key', alg: 'RS256', use: 'sig' }
  const configuration: Configuration = {
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: 'none',
        redirect_uris: [`${appOrigin}/`],
        post_logout_redirect_uris: [`${appOrigin}/`],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      },
    ],
    jwks: { keys: [signingKey as never] },
    cookies: { keys: ['a-cookie-key-of-the-test-provider'] },
    claims: { openid: ['sub'], profile: ['preferred_username', 'name'] },
    findAccount: async (_ctx, sub) => ({
      accountId: sub,
      claims: async () => ({ sub, preferred_username: sub, name: users[sub]?.name ?? sub }),
    }),
    features: {
      devInteractions: { enabled: true },
      rpInitiatedLogout: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => RESOURCE,
        useGrantedResource: async () => true,
        getResourceServerInfo: async () => ({
          scope: 'catalog',
          audience: AUDIENCE,
          accessTokenTTL: ACCESS_TOKEN_SECONDS,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    // What the service reads from the access token: the user's name and roles.
    extraTokenClaims: async (_ctx, token) => {
      const accountId = (token as { accountId?: string }).accountId ?? ''
      return { preferred_username: accountId, roles: users[accountId]?.roles ?? [] }
    },
    loadExistingGrant: async (ctx) => {
      const { client, session } = ctx.oidc
      const grantId = ctx.oidc.result?.consent?.grantId ?? session!.grantIdFor(client!.clientId)
      if (grantId) return ctx.oidc.provider.Grant.find(grantId)
      const grant = new ctx.oidc.provider.Grant({ clientId: client!.clientId, accountId: session!.accountId! })
      grant.addOIDCScope('openid profile')
      grant.addResourceScope(RESOURCE, 'catalog')
      await grant.save()
      return grant
    },
    // The writer's sign-in comes with a refresh token, the reader's without one (as providers may be set up).
    issueRefreshToken: async (_ctx, client, code) =>
      client.grantTypeAllowed('refresh_token') && (code as { accountId?: string }).accountId === 'writer',
    clientBasedCORS: (_ctx, origin) => origin === appOrigin,
  }
  const provider = new Provider(issuer, configuration)
  const server = provider.listen(port, '127.0.0.1') as unknown as Server
  await new Promise((resolve) => server.once('listening', resolve))
  return server
}

/** What the page's functions (run in the browser) use of its globals; this file is compiled without the DOM's types. */
interface PageGlobals {
  sessionStorage: { getItem(key: string): string | null }
}

browserSuite('sign-in in a real browser', (ctx, browser) => {
  let app: FastifyInstance
  let provider: Server
  let base: string
  let issuer: string
  let page: Page
  const consoleErrors = new ConsoleErrors()

  before(async () => {
    await seedCatalogue(ctx.db, { scale: 40 })
    const [appPort, providerPort] = [await freePort(), await freePort()]
    base = `http://127.0.0.1:${appPort}`
    issuer = `http://127.0.0.1:${providerPort}`
    provider = await startProvider(issuer, base, providerPort)
    app = await buildTestApp(ctx.db, {
      AUTH_MODE: 'jwt',
      AUTH_JWKS_URL: `${issuer}/jwks`,
      AUTH_ISSUER: issuer,
      AUTH_AUDIENCE: AUDIENCE,
      WEB_OIDC_CLIENT_ID: CLIENT_ID,
    })
    await app.listen({ port: appPort, host: '127.0.0.1' })
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    // The page's own errors; the provider's pages are not the page's (they load a web font it cannot reach).
    consoleErrors.watch(page, { origin: base })
  })
  after(async () => {
    await page?.close()
    await app?.close()
    await new Promise((resolve) => provider?.close(resolve))
  })

  /** Fills the provider's own login form (any password passes the test provider; the login names the user). */
  const logInAtProvider = async (login: string) => {
    await page.waitForURL((url) => url.href.startsWith(`${issuer}/interaction/`))
    await page.fill('input[name="login"]', login)
    await page.fill('input[name="password"]', 'any password')
    await page.click('button[type="submit"]')
  }

  const storedAccessToken = () =>
    page.evaluate(() => {
      const kept = (globalThis as unknown as PageGlobals).sessionStorage.getItem('optics-catalog.tokens')
      return kept === null ? undefined : (JSON.parse(kept) as { accessToken: string }).accessToken
    })

  /** Creates a glass price entry with the token the page holds; the answer's status and body. */
  const createEntry = async (model: string) => {
    const response = await fetch(`${base}/api/v2/glasses/prices`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await storedAccessToken()}`,
        'content-type': 'application/json',
        'accept-language': 'en',
      },
      body: JSON.stringify({ manufacturer: 'Safilo', brand: 'Carrera', model, price: 11990, purchase: 4800 }),
    })
    return { status: response.status, body: (await response.json()) as Record<string, unknown> }
  }

  test('the page leaves for the provider, the writer signs in there and comes back to the screen with a name', async () => {
    await page.goto(`${base}/#/prices`)
    await logInAtProvider('writer')
    await page.waitForSelector('.session .user')
    assert.equal(await page.textContent('.session .user'), 'Пользователь: writer')
    assert.equal(await page.locator('.session .read-only').count(), 0, 'a writer is not read-only')
    // The screen left for the sign-in is back, and the code and state are gone from the address.
    assert.equal(new URL(page.url()).hash, '#/prices')
    assert.equal(new URL(page.url()).search, '')
    assert.equal(await page.getAttribute('nav a[aria-current="page"]', 'href'), '#/prices')
  })

  test("the writer's desk offers writes, and an entry created there is recorded as the writer's", async () => {
    const form = page.locator('form.create')
    await form.waitFor()
    await page.locator('[data-action="edit"]').first().waitFor()
    const fill = async (values: Record<string, string>) => {
      for (const [name, value] of Object.entries(values)) await form.locator(`input[name="${name}"]`).fill(value)
    }
    await fill({ manufacturer: 'Safilo', brand: 'Carrera', model: 'Writer 2026', price: '9990', purchase: '4100' })
    await form.locator('button[type="submit"]').click()
    await page.waitForSelector('.notice[role="status"]:has-text("добавлена")')
    const changes = await fetch(`${base}/api/v2/glasses/prices/changes`, {
      headers: { authorization: `Bearer ${await storedAccessToken()}` },
    })
    assert.equal(changes.status, 200)
    assert.match(await changes.text(), /"user":"writer"/)
  })

  test("the counter search works with the writer's token", async () => {
    await page.click('nav a[href="#/"]')
    // The kinds and the results come from /api, which answers nothing without the Bearer token.
    await page.waitForSelector('table.results tbody tr td.price')
  })

  test('the access token is renewed with the refresh token before it expires, and the screen stays', async () => {
    const before = await storedAccessToken()
    const renewal = await page.waitForRequest(
      (request) => request.url() === `${issuer}/token` && /grant_type=refresh_token/.test(request.postData() ?? ''),
      { timeout: ACCESS_TOKEN_SECONDS * 2000 },
    )
    assert.equal((await renewal.response())?.status(), 200)
    await page.waitForFunction(
      (old) =>
        JSON.parse((globalThis as unknown as PageGlobals).sessionStorage.getItem('optics-catalog.tokens') ?? '{}')
          .accessToken !== old,
      before,
    )
    assert.equal(await page.textContent('.session .user'), 'Пользователь: writer')
    assert.equal((await page.locator('table.results tbody tr').count()) > 0, true)
    assert.equal((await createEntry('CARRERA WRITER 2')).status, 200, 'the renewed token writes')
  })

  test("sign-out ends the provider's session and the page waits for a new sign-in", async () => {
    await page.click('.session button:text-is("Выйти")')
    await page.waitForURL((url) => url.href.startsWith(issuer))
    await page.click('button:text-is("Yes, sign me out")')
    await page.waitForURL((url) => url.href.startsWith(base))
    await page.waitForSelector('text=Вы вышли из приложения.')
    assert.equal(await page.locator('.session').count(), 0)
    assert.equal(await storedAccessToken(), undefined)
    assert.equal(await page.locator('table.results').count(), 0, 'no screen without a sign-in')
  })

  test('the reader signs in through the form again and gets read-only screens; a write is refused', async () => {
    await page.click('button:text-is("Войти")')
    // The provider's session ended: its form asks again.
    await logInAtProvider('reader')
    await page.waitForSelector('.session .user')
    assert.equal(await page.textContent('.session .user'), 'Пользователь: reader')
    assert.equal(await page.textContent('.session .read-only'), 'только просмотр')
    await page.waitForSelector('table.results tbody tr td.price')
    const refused = await createEntry('CARRERA READER 1')
    assert.equal(refused.status, 403)
    assert.match(String(refused.body.detail), /prices:write/)
    // The desk shows the price list and its history, and offers no write.
    await page.click('nav a[href="#/prices"]')
    await page.locator('[data-action="history"]').first().waitFor()
    assert.equal(await page.locator('form.create').count(), 0)
    assert.equal(await page.locator('[data-action="edit"], [data-action="delete"]').count(), 0)
  })

  test("when the reader's token runs out without a refresh token the screen stays, and signing in again returns to it", async () => {
    await page.waitForSelector('text=Сеанс истёк', { timeout: ACCESS_TOKEN_SECONDS * 2000 })
    assert.equal(new URL(page.url()).hash, '#/prices')
    assert.equal(await page.locator('.session .read-only').count(), 1)
    assert.ok((await page.locator('[data-action="history"]').count()) > 0, 'the desk is still shown')
    await page.click('button:text-is("Войти снова")')
    // The provider still knows the reader: no form this time, straight back to the same screen.
    await page.waitForURL((url) => url.href.startsWith(base) && url.search === '' && url.hash === '#/prices')
    await page.waitForSelector('.session .user')
    assert.equal(await page.locator('text=Сеанс истёк').count(), 0)
    assert.equal(await page.getAttribute('nav a[aria-current="page"]', 'href'), '#/prices')
  })

  test('the page in English names the user and the read-only state in English', async () => {
    await page.getByLabel('Язык').selectOption('en')
    await page.waitForSelector('html[lang="en"]')
    assert.equal(await page.textContent('.session .user'), 'Signed in as reader')
    assert.equal(await page.textContent('.session .read-only'), 'read-only')
    await page.getByLabel('Language').selectOption('ru')
  })

  test('the page logged no console error', () => {
    assert.deepEqual(consoleErrors.errors, [])
  })
})
