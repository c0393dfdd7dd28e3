/*
 * What `/web-config.json` tells the web app at start, written by the service (http/web-app.ts) and read by the page
 * (web/src/auth/): one type for both.
 */

/**
 * `none`: no authentication, no sign-in; `demo`: the same, in the demo mode (`AUTH_MODE=demo`: the page says on every
 * screen that anyone may change its data); `oidc`: sign in at the provider with these public settings;
 * `unavailable`: the API wants tokens but the web app has no OpenID Connect client configured.
 */
export type WebConfig =
  | { readonly auth: 'none' }
  | { readonly auth: 'demo' }
  | { readonly auth: 'unavailable' }
  | { readonly auth: 'oidc'; readonly issuer: string; readonly clientId: string; readonly scopes: string }

/** Where the page reads it; outside `/api`, so it answers without a token. */
export const WEB_CONFIG_PATH = '/web-config.json'
