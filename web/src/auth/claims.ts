/*
 * What the page reads from a token it holds: the user's name and roles, read exactly as the service reads them
 * (src/http/auth.ts), so the screens offer what the service will allow. The page does not verify the signature:
 * the token came straight from the provider's token endpoint, and the service, which verifies every call, stays
 * the authority (a refused call is shown in words).
 */

/** The role a user needs to change prices. */
export const WRITE_ROLE = 'prices:write'

export type Claims = Readonly<Record<string, unknown>>

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

function nonEmptyString(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const cleaned = value.replaceAll('\u0000', '').trim()
  return cleaned === '' ? undefined : cleaned
}

/** The user's name as the service records it: `preferred_username`, else `name`, else `sub`. */
export function userNameOf(claims: Claims): string | undefined {
  return nonEmptyString(claims.preferred_username) ?? nonEmptyString(claims.name) ?? nonEmptyString(claims.sub)
}

/**
 * Roles, strictly: the exact strings of the arrays `roles` and `realm_access.roles`, and the words of the
 * space-separated `scope`; anything else grants nothing.
 */
export function rolesOf(claims: Claims): string[] {
  const roles = new Set<string>()
  const addArray = (value: unknown) => {
    if (!Array.isArray(value)) return
    for (const item of value) if (typeof item === 'string' && item !== '') roles.add(item)
  }
  addArray(claims.roles)
  const realm = claims.realm_access
  if (realm !== null && typeof realm === 'object' && !Array.isArray(realm))
    addArray((realm as { roles?: unknown }).roles)
  if (typeof claims.scope === 'string') for (const word of claims.scope.split(' ')) if (word !== '') roles.add(word)
  return [...roles]
}

/** The token's expiry (`exp`) in milliseconds since the epoch, if it tells one. */
export function expiryOf(claims: Claims): number | undefined {
  return typeof claims.exp === 'number' && Number.isFinite(claims.exp) ? claims.exp * 1000 : undefined
}
