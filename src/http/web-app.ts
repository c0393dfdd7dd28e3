import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import fastifyStatic from '@fastify/static'
import type { FastifyInstance } from 'fastify'
import type { Config } from '../config.js'
import { WEB_CONFIG_PATH, type WebConfig } from '../domain/web-config.js'

/*
 * The staff's web app (web/, a Vite build) served at `/` as static files. `npm run build` writes it to
 * dist/web, beside the compiled service; the sources run under tsx find it there too. Without a build (`npm run
 * dev` before any build) `/` stays unknown, and the API is unaffected.
 */

/**
 * The page loads only its own scripts, styles and images and calls only this origin, and with the sign-in the
 * OpenID Connect provider's origin too (discovery, token endpoint): no inline or evaluated script, no framing.
 * The API's own policy (security.ts) stays `default-src 'none'`.
 */
export function webAppContentSecurityPolicy(signIn: Config['webSignIn'] = undefined): string {
  const provider = signIn === undefined ? '' : ` ${new URL(signIn.issuer).origin}`
  return [
    "default-src 'self'",
    "base-uri 'self'",
    `connect-src 'self'${provider}`,
    "font-src 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "img-src 'self' data:",
    "object-src 'none'",
    "script-src 'self'",
    "script-src-attr 'none'",
    "style-src 'self'",
  ].join('; ')
}

export function webConfigOf(config: Config): WebConfig {
  if (config.auth.mode !== 'jwt') return { auth: config.auth.mode }
  if (config.webSignIn === undefined) return { auth: 'unavailable' }
  return { auth: 'oidc', ...config.webSignIn }
}

/**
 * Where the built app is: dist/web, beside the compiled service (dist/src/http → dist/web), or in the checkout
 * when the sources run (src/http → dist/web); undefined until it is built.
 */
export function webAppDirectory(): string | undefined {
  const compiled = import.meta.url.endsWith('.js')
  const directory = fileURLToPath(new URL(compiled ? '../../web/' : '../../dist/web/', import.meta.url))
  return existsSync(`${directory}index.html`) ? directory : undefined
}

/**
 * Registers `/web-config.json` and the built app's files as routes of their own (one per file found at start, no
 * wildcard, so every other path keeps its 404/405 problem answers), with the page's content security policy. Hashed assets are
 * cached for good; the page itself is revalidated, so a new build shows at the next load.
 */
export async function registerWebApp(app: FastifyInstance, directory = webAppDirectory()): Promise<void> {
  const webConfig = webConfigOf(app.config)
  app.get(WEB_CONFIG_PATH, { schema: { hide: true } }, async (_request, reply) => {
    reply.header('cache-control', 'no-cache')
    return webConfig
  })
  if (!directory) {
    app.log.warn('the web app is not built (npm run build): / is not served')
    return
  }
  const policy = webAppContentSecurityPolicy(app.config.webSignIn)
  await app.register(async (webApp) => {
    webApp.addHook('onRequest', async (_request, reply) => {
      reply.header('content-security-policy', policy)
    })
    await webApp.register(fastifyStatic, {
      root: directory,
      prefix: '/',
      wildcard: false,
      index: 'index.html',
      cacheControl: false,
      setHeaders: (reply, path) => {
        reply.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache')
      },
    })
  })
}
