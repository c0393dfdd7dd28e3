import assert from 'node:assert/strict'
import { test } from 'node:test'
import { samples } from '../../../test/fixtures/catalog.js'
import { eachDatabase, useTestApp } from '../../../test/harness.js'
import { insertPriceEntries, insertSkus, refreshMatview } from '../freshness/catalog-repository.js'
import type { Filter, Kind } from '../kinds/kind.js'
import { kinds } from '../kinds/kinds.js'

/*
 * Exact text filters of the seven searches and their facets (beyond the contract): `exact` in the body names the
 * text filters compared whole, on the keys' normal form. Each kind gets its sample entry and SKU, plus an entry
 * and a priced SKU whose first key is the sample's with a word added ("… Junior"): a substring selects both, the
 * exact value only the sample.
 */

const searchPath = (kind: Kind) => `/api/v2/good/nomenclature/search/${kind.path}`

/** The text filter of the kind's first required text key. */
function keyFilter(kind: Kind): Filter & { match: 'substring' } {
  const filter = kind.filters.find(
    (candidate): candidate is Filter & { match: 'substring' } =>
      candidate.match === 'substring' && candidate.attribute.entry === 'key',
  )
  assert.ok(filter, `${kind.path} has a text key filter`)
  return filter
}

eachDatabase('nomenclature search: exact text filters', (ctx) => {
  const app = useTestApp(ctx, {
    setup: async () => {
      for (const kind of kinds) {
        const { entry, sku } = samples[kind.path]!
        const key = keyFilter(kind).attribute.name
        const junior = `${entry[key]} Junior`
        await insertPriceEntries(ctx.db.primary, kind, [entry, { ...entry, [key]: junior }])
        await insertSkus(ctx.db.primary, kind, [sku, { ...sku, barcode: `${sku.barcode}9`, [key]: junior }])
        await refreshMatview(ctx.db.primary, kind)
      }
    },
  })

  const search = async (kind: Kind, body: Record<string, unknown>, facets = false) => {
    const response = await app().inject({
      method: 'POST',
      url: `${searchPath(kind)}${facets ? '/facets' : ''}`,
      payload: body,
    })
    assert.equal(response.statusCode, 200, response.body)
    return response.json()
  }

  for (const kind of kinds) {
    const filter = keyFilter(kind)
    const value = String(samples[kind.path]!.entry[filter.attribute.name])

    test(`${kind.path}: an exact ${filter.name} selects its value only, in either mode and in any case`, async () => {
      for (const byPriceList of [true, false]) {
        const mode = byPriceList ? 'price list' : 'matview'
        const substring = await search(kind, { byPriceList, [filter.name]: value })
        assert.equal(substring.totalElements, 2, `${mode}: the substring also selects the "Junior" value`)
        for (const written of [value, ` ${value.toUpperCase()}\u00a0`, value.toLowerCase()]) {
          const exact = await search(kind, { byPriceList, [filter.name]: written, exact: [filter.name] })
          assert.equal(exact.totalElements, 1, `${mode}: exact ${JSON.stringify(written)}`)
          assert.equal(exact.content[0][filter.name], value)
        }
        // A part of the value is no exact match.
        const part = await search(kind, { byPriceList, [filter.name]: value.slice(0, -1), exact: [filter.name] })
        assert.equal(part.totalElements, 0, `${mode}: a part of the value`)
        // The facets count under the exact filter too (and list the alternatives of the field's own filter).
        const facets = await search(kind, { byPriceList, [filter.name]: value, exact: [filter.name] }, true)
        assert.equal(facets.total, 1, `${mode}: facets total`)
      }
    })
  }

  test('an exact list naming what is no text filter of the kind is a 400 naming the names', async () => {
    const [kind] = kinds
    const response = await app().inject({
      method: 'POST',
      url: searchPath(kind!),
      payload: { byPriceList: true, exact: ['retailPrice', keyFilter(kind!).name, 'colour'] },
    })
    assert.equal(response.statusCode, 400, response.body)
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
    const problem = response.json()
    assert.deepEqual(
      problem.errors.map((error: { field: string }) => error.field),
      ['exact'],
    )
    assert.match(problem.errors[0].message, /retailPrice, colour/)
  })
})
