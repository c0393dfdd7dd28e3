import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { eachDatabase, useTestApp } from '../../../test/harness.js'
import { insertPriceEntries, insertSkus, refreshMatview } from '../freshness/catalog-repository.js'
import { glasses } from '../kinds/kinds.js'

/*
 * Facets and suggestions: drop-down values under the other filters, numeric bounds, prefix / substring / typo
 * suggestions, and both seeing a write as soon as the matview is refreshed (the cache is keyed by data version).
 */

let barcode = 5000
const frame = (manufacturer: string, brand: string, model: string, color: string) => ({
  barcode: String(++barcode),
  manufacturer,
  brand,
  model,
  color,
  targetGroup: 'unisex',
  material: 'acetate',
  type: 'full rim',
  size: '52-18-140',
  design: 'round',
})

eachDatabase('facets and suggestions', (ctx) => {
  const app = useTestApp(ctx, {
    setup: async () => {
      const db = ctx.db.primary
      await insertPriceEntries(db, glasses, [
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 1', price: 10000, purchase: 4000 },
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'CA 2', price: 12000, purchase: 5000 },
        { manufacturer: 'Safilo', brand: 'Polaroid', model: 'PLD 1', price: 6000, purchase: 2000 },
        { manufacturer: 'EssilorLuxottica', brand: 'Ray-Ban', model: 'RB 1', price: 15000, purchase: 7000 },
        { manufacturer: 'EssilorLuxottica', brand: 'Oakley', model: 'OX 1', price: 17000, purchase: 8000 },
        { manufacturer: 'Essilor', brand: 'Essilor Kids', model: 'EK 1', price: 5000, purchase: 2000 },
      ])
      await insertSkus(db, glasses, [
        frame('Safilo', 'Carrera', 'CA 1', 'black'),
        frame('Safilo', 'Carrera', 'CA 1', 'havana'),
        frame('Safilo', 'Carrera', 'CA 2', 'black'),
        frame('Safilo', 'Polaroid', 'PLD 1', 'black'),
        frame('EssilorLuxottica', 'Ray-Ban', 'RB 1', 'black'),
        frame('EssilorLuxottica', 'Ray-Ban', 'RB 1', 'gold'),
        frame('EssilorLuxottica', 'Oakley', 'OX 1', 'black'),
        frame('Essilor', 'Essilor Kids', 'EK 1', 'blue'),
      ])
      await refreshMatview(db, glasses)
    },
  })

  const facets = async (body: Record<string, unknown>) => {
    const response = await app().inject({
      method: 'POST',
      url: '/api/v2/good/nomenclature/search/glasses/facets',
      payload: body,
    })
    return { status: response.statusCode, body: response.json() }
  }
  const values = (facet: { values: { value: string; count: number }[] }) =>
    facet.values.map((v) => `${v.value}:${v.count}`)
  const suggest = async (query: string) => {
    const response = await app().inject({ method: 'GET', url: `/api/v2/good/nomenclature/suggest?${query}` })
    return { status: response.statusCode, body: response.json() }
  }

  describe('facets', () => {
    test('every text field lists its values with counts, most frequent first; numbers give min and max', async () => {
      const { status, body } = await facets({ byPriceList: false })
      assert.equal(status, 200)
      assert.equal(body.total, 8)
      assert.deepEqual(values(body.text.manufacturer), ['Safilo:4', 'EssilorLuxottica:3', 'Essilor:1'])
      assert.deepEqual(values(body.text.color), ['black:5', 'blue:1', 'gold:1', 'havana:1'])
      assert.equal(body.text.color.distinct, 4)
      assert.deepEqual(body.numeric.retailPrice, { min: 5000, max: 17000 })
    })

    test("a field's own filter does not narrow its list; the other filters do", async () => {
      const { body } = await facets({ byPriceList: false, brand: 'carrera', color: 'black' })
      assert.equal(body.total, 2)
      // Brands: every brand that has black frames (the brand filter itself is left out).
      assert.deepEqual(values(body.text.brand), ['Carrera:2', 'Oakley:1', 'Polaroid:1', 'Ray-Ban:1'])
      // Colours: every colour of Carrera (the colour filter left out).
      assert.deepEqual(values(body.text.color), ['black:2', 'havana:1'])
      // Fields without a filter of their own count under both filters.
      assert.deepEqual(values(body.text.model), ['CA 1:1', 'CA 2:1'])
      assert.deepEqual(body.numeric.retailPrice, { min: 10000, max: 12000 })
    })

    test('price-list mode counts entries and offers only the fields an entry has', async () => {
      const { body } = await facets({ byPriceList: true, manufacturer: 'safilo' })
      assert.equal(body.total, 3)
      assert.deepEqual(values(body.text.brand), ['Carrera:2', 'Polaroid:1'])
      assert.deepEqual(values(body.text.manufacturer), ['Safilo:3', 'EssilorLuxottica:2', 'Essilor:1'])
      assert.equal(body.text.color, undefined)
      assert.deepEqual(body.numeric.retailPrice, { min: 6000, max: 12000 })
    })

    test('the body is checked as the search checks it', async () => {
      assert.equal((await facets({})).status, 400)
      assert.equal((await facets({ byPriceList: 'yes' })).status, 400)
    })
  })

  describe('suggestions', () => {
    test('values starting with the text come first, then those containing it, each with its count', async () => {
      const { status, body } = await suggest('kind=glasses&field=manufacturer&q=ESSIL')
      assert.equal(status, 200)
      assert.deepEqual(body.suggestions, [
        { value: 'EssilorLuxottica', count: 3, match: 'prefix' },
        { value: 'Essilor', count: 1, match: 'prefix' },
      ])
      const contained = await suggest('kind=glasses&field=brand&q=r')
      assert.deepEqual(
        contained.body.suggestions.map((s: { value: string; match: string }) => `${s.value}:${s.match}`),
        ['Ray-Ban:prefix', 'Carrera:substring', 'Essilor Kids:substring', 'Polaroid:substring'],
      )
    })

    test('a typo still finds the value by similarity', async () => {
      const { body } = await suggest('kind=glasses&field=brand&q=carera')
      assert.deepEqual(body.suggestions, [{ value: 'Carrera', count: 3, match: 'similar' }])
      const oakly = await suggest('kind=glasses&field=brand&q=oakly&byPriceList=true')
      assert.deepEqual(oakly.body.suggestions, [{ value: 'Oakley', count: 1, match: 'similar' }])
    })

    test('limit caps the list; an unknown kind or field, or a blank text, is a 400 naming it', async () => {
      assert.equal((await suggest('kind=glasses&field=brand&q=a&limit=2')).body.suggestions.length, 2)
      const field = await suggest('kind=glasses&field=price&q=a')
      assert.equal(field.status, 400)
      assert.deepEqual(
        field.body.errors.map((e: { field: string }) => e.field),
        ['field'],
      )
      assert.match(field.body.detail, /allowed: manufacturer, brand/)
      assert.equal((await suggest('kind=glasses&field=color&q=a&byPriceList=true')).status, 400)
      assert.equal((await suggest('kind=glasses&field=brand&q=%20')).body.errors[0].field, 'q')
      assert.equal((await suggest('kind=shoes&field=brand&q=a')).status, 400)
      assert.equal((await suggest('kind=glasses&field=brand&q=a&limit=11')).status, 400)
    })
  })

  test('after a write and the refresh, facets and suggestions show the new data at once', async () => {
    assert.deepEqual(values((await facets({ byPriceList: false })).body.text.brand).slice(0, 1), ['Carrera:3'])
    assert.equal((await suggest('kind=glasses&field=brand&q=silh')).body.suggestions.length, 0)
    await insertPriceEntries(ctx.db.primary, glasses, [
      { manufacturer: 'Silhouette Group', brand: 'Silhouette', model: 'SH 1', price: 30000, purchase: 15000 },
    ])
    await insertSkus(ctx.db.primary, glasses, [
      frame('Silhouette Group', 'Silhouette', 'SH 1', 'titanium'),
      frame('Silhouette Group', 'Silhouette', 'SH 1', 'gold'),
      frame('Silhouette Group', 'Silhouette', 'SH 1', 'black'),
      frame('Silhouette Group', 'Silhouette', 'SH 1', 'silver'),
    ])
    await refreshMatview(ctx.db.primary, glasses)
    const after = (await facets({ byPriceList: false })).body
    assert.deepEqual(values(after.text.brand).slice(0, 1), ['Silhouette:4'])
    assert.equal(after.numeric.retailPrice.max, 30000)
    assert.deepEqual((await suggest('kind=glasses&field=brand&q=silh')).body.suggestions, [
      { value: 'Silhouette', count: 4, match: 'prefix' },
    ])
  })
})
