import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { generate, TYPES_PATH } from './api-types.js'

/*
 * The web app's API types are the service's contract of now: regenerated from the OpenAPI document the service
 * builds, they equal the checked-in file (else `npm run api-types` writes it anew).
 */

test('the checked-in web API types are generated from the current OpenAPI document', async () => {
  const { types } = await generate()
  assert.ok(types.includes('"/api/v2/glasses/prices/list"'), 'the generated types describe the price list')
  assert.ok(
    readFileSync(TYPES_PATH, 'utf8') === types,
    'web/src/api/schema.d.ts is stale: run `npm run api-types` and commit it',
  )
})
