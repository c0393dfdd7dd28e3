import assert from 'node:assert/strict'
import { test } from 'node:test'
import { samples } from '../../../test/fixtures/catalog.js'
import { eachDatabase, useTestApp } from '../../../test/harness.js'
import { insertPriceEntries, insertSkus, refreshMatview } from '../freshness/catalog-repository.js'
import type { ItemField, Kind } from '../kinds/kind.js'
import { kinds } from '../kinds/kinds.js'

/*
 * Table-driven over the seven kinds: every request and item field, both modes, matview membership.
 * Each kind gets its sample (test/fixtures/catalog.ts), an unpriced SKU and an entry that prices nothing.
 */

const searchPath = (kind: Kind) => `/api/v2/good/nomenclature/search/${kind.path}`

/** The first required text key: changing it makes a SKU or an entry that meets nothing. */
const firstKey = (kind: Kind) => kind.attributes.find((a) => a.entry === 'key' && a.type === 'text')!

function expectedValue(kind: Kind, field: ItemField, byPriceList: boolean): unknown {
  const { entry, sku } = samples[kind.path]!
  const { source } = field
  let value: unknown
  if (source.from === 'price') value = entry.price
  else if (source.from === 'bound') value = entry[field.name]
  else if (byPriceList) value = field.entryColumn ? entry[field.name] : null
  else value = sku[field.name]
  if (value === undefined) value = null
  return typeof value === 'number' || (field.type !== 'text' && value !== null) ? Number(value) : value
}

eachDatabase('nomenclature search, table-driven over the seven kinds', (ctx) => {
  const app = useTestApp(ctx, {
    setup: async () => {
      for (const kind of kinds) {
        const { entry, sku } = samples[kind.path]!
        const key = firstKey(kind)
        await insertPriceEntries(ctx.db.primary, kind, [entry, { ...entry, [key.name]: `${entry[key.name]} Orphan` }])
        await insertSkus(ctx.db.primary, kind, [
          sku,
          { ...sku, barcode: `${sku.barcode}9`, [key.name]: `${sku[key.name]} Unpriced` },
        ])
        await refreshMatview(ctx.db.primary, kind)
      }
    },
  })

  const search = (kind: Kind, body: Record<string, unknown>, query = '') =>
    app().inject({ method: 'POST', url: `${searchPath(kind)}${query}`, payload: body })

  for (const kind of kinds) {
    test(`${kind.path}: the matview search returns the priced SKU with every item field and its entry's price`, async () => {
      const response = await search(kind, { byPriceList: false })
      assert.equal(response.statusCode, 200)
      const page = response.json()
      assert.equal(page.totalElements, 1, 'the unpriced SKU is not in the matview')
      const [item] = page.content
      assert.deepEqual(
        Object.keys(item),
        kind.itemFields.map((f) => f.name),
      )
      for (const field of kind.itemFields) {
        assert.deepEqual(item[field.name], expectedValue(kind, field, false), `${field.name}`)
      }
    })

    test(`${kind.path}: the price-list search returns every entry, with null for what an entry lacks`, async () => {
      const response = await search(kind, { byPriceList: true })
      assert.equal(response.statusCode, 200)
      const page = response.json()
      assert.equal(page.totalElements, 2, 'the entry without SKUs is in the price list')
      const key = firstKey(kind).name
      const item = page.content.find((candidate: Record<string, unknown>) => !String(candidate[key]).endsWith('Orphan'))
      assert.deepEqual(
        Object.keys(item),
        kind.itemFields.map((f) => f.name),
      )
      for (const field of kind.itemFields) {
        assert.deepEqual(item[field.name], expectedValue(kind, field, true), `${field.name}`)
      }
    })

    for (const filter of kind.filters.filter((f) => f.match === 'substring')) {
      test(`${kind.path}: filter ${filter.name} matches a case-insensitive substring, in both modes`, async () => {
        const value = String(samples[kind.path]!.sku[filter.name])
        const middle = value.slice(1, Math.max(2, value.length - 1)).toUpperCase()
        for (const byPriceList of [false, true]) {
          const hit = (await search(kind, { byPriceList, [filter.name]: `  ${middle} ` })).json()
          assert.ok(hit.totalElements >= 1, `'${middle}' finds the sample (byPriceList=${byPriceList})`)
          const miss = (await search(kind, { byPriceList, [filter.name]: 'no-such-value' })).json()
          // A wildcard (NULL) key of an entry covers every value, so such entries match any filter on it.
          const wildcard =
            byPriceList && filter.attribute.entry === 'wildcard' && !samples[kind.path]!.entry[filter.name]
          assert.equal(miss.totalElements, wildcard ? 2 : 0, `byPriceList=${byPriceList}`)
        }
      })
    }

    for (const filter of kind.filters.filter((f) => f.match !== 'substring' && !f.prescription)) {
      test(`${kind.path}: filter ${filter.name} matches the sample's value as a number`, async () => {
        const value = Number(samples[kind.path]!.sku[filter.name])
        for (const byPriceList of [false, true]) {
          const hit = (await search(kind, { byPriceList, [filter.name]: value.toFixed(2) })).json()
          assert.ok(hit.totalElements >= 1, `${value.toFixed(2)} finds ${value} (byPriceList=${byPriceList})`)
          const miss = (await search(kind, { byPriceList, [filter.name]: value + 100 })).json()
          const wildcard =
            byPriceList &&
            filter.match === 'equals' &&
            filter.attribute.entry === 'wildcard' &&
            !samples[kind.path]!.entry[filter.name]
          assert.equal(miss.totalElements, wildcard ? 2 : 0, `byPriceList=${byPriceList}`)
        }
      })
    }

    test(`${kind.path}: byPriceList missing or null is a 400 naming the field`, async () => {
      for (const body of [{}, { byPriceList: null }, { byPriceList: 'yes' }]) {
        const response = await search(kind, body)
        assert.equal(response.statusCode, 400)
        assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
        const problem = response.json()
        assert.equal(problem.status, 400)
        assert.deepEqual(
          problem.errors.map((e: { field: string }) => e.field),
          ['byPriceList'],
        )
      }
    })
  }
})
