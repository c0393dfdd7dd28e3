import type { Claims } from '../../../src/domain/token-claims.js'

export { type Claims, rolesOf, userNameOf, WRITE_ROLE } from '../../../src/domain/token-claims.js'

/*
 * What the page reads from a token it holds: the user's name and roles, read by the service's own functions
 * (src/domain/token-claims.ts), so the screens offer what the service will allow. The page does not verify the signature:
 * the token came straight from the provider's token endpoint, and the service, which verifies every call, stays
 * the authority (a refused call is shown in words).
 */

/** The payload of a JWT, or an empty object for anything else (an opaque token carries nothing readable). */
export function claimsOf(token: string | undefined): Claims {
  const payload = token?.split('.')[1]
  if (payload === undefined) return {}
  try {
    const base64 = payload.replace(/-/g, '+').replace(/_/g, '/')
    const bytes = Uint8Array.from(atob(base64.padEnd(Math.ceil(base64.length / 4) * 4, '=')), (c) => c.charCodeAt(0))
    const claims: unknown = JSON.parse(new TextDecoder().decode(bytes))
    return claims !== null && typeof claims === 'object' && !Array.isArray(claims) ? (claims as Claims) : {}
  } catch {
    return {}
  }
}

/** The token's expiry (`exp`) in milliseconds since the epoch, if it tells one. */
export function expiryOf(claims: Claims): number | undefined {
  return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : undefined
}
