import assert from 'node:assert/strict'
import { test } from 'node:test'
import { singleVisionLens } from '../../../test/fixtures/catalog.js'
import { buildTestApp, eachDatabase, useTestApp } from '../../../test/harness.js'
import { insertPriceEntries, insertSkus, refreshMatview } from '../freshness/catalog-repository.js'
import type { Kind } from '../kinds/kind.js'
import { contactLenses, lenses } from '../kinds/kinds.js'

/*
 * Prescription filters: a lens or contact lens matches when each given power lies in its zone (or equals its own
 * value), edges included; a plus-cylinder prescription finds what its minus-cylinder form finds; off-step and
 * out-of-range values are refused.
 */

const lens = singleVisionLens
const zone = (sphereFrom: number, sphereTo: number, cylinderFrom: number, cylinderTo: number, price: number) => ({
  ...lens,
  diameterFrom: 65,
  diameterTo: 75,
  sphereFrom,
  sphereTo,
  cylinderFrom,
  cylinderTo,
  price,
  purchase: price / 2,
})

const contact = {
  manufacturer: 'Alcon',
  name: 'Air Optix for Astigmatism',
  wearingPeriod: 'month',
  color: 'clear',
  packageQuantity: 6,
  add: null,
  curvatureRadius: 8.7,
}

