/*
 * What a token's claims say about its user, read one way by the service (http/auth.ts, after verifying the
 * signature) and by the web app (to offer what the service will allow). Plain functions of the claims: no I/O.
 */

/** The role a caller needs for every write of a price list or nomenclature. */
export const WRITE_ROLE = 'prices:write'
/** The role that reads purchase prices and the history, when `AUTH_PRICES_READ=on` (writers have it too). */
export const READ_ROLE = 'prices:read'

/** A token's payload (its claims), as decoded JSON. */
export type Claims = Readonly<Record<string, unknown>>

function nonEmptyString(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined
  const cleaned = value.replaceAll('\u0000', '').trim()
  return cleaned === '' ? undefined : cleaned
}

/** The user's name as `user` records it: `preferred_username`, else `name`, else `sub`. */
export function userNameOf(claims: Claims): string | undefined {
  return nonEmptyString(claims.preferred_username) ?? nonEmptyString(claims.name) ?? nonEmptyString(claims.sub)
}

/**
 * Roles, strictly: the exact strings of the arrays `roles` and Keycloak's `realm_access.roles`, and the words of the
 * space-separated `scope` (RFC 6749). Anything else grants nothing: a `roles` string, nested arrays, non-strings,
 * a role with spaces or tabs around it.
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
