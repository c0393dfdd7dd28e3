import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { singleVisionLens } from '../../../test/fixtures/catalog.js'
import { eachDatabase, useTestApp } from '../../../test/harness.js'
import { parseSort } from '../../http/page.js'
import { insertPriceEntries, insertSkus, refreshMatview } from '../freshness/catalog-repository.js'
import type { Kind } from '../kinds/kind.js'
import { extras, glasses, lenses, semifinishedLenses, sunglasses } from '../kinds/kinds.js'
import { buildSearchQuery } from './search-query.js'

/*
 * The matching rules, each by name: text normalisation, literal LIKE characters, wildcard keys, most specific
 * entry, power zones, numeric equality, diameter coverage, SKU-only filters in price-list mode, sorting, paging.
 */

let barcode = 1000
const nextBarcode = () => String(++barcode)

const frame = (model: string, color: string, extra: Record<string, string> = {}) => ({
  barcode: nextBarcode(),
  manufacturer: 'Safilo',
  brand: 'Carrera',
  model,
  color,
  targetGroup: 'men',
  material: 'acetate',
  type: 'full rim',
  size: '54-18-145',
  design: 'rectangle',
  ...extra,
})

eachDatabase('nomenclature search rules', (ctx) => {
  const app = useTestApp(ctx, {
    setup: async () => {
      const db = ctx.db.primary
      // Frames: 23 priced models (paging), plus text-normalisation and LIKE-character cases.
      const models = Array.from({ length: 23 }, (_, i) => `CA ${String(i + 1).padStart(3, '0')}`)
      await insertPriceEntries(db, glasses, [
        ...models.map((model, i) => ({
          manufacturer: 'Safilo',
          brand: 'Carrera',
          model,
          price: 1000 + i * 100,
          purchase: 400,
        })),
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'Ёжик 100%', price: 5000, purchase: 2000 },
        { manufacturer: 'Safilo', brand: 'Carrera', model: 'A_B', price: 6000, purchase: 2500 },
      ])
      await insertSkus(db, glasses, [
        ...models.map((model, i) => frame(model, i % 2 === 0 ? 'black' : 'gold')),
        frame('ЁЖИК 100%', 'чёрный'),
        frame('a_b', 'havana'),
        frame('AXB', 'havana'),
      ])

      // Sunglasses: a generic entry and a more specific one for one colour.
      await insertPriceEntries(db, sunglasses, [
        { manufacturer: 'EssilorLuxottica', brand: 'Ray-Ban', model: 'RB2140', price: 12000, purchase: 5000 },
        {
          manufacturer: 'EssilorLuxottica',
          brand: 'Ray-Ban',
          model: 'RB2140',
          lensesType: 'polarized',
          price: 15000,
          purchase: 6000,
        },
      ])
      const sun = (color: string, lensesType: string) => ({
        barcode: nextBarcode(),
        manufacturer: 'EssilorLuxottica',
        brand: 'Ray-Ban',
        model: 'RB2140',
        color,
        targetGroup: 'unisex',
        material: 'acetate',
        frameType: 'full rim',
        lensesType,
        design: 'wayfarer',
      })
      await insertSkus(db, sunglasses, [sun('black', 'polarized'), sun('black', 'tinted'), sun('tortoise', 'gradient')])

      // Lenses: two zones of one product and diameter bands.
      const lens = { ...singleVisionLens, cover: 'Hi-Vision LongLife' }
      await insertPriceEntries(db, lenses, [
        {
          ...lens,
          diameterFrom: 65,
          diameterTo: 75,
          sphereFrom: -4,
          sphereTo: 4,
          cylinderFrom: -2,
          cylinderTo: 0,
          price: 5000,
          purchase: 2000,
        },
        {
          ...lens,
          diameterFrom: 65,
          diameterTo: 75,
          sphereFrom: -8,
          sphereTo: -4.25,
          cylinderFrom: -2,
          cylinderTo: 0,
          price: 6500,
          purchase: 2600,
        },
      ])
      await insertSkus(db, lenses, [
        { ...lens, barcode: nextBarcode(), diameter: 70 }, // made to order: every zone
        { ...lens, barcode: nextBarcode(), diameter: 70, sphere: -2, cylinder: -0.5 }, // stock: its own zone
        { ...lens, barcode: nextBarcode(), diameter: 80 }, // no band covers 80
      ])

      // Semi-finished: an any-diameter entry and a 70 mm one.
      const blank = {
        manufacturer: 'Essilor',
        brand: 'Orma SF',
        type: 'single vision',
        lensesClass: 'standard',
        material: 'CR-39',
        geometry: 'spherical',
        cover: 'HC',
        technology: 'clear',
        color: 'colourless',
        refractionIndex: 1.5,
      }
      await insertPriceEntries(db, semifinishedLenses, [
        { ...blank, diameter: null, price: 800, purchase: 300 },
        { ...blank, diameter: 70, price: 900, purchase: 350 },
      ])
      await insertSkus(db, semifinishedLenses, [
        { ...blank, barcode: nextBarcode(), diameter: 65 },
        { ...blank, barcode: nextBarcode(), diameter: 70 },
      ])

      // Ready-made glasses: dioptre bands, and a colour-specific price.
      const ready = { frameManufacturer: 'Fabia Monti', frameBrand: 'Fabia Monti', frameModel: 'FM 385' }
      await insertPriceEntries(db, extras, [
        { ...ready, dioptreFrom: 0.5, dioptreTo: 3.5, price: 1190, purchase: 450 },
        { ...ready, dioptreFrom: 4, dioptreTo: 6, price: 1390, purchase: 520 },
        { ...ready, frameColor: 'gold', dioptreFrom: 0.5, dioptreTo: 3.5, price: 1290, purchase: 480 },
      ])
      const readySku = (color: string, dioptre: number) => ({
        ...ready,
        barcode: nextBarcode(),
        frameType: 'full rim',
        frameMaterial: 'metal',
        frameTargetGroup: 'women',
        frameColor: color,
        lensManufacturer: 'Mingyue',
        lensBrand: 'CR-39 HMC',
        dioptre,
      })
      await insertSkus(db, extras, [
        readySku('black', 2),
        readySku('gold', 2),
        readySku('black', 5),
        readySku('black', 7),
      ])

      for (const kind of [glasses, sunglasses, lenses, semifinishedLenses, extras]) await refreshMatview(db, kind)
    },
  })

  const search = async (kind: Kind, body: Record<string, unknown>, query = '') => {
    const response = await app().inject({
      method: 'POST',
      url: `/api/v2/good/nomenclature/search/${kind.path}${query}`,
      payload: body,
    })
    return { status: response.statusCode, body: response.json(), headers: response.headers }
  }
  const models = (page: { content: { model: string }[] }) => page.content.map((item) => item.model)

  describe('text filters', () => {
    test('ё and е are the same letter, in either case, on either side', async () => {
      for (const model of ['ежик', 'ЁЖИК', 'Ежик 1']) {
        const { body } = await search(glasses, { byPriceList: false, model })
        assert.deepEqual(models(body), ['ЁЖИК 100%'], model)
      }
      assert.equal((await search(glasses, { byPriceList: false, color: 'черн' })).body.totalElements, 1)
      assert.equal((await search(glasses, { byPriceList: true, model: 'ежик' })).body.totalElements, 1)
    })

    test('% and _ in a filter are literal characters', async () => {
      assert.deepEqual(models((await search(glasses, { byPriceList: false, model: '_' })).body), ['a_b'])
      assert.deepEqual(models((await search(glasses, { byPriceList: false, model: '0%' })).body), ['ЁЖИК 100%'])
      assert.equal((await search(glasses, { byPriceList: false, model: '%' })).body.totalElements, 1)
    })

    test('an empty or blank filter is no filter', async () => {
      const all = (await search(glasses, { byPriceList: false })).body.totalElements
      assert.equal(
        (await search(glasses, { byPriceList: false, model: '', color: '   ', brand: null })).body.totalElements,
        all,
      )
    })

    test('a SKU whose key no entry has is not in the matview', async () => {
      assert.equal((await search(glasses, { byPriceList: false, model: 'AXB' })).body.totalElements, 0)
    })

    test('in price-list mode a filter on a SKU-only attribute keeps the entries pricing such a SKU', async () => {
      const { body } = await search(glasses, { byPriceList: true, color: 'HAVANA' })
      assert.deepEqual(models(body), ['A_B'])
      assert.equal(body.content[0].color, null, 'the entry itself has no colour')
    })

    test('unknown body fields are ignored', async () => {
      const { status, body } = await search(glasses, { byPriceList: false, model: 'A_B', colour: 'x', extra: { a: 1 } })
      assert.equal(status, 200)
      assert.equal(body.totalElements, 1)
    })

    test('a filter of the wrong type is a 400 naming it (a number or a boolean is its text, as Jackson reads it)', async () => {
      for (const model of [['x'], { a: 1 }, [12]]) {
        const { status, body } = await search(glasses, { byPriceList: false, model })
        assert.equal(status, 400)
        assert.deepEqual(
          body.errors.map((e: { field: string }) => e.field),
          ['model'],
        )
      }
    })
  })

  describe('entries and SKUs', () => {
    test('the most specific sunglasses entry prices a SKU; the generic one prices the rest', async () => {
      const { body } = await search(sunglasses, { byPriceList: false }, '?sort=lensesType')
      assert.deepEqual(
        body.content.map((item: { lensesType: string; retailPrice: number }) => [item.lensesType, item.retailPrice]),
        [
          ['gradient', 12000],
          ['polarized', 15000],
          ['tinted', 12000],
        ],
      )
    })

    test('a wildcard entry key matches any filter value in price-list mode', async () => {
      const { body } = await search(sunglasses, { byPriceList: true, lensesType: 'mirror' })
      assert.deepEqual(
        body.content.map((item: { lensesType: string | null }) => item.lensesType),
        [null],
      )
    })

    test('a made-to-order lens gets one row per zone of its product; a stock lens only its own zone', async () => {
      const { body } = await search(lenses, { byPriceList: false }, '?sort=retailPrice')
      assert.deepEqual(
        body.content.map((item: { retailPrice: number; sphereFrom: number }) => [item.retailPrice, item.sphereFrom]),
        [
          [5000, -4],
          [5000, -4],
          [6500, -8],
        ],
      )
    })

    test('a lens whose diameter no band covers is not in the matview', async () => {
      assert.equal((await search(lenses, { byPriceList: false, diameter: 80 })).body.totalElements, 0)
    })

    test('diameter matches a SKU exactly and an entry band by containment', async () => {
      assert.equal((await search(lenses, { byPriceList: false, diameter: 70 })).body.totalElements, 3)
      assert.equal((await search(lenses, { byPriceList: true, diameter: 75 })).body.totalElements, 2)
      assert.equal((await search(lenses, { byPriceList: true, diameter: 76 })).body.totalElements, 0)
      const entry = (await search(lenses, { byPriceList: true, diameter: 65 })).body.content[0]
      assert.equal(entry.diameter, null, 'an entry covers a band, not one diameter')
      assert.deepEqual([entry.diameterFrom, entry.diameterTo], [65, 75])
    })

    test('refractionIndex compares as a number: 1.6 = 1.60 = "1.600"', async () => {
      for (const refractionIndex of [1.6, '1.60', '1.600', ' 1.6 ']) {
        assert.equal(
          (await search(lenses, { byPriceList: false, refractionIndex })).body.totalElements,
          3,
          String(refractionIndex),
        )
      }
      assert.equal((await search(lenses, { byPriceList: false, refractionIndex: 1.67 })).body.totalElements, 0)
      const { status, body } = await search(lenses, { byPriceList: false, refractionIndex: '1,6' })
      assert.equal(status, 400)
      assert.equal(body.errors[0].field, 'refractionIndex')
    })

    test('a semi-finished entry without a diameter prices every diameter; one with a diameter wins for it', async () => {
      const { body } = await search(semifinishedLenses, { byPriceList: false }, '?sort=diameter')
      assert.deepEqual(
        body.content.map((item: { diameter: number; retailPrice: number }) => [item.diameter, item.retailPrice]),
        [
          [65, 800],
          [70, 900],
        ],
      )
      const entries = (await search(semifinishedLenses, { byPriceList: true, diameter: 65 })).body
      assert.deepEqual(
        entries.content.map((item: { diameter: number | null }) => item.diameter),
        [null],
      )
    })

    test('ready-made glasses are priced by their dioptre band, a colour-specific entry first', async () => {
      const { body } = await search(extras, { byPriceList: false }, '?sort=frameColor&sort=dioptreFrom')
      assert.deepEqual(
        body.content.map((item: { frameColor: string; dioptreFrom: number; retailPrice: number }) => [
          item.frameColor,
          item.dioptreFrom,
          item.retailPrice,
        ]),
        [
          ['black', 0.5, 1190],
          ['black', 4, 1390],
          ['gold', 0.5, 1290],
        ],
      )
    })
  })

  describe('sorting and paging', () => {
    test('sort by retail price descending, then by the tiebreak', async () => {
      const { body } = await search(glasses, { byPriceList: false, model: 'CA ' }, '?sort=retailPrice,desc&size=3')
      assert.deepEqual(
        body.content.map((item: { retailPrice: number }) => item.retailPrice),
        [3200, 3100, 3000],
      )
      assert.deepEqual(body.sort, { empty: false, sorted: true, unsorted: false })
    })

    test('ignorecase sorts text without regard to case', async () => {
      const { body } = await search(glasses, { byPriceList: false, model: 'b' }, '?sort=model,desc,ignorecase')
      assert.deepEqual(models(body), ['a_b'])
      const mixed = await search(glasses, { byPriceList: false, color: 'havana' }, '?sort=model,ignorecase')
      assert.deepEqual(models(mixed.body), ['a_b'])
    })

    test('an unknown sort property is a 400 naming the allowed ones', async () => {
      const { status, body, headers } = await search(glasses, { byPriceList: false }, '?sort=price')
      assert.equal(status, 400)
      assert.match(String(headers['content-type']), /application\/problem\+json/)
      assert.equal(body.errors[0].field, 'sort')
      assert.match(body.errors[0].message, /retailPrice, manufacturer, brand, color, model/)
    })

    test('pages of the natural order never overlap or skip', async () => {
      const seen: string[] = []
      for (let page = 0; page < 3; page++) {
        const { body } = await search(glasses, { byPriceList: false, model: 'CA ' }, `?page=${page}&size=10`)
        seen.push(...models(body))
        assert.equal(body.totalElements, 23)
        assert.equal(body.totalPages, 3)
        assert.equal(body.last, page === 2)
      }
      assert.equal(new Set(seen).size, 23)
      assert.deepEqual(seen, [...seen].sort())
    })

    test('a search read whole and sorted (fenced, for few matches) gives the pages the plain query gives', async () => {
      const cases: { kind: Kind; byPriceList: boolean; filters: Record<string, string>; sort: string[] }[] = [
        { kind: glasses, byPriceList: false, filters: { model: 'CA ' }, sort: [] },
        { kind: glasses, byPriceList: false, filters: { model: 'ca 0' }, sort: ['retailPrice,desc'] },
        { kind: glasses, byPriceList: true, filters: { model: 'CA ' }, sort: ['model,desc,ignorecase'] },
        { kind: glasses, byPriceList: true, filters: { color: 'black' }, sort: [] },
      ]
      for (const { kind, byPriceList, filters, sort } of cases) {
        for (const page of [0, 1, 2]) {
          const request = {
            byPriceList,
            filters,
            page: { page, size: 10, sort: parseSort(sort) },
          }
          const plain = await buildSearchQuery(ctx.db.read, kind, request).page.execute()
          const fenced = await buildSearchQuery(ctx.db.read, kind, request, { fenced: true }).page.execute()
          if (page === 0) assert.ok(plain.length > 0, JSON.stringify(filters))
          assert.deepEqual(fenced, plain, JSON.stringify({ filters, sort, page }))
        }
      }
    })

    test('a page past the end is an empty page with the true total', async () => {
      const { status, body } = await search(glasses, { byPriceList: false, model: 'CA ' }, '?page=5&size=10')
      assert.equal(status, 200)
      assert.deepEqual(
        [
          body.content.length,
          body.number,
          body.pageable.offset,
          body.totalPages,
          body.totalElements,
          body.last,
          body.empty,
        ],
        [0, 5, 50, 3, 23, true, true],
      )
    })

    test('paging parameters are lenient: nonsense falls back as Spring does', async () => {
      const { status, body } = await search(glasses, { byPriceList: false }, '?page=abc&size=-3&page=7')
      assert.equal(status, 200)
      assert.deepEqual([body.number, body.size], [0, 10])
      const big = await search(glasses, { byPriceList: false }, '?size=100000')
      assert.equal(big.body.size, 2000)
    })

    test('nothing matching gives the empty first page', async () => {
      const { body } = await search(glasses, { byPriceList: false, model: 'nothing like this' })
      assert.deepEqual(
        [body.totalPages, body.totalElements, body.first, body.last, body.empty, body.numberOfElements],
        [0, 0, true, true, true, 0],
      )
    })
  })
})
