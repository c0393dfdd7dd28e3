import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { anonymousSession, type Session } from '../session.js'
import { claimsOf, rolesOf, userNameOf, WRITE_ROLE } from './claims.js'
import { loadWebConfig, OidcClient, signedOutHere, storedTokens, type Tokens } from './oidc.js'

/*
 * The page's sign-in as state: without authentication the page is open at once; with the OpenID Connect sign-in
 * it completes a callback, takes this tab's tokens, or goes to the provider. A refresh token, when the provider
 * gives one, renews the access token before it expires; without one the screen stays where it is and says the
 * session has ended, and signing in again comes back to the same screen.
 */

export type SignInState =
  | { readonly status: 'starting' }
  /** No authentication: everyone reads and writes (`demo`: the service runs in its demo mode and says so). */
  | { readonly status: 'open'; readonly demo: boolean }
  /** The API wants tokens but no sign-in is configured for the page. */
  | { readonly status: 'unavailable' }
  | { readonly status: 'signed-out' }
  | { readonly status: 'failed'; readonly reason: string }
  | { readonly status: 'signed-in'; readonly tokens: Tokens; readonly expired: boolean }

export interface SignIn {
  readonly state: SignInState
  readonly session: Session
  /** True once the API may be called: open, or signed in. */
  readonly ready: boolean
  /** The access token for the API's Bearer header (none without authentication or once expired). */
  readonly token: () => string | undefined
  readonly signIn: () => void
  readonly signOut: () => void
}

/** A token this close to its expiry is not used any more (clocks differ; a call takes time). */
const EXPIRY_MARGIN_MS = 10_000

const currentHash = () => window.location.hash || '#/'

/** setTimeout's longest delay; a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** Words for a failed sign-in: the provider's own description of its refusal when it gave one. */
function reasonOf(error: unknown): string {
  const { error_description: description, error: code } = (error ?? {}) as {
    error_description?: unknown
    error?: unknown
  }
  if (typeof description === 'string' && description !== '') return description
  if (typeof code === 'string' && code !== '') return code
  return String((error as Error)?.message ?? error)
}

export function useSignIn(): SignIn {
  const [state, setState] = useState<SignInState>({ status: 'starting' })
  const client = useRef<OidcClient | undefined>(undefined)
  const stateRef = useRef(state)
  stateRef.current = state

  const fail = (error: unknown) => setState({ status: 'failed', reason: reasonOf(error) })

  useEffect(() => {
    let cancelled = false
    const start = async () => {
      const config = await loadWebConfig()
      if (config.auth === 'none' || config.auth === 'demo')
        return setState({ status: 'open', demo: config.auth === 'demo' })
      if (config.auth === 'unavailable') return setState({ status: 'unavailable' })
      const oidc = await OidcClient.discover(config)
      if (cancelled) return
      client.current = oidc
      const fresh = await oidc.completeSignIn()
      if (fresh) return setState({ status: 'signed-in', tokens: fresh, expired: false })
      const kept = storedTokens()
      if (kept && kept.expiresAt > Date.now() + EXPIRY_MARGIN_MS) {
        return setState({ status: 'signed-in', tokens: kept, expired: false })
      }
      if (kept?.refreshToken) {
        const renewed = await oidc.refresh(kept).catch(() => undefined)
        if (renewed) return setState({ status: 'signed-in', tokens: renewed, expired: false })
      }
      if (signedOutHere()) return setState({ status: 'signed-out' })
      await oidc.signIn(currentHash())
    }
    start().catch((error: unknown) => {
      if (!cancelled) fail(error)
    })
    return () => {
      cancelled = true
    }
  }, [])

  // Renews the token at three quarters of its life with a refresh token; without one, marks the session expired.
  const tokens = state.status === 'signed-in' && !state.expired ? state.tokens : undefined
  useEffect(() => {
    if (tokens === undefined) return
    const left = tokens.expiresAt - Date.now()
    const renew = tokens.refreshToken !== undefined && client.current !== undefined
    const timer = setTimeout(
      () => {
        if (!renew) return setState({ status: 'signed-in', tokens, expired: true })
        // A refresh that fails leaves the token to run out as one without a refresh token would.
        const { refreshToken: _failed, ...withoutRefresh } = tokens
        client
          .current!.refresh(tokens)
          .then((renewed) => setState({ status: 'signed-in', tokens: renewed, expired: false }))
          .catch(() => setState({ status: 'signed-in', tokens: withoutRefresh, expired: false }))
      },
      Math.min(MAX_TIMER_MS, Math.max(0, renew ? left * 0.75 : left - EXPIRY_MARGIN_MS)),
    )
    return () => clearTimeout(timer)
  }, [tokens])

  const token = useCallback(() => {
    const current = stateRef.current
    return current.status === 'signed-in' && !current.expired ? current.tokens.accessToken : undefined
  }, [])

  const signIn = useCallback(() => {
    if (client.current === undefined) return window.location.reload()
    setState({ status: 'starting' })
    client.current.signIn(currentHash()).catch(fail)
  }, [])

  const signOut = useCallback(() => {
    const current = stateRef.current
    const left = client.current?.signOut(current.status === 'signed-in' ? current.tokens : undefined)
    if (!left) setState({ status: 'signed-out' })
  }, [])

  const session = useMemo((): Session => {
    if (state.status === 'open') return anonymousSession
    if (state.status !== 'signed-in') return { canWrite: false }
    const claims = claimsOf(state.tokens.accessToken)
    const user = userNameOf(claims) ?? userNameOf(state.tokens.idClaims)
    const canWrite = !state.expired && rolesOf(claims).includes(WRITE_ROLE)
    return user === undefined ? { canWrite } : { user, canWrite }
  }, [state])

  const ready = state.status === 'open' || state.status === 'signed-in'
  return { state, session, ready, token, signIn, signOut }
}
