import * as oauth from 'oauth4webapi'
import { WEB_CONFIG_PATH, type WebConfig } from '../../../src/domain/web-config.js'
import { claimsOf, expiryOf } from './claims.js'

/*
 * Sign-in at the chain's OpenID Connect provider: Authorization Code with PKCE (S256), `state` and `nonce`, for a
 * public client (no secret: the page cannot keep one). The page's address without query or fragment is the
 * redirect URI; the screen's hash route is remembered across the round trip and restored.
 *
 * The tokens live in this tab's sessionStorage: they survive the provider's redirect and a reload, are never sent
 * by the browser on their own (unlike a cookie, so no cross-site request can use them), are not shared with other
 * tabs and are gone when the tab closes. Any script of the page could read them, as it could read them from
 * memory; the page's policy allows no script but its own.
 */

export type OidcSettings = Extract<WebConfig, { auth: 'oidc' }>

export interface Tokens {
  readonly accessToken: string
  /** Milliseconds since the epoch. */
  readonly expiresAt: number
  readonly refreshToken?: string
  readonly idToken?: string
  /** The ID token's claims, checked by the page (issuer, audience, nonce, times) when it was received. */
  readonly idClaims: Readonly<Record<string, unknown>>
}

/** A sign-in on its way through the provider: what the callback must match. */
interface PendingSignIn {
  readonly state: string
  readonly nonce: string
  readonly codeVerifier: string
  /** The hash route to return to. */
  readonly returnTo: string
}

const TOKENS_KEY = 'optics-catalog.tokens'
const PENDING_KEY = 'optics-catalog.sign-in'
const SIGNED_OUT_KEY = 'optics-catalog.signed-out'

/** Where the provider sends the user back: this page, without its query and fragment. */
export const redirectUri = (): string => `${window.location.origin}${window.location.pathname}`

/** Reads the page's sign-in settings; the service answers them without a token. */
export async function loadWebConfig(): Promise<WebConfig> {
  const response = await fetch(WEB_CONFIG_PATH, { headers: { accept: 'application/json' } })
  if (!response.ok) throw new Error(`HTTP ${response.status}`)
  return (await response.json()) as WebConfig
}

function readJson<T>(key: string): T | undefined {
  try {
    const text = sessionStorage.getItem(key)
    return text === null ? undefined : (JSON.parse(text) as T)
  } catch {
    return undefined
  }
}

/** The client of one provider, after discovery. */
export class OidcClient {
  private constructor(
    private readonly server: oauth.AuthorizationServer,
    private readonly client: oauth.Client,
    private readonly settings: OidcSettings,
    private readonly options: { [oauth.allowInsecureRequests]?: boolean },
  ) {}