eachDatabase('prescription filters', (ctx) => {
  const app = useTestApp(ctx, {
    setup: async () => {
      const db = ctx.db.primary
      await insertPriceEntries(db, lenses, [
        zone(-4, 4, -2, 0, 5000),
        zone(-8, -4.25, -2, 0, 6500),
        { ...zone(0, 4, -2, 0, 9000), brand: 'Progressive', addFrom: 0.75, addTo: 3.5 },
      ])
      await insertSkus(db, lenses, [
        { ...lens, barcode: 'L1', diameter: 70 }, // made to order: priced by every zone
        { ...lens, barcode: 'L2', diameter: 70, sphere: -2, cylinder: -0.5 }, // stock: its own powers
        { ...lens, brand: 'Progressive', barcode: 'P1', diameter: 70 },
      ])
      await insertPriceEntries(db, contactLenses, [
        {
          ...contact,
          diameterFrom: 14.5,
          diameterTo: 14.5,
          dioptreFrom: -6,
          dioptreTo: 0,
          cylinderFrom: -2.25,
          cylinderTo: -0.75,
          axisFrom: 0,
          axisTo: 180,
          price: 2500,
          purchase: 1200,
        },
      ])
      await insertSkus(db, contactLenses, [
        { ...contact, barcode: 'C1', diameter: 14.5, dioptre: -2.5, cylinder: -1.25, axis: 180 },
        { ...contact, barcode: 'C2', diameter: 14.5, dioptre: -2.5, cylinder: -1.25, axis: 90 },
        { ...contact, barcode: 'C3', diameter: 14.5, dioptre: -1.25, cylinder: -0.75, axis: 90 },
      ])
      await refreshMatview(db, lenses)
      await refreshMatview(db, contactLenses)
    },
  })

  const search = async (kind: Kind, body: Record<string, unknown>) => {
    const response = await app().inject({
      method: 'POST',
      url: `/api/v2/good/nomenclature/search/${kind.path}?size=50&sort=retailPrice${kind === lenses ? '&sort=sphereFrom' : ''}`,
      payload: body,
    })
    return { status: response.statusCode, body: response.json() }
  }
  const priced = async (body: Record<string, unknown>) =>
    (await search(lenses, { byPriceList: false, ...body })).body.content.map(
      (item: { brand: string; retailPrice: number; sphereFrom: number }) => `${item.brand} ${item.retailPrice}`,
    )

  test('a prescription inside a zone finds the goods it prices; a stock lens only at its own powers', async () => {
    assert.deepEqual(await priced({ sphere: -2.75, cylinder: -1.25 }), ['Nulux 5000'])
    assert.deepEqual(await priced({ sphere: -2, cylinder: -0.5 }), ['Nulux 5000', 'Nulux 5000'])
    assert.deepEqual(await priced({ sphere: -6 }), ['Nulux 6500'])
    // A zone without addition bounds is open on that side: the single-vision zone covers any addition too.
    assert.deepEqual(await priced({ sphere: 1.5, add: 2 }), ['Nulux 5000', 'Progressive 9000'])
  })

  test('the edges of a zone are inside it; a quarter beyond is outside', async () => {
    assert.deepEqual(await priced({ sphere: 4, cylinder: -2 }), ['Nulux 5000', 'Progressive 9000'])
    assert.deepEqual(await priced({ sphere: -4.25 }), ['Nulux 6500'])
    assert.deepEqual(await priced({ sphere: -8, cylinder: 0 }), ['Nulux 6500'])
    assert.deepEqual(await priced({ sphere: -8.25 }), [])
    assert.deepEqual(await priced({ sphere: 4.25 }), [])
    assert.deepEqual(await priced({ sphere: 0, cylinder: -2.25 }), [])
    assert.deepEqual(await priced({ sphere: 1, add: 0.5 }), ['Nulux 5000'])
    assert.deepEqual(await priced({ sphere: 1, add: 3.5 }), ['Nulux 5000', 'Progressive 9000'])
    assert.deepEqual(await priced({ sphere: 1, add: 3.75 }), ['Nulux 5000'])
  })

  test('a plus-cylinder prescription finds exactly what its minus-cylinder form finds', async () => {
    // -4.00 / +1.25 × 10 is -2.75 / -1.25 × 100.
    const plus = await search(lenses, { byPriceList: false, sphere: -4, cylinder: 1.25 })
    const minus = await search(lenses, { byPriceList: false, sphere: -2.75, cylinder: -1.25 })
    assert.equal(plus.status, 200)
    assert.deepEqual(plus.body, minus.body)
    assert.equal(minus.body.totalElements, 1)

    const contacts = async (body: Record<string, unknown>) =>
      (await search(contactLenses, { byPriceList: false, ...body })).body.content.map(
        (item: { dioptreFrom: number }) => item.dioptreFrom,
      ).length
    // -3.75 / +1.25 × 90 is -2.50 / -1.25 × 180: only C1 has that axis.
    assert.equal(await contacts({ dioptre: -3.75, cylinder: 1.25, axis: 90 }), 1)
    assert.equal(await contacts({ dioptre: -2.5, cylinder: -1.25, axis: 180 }), 1)
    assert.equal(await contacts({ dioptre: -2.5, cylinder: -1.25 }), 2)
    // +1.25 × 0 → axis 90: C2.
    assert.deepEqual(
      (await search(contactLenses, { byPriceList: false, dioptre: -3.75, cylinder: 1.25, axis: 0 })).body.totalElements,
      1,
    )
  })

  test('a prescription written as text with trailing zeros finds what its number finds, on the index and on SQL', async () => {
    const sqlApp = await buildTestApp(ctx.db, { SEARCH_INDEX: 'off' })
    try {
      for (const target of [app(), sqlApp]) {
        const contacts = async (body: Record<string, unknown>) =>
          (
            await target.inject({
              method: 'POST',
              url: '/api/v2/good/nomenclature/search/contact-lenses',
              payload: { byPriceList: false, ...body },
            })
          ).json()
        const written = await contacts({ dioptre: '-2.50', cylinder: '-1.250', axis: '90.0' })
        assert.equal(written.totalElements, 1)
        assert.deepEqual(written, await contacts({ dioptre: -2.5, cylinder: -1.25, axis: 90 }))
      }
    } finally {
      await sqlApp.close()
    }
  })

  test('price-list mode matches the zones that cover the prescription', async () => {
    const { body } = await search(lenses, { byPriceList: true, sphere: -4.25, cylinder: -2 })
    assert.deepEqual(
      body.content.map((item: { sphereFrom: number; sphereTo: number }) => [item.sphereFrom, item.sphereTo]),
      [[-8, -4.25]],
    )
  })

  test('off-step, out-of-range and non-numeric powers, and a bad axis, are a 400 naming each field', async () => {
    const cases: [Kind, Record<string, unknown>, string[]][] = [
      [lenses, { sphere: -2.7 }, ['sphere']],
      [lenses, { sphere: 30.25, cylinder: -0.1 }, ['sphere', 'cylinder']],
      [lenses, { add: -31 }, ['add']],
      [lenses, { sphere: 'abc' }, ['sphere']],
      [contactLenses, { axis: 181 }, ['axis']],
      [contactLenses, { axis: 12.5, dioptre: '-2.125' }, ['dioptre', 'axis']],
    ]
    for (const [kind, filters, fields] of cases) {
      const { status, body } = await search(kind, { byPriceList: false, ...filters })
      assert.equal(status, 400, JSON.stringify(filters))
      assert.deepEqual(
        body.errors.map((e: { field: string }) => e.field).sort(),
        [...fields].sort(),
        JSON.stringify(filters),
      )
    }
    // Accepted: ±30, quarters written as text, null = no filter.
    assert.equal((await search(lenses, { byPriceList: false, sphere: '-30.00', cylinder: null })).status, 200)
    assert.equal((await search(contactLenses, { byPriceList: false, axis: 0, dioptre: '+0.25' })).status, 200)
  })
})
