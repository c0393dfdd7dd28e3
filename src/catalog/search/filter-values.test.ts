import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { eachDatabase, useTestApp } from '../../../test/harness.js'
import { seedCatalogue } from '../../demo/demo-catalogue.js'
import { kindByPath } from '../kinds/kinds.js'
import type { KindForms } from './kind-form-routes.js'

/*
 * Every text filter of every kind's form offers the values present, with their counts, and suggests them as one
 * types, also where the item does not carry the field (a lens's material, geometry and technology): a value from
 * a drop-down, searched as exact, finds as many goods as its count said. Answered from the index and from SQL.
 */

interface Facet {
  values: { value: string; count: number }[]
}

eachDatabase('values of every text filter', (ctx) => {
  let seeded = false
  for (const index of ['on', 'off'] as const) {
    describe(`search index ${index}`, () => {
      const app = useTestApp(ctx, {
        setup: async () => {
          if (seeded) return
          seeded = true
          await seedCatalogue(ctx.db, { scale: 200 })
        },
        env: { SEARCH_INDEX: index },
      })
      const post = async (url: string, body: unknown) => {
        const response = await app().inject({ method: 'POST', url, payload: body as Record<string, unknown> })
        assert.equal(response.statusCode, 200, response.body)
        return response.json()
      }
      const get = async (url: string) => {
        const response = await app().inject({ method: 'GET', url })
        assert.equal(response.statusCode, 200, response.body)
        return response.json()
      }

      test('each text filter of each kind lists its values; a value picked finds as many goods as it counted', async () => {
        const { kinds: forms } = (await get('/api/v2/good/nomenclature/kinds')) as KindForms
        const checked: string[] = []
        for (const form of forms) {
          const path = `/api/v2/good/nomenclature/search/${form.kind}`
          const facets = (await post(`${path}/facets`, { byPriceList: false })) as { text: Record<string, Facet> }
          for (const field of form.fields.filter((candidate) => candidate.input === 'text')) {
            const facet = facets.text[field.name]
            assert.ok(facet && facet.values.length > 0, `${form.kind}.${field.name} offers values`)
            const top = facet.values[0]!
            const found = await post(`${path}?size=1`, {
              byPriceList: false,
              [field.name]: top.value,
              exact: [field.name],
            })
            assert.equal(found.totalElements, top.count, `${form.kind}.${field.name} = ${top.value}`)
            const typed = top.value.slice(0, 3)
            const { suggestions } = await get(
              `/api/v2/good/nomenclature/suggest?kind=${form.kind}&field=${field.name}&q=${encodeURIComponent(typed)}`,
            )
            assert.ok(
              suggestions.some((s: { value: string; count: number }) => s.value === top.value && s.count === top.count),
              `${form.kind}.${field.name}: "${typed}" suggests ${top.value}`,
            )
            checked.push(`${form.kind}.${field.name}`)
          }
        }
        for (const name of [
          'lenses.material',
          'lenses.geometry',
          'lenses.technology',
          'semifinished-lenses.material',
        ]) {
          assert.ok(checked.includes(name), name)
        }
      })

      test('in price-list mode, the entries offer the values of the filters they carry', async () => {
        const lenses = kindByPath.get('lenses')!
        const facets = (await post('/api/v2/good/nomenclature/search/lenses/facets', { byPriceList: true })) as {
          text: Record<string, Facet>
        }
        for (const name of ['material', 'geometry', 'technology']) {
          assert.equal(lenses.attributes.find((a) => a.name === name)?.entry, 'wildcard')
          const top = facets.text[name]?.values[0]
          assert.ok(top, `lenses.${name} in the price list`)
          const { suggestions } = await get(
            `/api/v2/good/nomenclature/suggest?kind=lenses&field=${name}&byPriceList=true&q=${encodeURIComponent(top.value.slice(0, 3))}`,
          )
          assert.ok(
            suggestions.some((s: { value: string }) => s.value === top.value),
            `lenses.${name}: the price list suggests ${top.value}`,
          )
        }
      })
    })
  }
})