  /** Reads the provider's discovery document (`/.well-known/openid-configuration` of the issuer). */
  static async discover(settings: OidcSettings): Promise<OidcClient> {
    const issuer = new URL(settings.issuer)
    // Plain http is accepted by the service only for a provider on a loopback host (a developer's or a test's).
    const options = issuer.protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {}
    const response = await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...options })
    const server = await oauth.processDiscoveryResponse(issuer, response)
    return new OidcClient(server, { client_id: settings.clientId }, settings, options)
  }

  /** Sends the browser to the provider's sign-in; the page is left, so this never settles. */
  async signIn(returnTo: string): Promise<never> {
    const endpoint = this.server.authorization_endpoint
    if (endpoint === undefined) throw new Error('the provider has no authorization endpoint')
    const pending: PendingSignIn = {
      state: oauth.generateRandomState(),
      nonce: oauth.generateRandomNonce(),
      codeVerifier: oauth.generateRandomCodeVerifier(),
      returnTo,
    }
    sessionStorage.setItem(PENDING_KEY, JSON.stringify(pending))
    sessionStorage.removeItem(SIGNED_OUT_KEY)
    const url = new URL(endpoint)
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: this.settings.clientId,
      redirect_uri: redirectUri(),
      scope: this.settings.scopes,
      state: pending.state,
      nonce: pending.nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: 'S256',
    }).toString()
    window.location.assign(url.href)
    return new Promise<never>(() => {})
  }

  /**
   * Finishes a sign-in when the provider has sent the user back (`?code=…&state=…`, or `?error=…`): checks the
   * state, exchanges the code with its PKCE verifier, checks the ID token's nonce, keeps the tokens and cleans
   * the address (the hash route of before the round trip comes back). Undefined when the address is no callback.
   */
  async completeSignIn(): Promise<Tokens | undefined> {
    const here = new URL(window.location.href)
    if (!here.searchParams.has('state') && !here.searchParams.has('code') && !here.searchParams.has('error')) {
      return undefined
    }
    const pending = readJson<PendingSignIn>(PENDING_KEY)
    sessionStorage.removeItem(PENDING_KEY)
    window.history.replaceState(null, '', `${here.pathname}${pending?.returnTo ?? here.hash}`)
    if (pending === undefined) throw new Error('the sign-in was not started in this tab')
    const parameters = oauth.validateAuthResponse(this.server, this.client, here.searchParams, pending.state)
    const response = await oauth.authorizationCodeGrantRequest(
      this.server,
      this.client,
      oauth.None(),
      parameters,
      redirectUri(),
      pending.codeVerifier,
      this.options,
    )
    const result = await oauth.processAuthorizationCodeResponse(this.server, this.client, response, {
      expectedNonce: pending.nonce,
      requireIdToken: true,
    })
    return this.keep(result)
  }

  /** New tokens for a refresh token, when the provider gave one; the ID token's claims carry over. */
  async refresh(tokens: Tokens): Promise<Tokens> {
    if (tokens.refreshToken === undefined) throw new Error('no refresh token')
    const response = await oauth.refreshTokenGrantRequest(
      this.server,
      this.client,
      oauth.None(),
      tokens.refreshToken,
      this.options,
    )
    const result = await oauth.processRefreshTokenResponse(this.server, this.client, response)
    return this.keep(result, tokens)
  }

  /**
   * Forgets the tokens and, when the provider offers RP-initiated logout, ends the provider's session too (it
   * sends the user back to this page). Returns false when the page stays (no logout endpoint).
   */
  signOut(tokens: Tokens | undefined): boolean {
    sessionStorage.removeItem(TOKENS_KEY)
    sessionStorage.setItem(SIGNED_OUT_KEY, '1')
    const endpoint = this.server.end_session_endpoint
    if (endpoint === undefined) return false
    const url = new URL(endpoint)
    url.searchParams.set('client_id', this.settings.clientId)
    url.searchParams.set('post_logout_redirect_uri', redirectUri())
    if (tokens?.idToken) url.searchParams.set('id_token_hint', tokens.idToken)
    window.location.assign(url.href)
    return true
  }

  private keep(result: oauth.TokenEndpointResponse, before?: Tokens): Tokens {
    const claims = oauth.getValidatedIdTokenClaims(result)
    const expiresAt =
      (result.expires_in === undefined ? undefined : Date.now() + result.expires_in * 1000) ??
      expiryOf(claimsOf(result.access_token)) ??
      Date.now() + 5 * 60_000
    const refreshToken = result.refresh_token ?? before?.refreshToken
    const idToken = result.id_token ?? before?.idToken
    const tokens: Tokens = {
      accessToken: result.access_token,
      expiresAt,
      ...(refreshToken === undefined ? {} : { refreshToken }),
      ...(idToken === undefined ? {} : { idToken }),
      idClaims: claims ? { ...claims } : (before?.idClaims ?? {}),
    }
    sessionStorage.setItem(TOKENS_KEY, JSON.stringify(tokens))
    return tokens
  }
}

/** The tokens kept in this tab, if any. */
export const storedTokens = (): Tokens | undefined => readJson<Tokens>(TOKENS_KEY)

/** True after the user signed out in this tab: the page then waits for a click instead of signing in at once. */
export const signedOutHere = (): boolean => sessionStorage.getItem(SIGNED_OUT_KEY) !== null
