import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { parse } from 'yaml'
import { loadConfig } from '../src/config.js'
import { READ_ROLE, WRITE_ROLE } from '../src/domain/token-claims.js'
import { projectRoot } from './harness.js'

/*
 * compose.yaml (PostgreSQL, Keycloak with the realm in compose/keycloak, the image) read as Docker reads it, and
 * held to what the service and the provider each need of the other: the service accepts its environment, the
 * issuer the browser signs in at is the provider's published address and realm, the page's client is the realm's
 * with the page's address as its redirect, and the realm gives its users the service's own roles. (Running the
 * containers needs Docker and its registries, which the test suite does not assume.)
 */

interface Service {
  image?: string
  build?: string
  command?: string[]
  environment?: Record<string, string>
  ports?: string[]
  volumes?: string[]
}
const compose = parse(readFileSync(join(projectRoot, 'compose.yaml'), 'utf8')) as {
  services: Record<string, Service>
}
const realm = JSON.parse(readFileSync(join(projectRoot, 'compose/keycloak/optics-realm.json'), 'utf8')) as {
  realm: string
  roles: { realm: { name: string }[] }
  clients: {
    clientId: string
    publicClient: boolean
    redirectUris: string[]
    webOrigins: string[]
    attributes: Record<string, string>
  }[]
  users: { username: string; credentials: { value: string }[]; realmRoles: string[] }[]
}
const { optics, keycloak, postgres } = compose.services as Record<'optics' | 'keycloak' | 'postgres', Service>

/** The address a service publishes on the machine running compose, as `http://localhost:PORT`. */
const published = (service: Service) => `http://localhost:${service.ports?.[0]?.split(':')[0]}`

test('the service starts with the environment compose gives it: tokens, the page sign-in, PostgreSQL', () => {
  const config = loadConfig({ HOST: '0.0.0.0', ...optics!.environment })
  assert.equal(config.auth.mode, 'jwt')
  assert.equal(config.webSignIn?.clientId, 'optics-web')
  assert.equal(config.demoData, 'true', 'the demo catalogue fills the empty database')
  const database = new URL(config.databaseUrl!)
  assert.equal(database.hostname, 'postgres')
  assert.equal(database.username, postgres!.environment!.POSTGRES_USER)
  assert.equal(database.password, postgres!.environment!.POSTGRES_PASSWORD)
  assert.equal(database.pathname, `/${postgres!.environment!.POSTGRES_DB}`)
  assert.equal(optics!.build, '.')
  assert.equal(published(optics!), 'http://localhost:8080')
})

test('the issuer is the address the browser reaches the provider at, and the keys come from the same realm', () => {
  const issuer = new URL(optics!.environment!.AUTH_ISSUER!)
  assert.equal(issuer.origin, published(keycloak!))
  assert.equal(keycloak!.environment!.KC_HOSTNAME, published(keycloak!))
  assert.equal(issuer.pathname, `/realms/${realm.realm}`)
  assert.ok(keycloak!.command?.includes('--import-realm'))
  assert.ok(keycloak!.command?.includes(`--http-port=${issuer.port}`), 'one port inside and out')
  assert.ok(keycloak!.volumes?.includes('./compose/keycloak:/opt/keycloak/data/import:ro'))
  const keys = new URL(optics!.environment!.AUTH_JWKS_URL!)
  assert.equal(keys.host, `keycloak:${issuer.port}`)
  assert.equal(keys.pathname, `/realms/${realm.realm}/protocol/openid-connect/certs`)
})

test("the realm's page client is public with PKCE and returns to the page; its users hold the service's roles", () => {
  const client = realm.clients.find((candidate) => candidate.clientId === optics!.environment!.WEB_OIDC_CLIENT_ID)
  assert.ok(client, 'the page client is in the realm')
  assert.equal(client.publicClient, true)
  assert.equal(client.attributes['pkce.code.challenge.method'], 'S256')
  assert.deepEqual(client.redirectUris, [`${published(optics!)}/*`])
  assert.deepEqual(client.webOrigins, [published(optics!)])
  const roles = realm.roles.realm.map((role) => role.name)
  assert.deepEqual(roles.sort(), [READ_ROLE, WRITE_ROLE].sort())
  const rolesOf = (name: string) => realm.users.find((user) => user.username === name)?.realmRoles ?? []
  assert.ok(rolesOf('manager').includes(WRITE_ROLE))
  assert.ok(rolesOf('auditor').includes(READ_ROLE) && !rolesOf('auditor').includes(WRITE_ROLE))
  assert.ok(!rolesOf('optician').some((role) => role.startsWith('prices:')))
  // The passwords the file's comment and the documentation give.
  for (const user of realm.users) assert.equal(user.credentials[0]?.value, user.username)
})
