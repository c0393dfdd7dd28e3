import assert from 'node:assert/strict'
import { test } from 'node:test'
import { SignJWT } from 'jose'
import { loadConfig } from '../../../src/config.js'
import { tokenVerifier } from '../../../src/http/auth.js'
import { claimsOf, expiryOf, rolesOf, userNameOf, WRITE_ROLE } from './claims.js'

/*
 * The page reads a token's user and roles exactly as the service does: for every sample, the name and roles the
 * service's verification yields are the page's, so the page offers write controls exactly when the service will
 * accept the writes.
 */

const SECRET = 'a-shared-secret-of-at-least-32-characters'
const verify = tokenVerifier(loadConfig({ AUTH_MODE: 'jwt', AUTH_JWT_SECRET: SECRET }).auth)

const samples: Record<string, unknown>[] = [
  { sub: 'u1', roles: [WRITE_ROLE] },
  { sub: 'u1', roles: 'prices:write' },
  { sub: 'u1', roles: [[WRITE_ROLE]] },
  { sub: 'u1', roles: [' prices:write', 'PRICES:WRITE', 7, null] },
  { sub: 'u1', realm_access: { roles: [WRITE_ROLE, 'prices:read'] } },
  { sub: 'u1', realm_access: [[WRITE_ROLE]] },
  { sub: 'u1', scope: 'openid profile prices:write' },
  { sub: 'u1', scope: 'openid  prices:read ' },
  { sub: 'u1', scope: ['prices:write'] },
  { preferred_username: 'anna', name: 'Анна Писарева', sub: 'u1' },
  { preferred_username: '  ', name: ' Анна ', sub: 'u1' },
  { preferred_username: 42, sub: 'u1\u0000' },
]

test('the page reads the name and the roles of a token as the service does', async () => {
  const now = Math.floor(Date.now() / 1000)
  for (const claims of samples) {
    const token = await new SignJWT(claims as never)
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(now)
      .setExpirationTime(now + 300)
      .sign(new TextEncoder().encode(SECRET))
    const principal = await verify(token)
    const read = claimsOf(token)
    assert.deepEqual([...rolesOf(read)].sort(), [...principal.roles].sort(), JSON.stringify(claims))
    assert.equal(userNameOf(read), principal.name, JSON.stringify(claims))
    assert.equal(expiryOf(read), (now + 300) * 1000)
  }
})

test('a token that is no JWT grants nothing and names no one', () => {
  for (const token of [undefined, '', 'opaque-token', 'a.b.c', 'a.bnVsbA.c', `a.${btoa('[1]')}.c`]) {
    assert.deepEqual(claimsOf(token), {}, String(token))
    assert.deepEqual(rolesOf(claimsOf(token)), [])
    assert.equal(userNameOf(claimsOf(token)), undefined)
  }
})
