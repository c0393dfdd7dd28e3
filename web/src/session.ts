import { createContext } from 'preact'
import { useContext } from 'preact/hooks'

/*
 * Who uses the page. Without authentication (AUTH_MODE=none) everyone may read and write; with AUTH_MODE=jwt the
 * sign-in (auth/) fills this from the OpenID Connect provider's token. Screens read it with useSession() to show
 * the user's name and to offer write controls only to a writer.
 */
export interface Session {
  /** The signed-in user's name, absent without authentication or before sign-in. */
  readonly user?: string
  /** True when the page may change prices (no authentication, or a token with `prices:write`). */
  readonly canWrite: boolean
}

export const anonymousSession: Session = { canWrite: true }

export const SessionContext = createContext<Session>(anonymousSession)

export const useSession = (): Session => useContext(SessionContext)
