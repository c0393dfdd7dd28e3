import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { Random } from '../src/demo/demo-generator.js'
import { COLD_MIX_SHARES, type ColdCatalogue, ColdMixGenerator, type ColdRequest, fragment } from './cold-mix.js'

/*
 * The cold mix's generator, without a database: a catalogue's values as the setup reads them, and what the
 * generator makes of them (distinct, deterministic, in the mix's shares, well-formed).
 */

const models = Array.from({ length: 300 }, (_, i) => `RX${5000 + i * 7}`)
const catalogue: ColdCatalogue = {
  kinds: {
    glasses: {
      text: {
        manufacturer: ['EssilorLuxottica', 'Safilo', 'Marcolin', 'Kering'],
        brand: ['Ray-Ban', 'Carrera', 'Guess', 'Gucci', 'Vogue Eyewear'],
        model: models,
        color: ['чёрный', 'золотой', 'тёмно-синий'],
        size: ['52-18-140', '54-18-145'],
      },
      numeric: { names: [], tuples: [] },
      zones: [],
    },
    sunglasses: {
      text: { manufacturer: ['Safilo'], brand: ['Polaroid', 'Carrera'], model: ['PLD 2088', 'PLD 6170'], color: [] },
      numeric: { names: [], tuples: [] },
      zones: [],
    },
    lenses: {
      text: { manufacturer: ['Essilor', 'Hoya'], brand: ['Orma', 'Hilux', 'Nulux'], type: ['однофокальные'] },
      numeric: {
        names: ['refractionIndex', 'diameter'],
        tuples: [
          [1.5, 65],
          [1.6, 70],
          [1.67, 75],
        ],
      },
      zones: [
        { sphere: [-4, 4], cylinder: [-2, 0], add: [null, null] },
        { sphere: [-12, -4.25], cylinder: [-4, 0], add: [0.75, 3.5] },
      ],
    },
    'contact-lenses': {
      text: { manufacturer: ['CooperVision'], name: ['Biofinity', 'Biofinity Toric'] },
      numeric: { names: ['diameter', 'curvatureRadius'], tuples: [[14, 8.6]] },
      zones: [{ dioptre: [-9, -6.5], cylinder: [-2.25, -0.75], axis: [10, 180] }],
    },
    extras: {
      text: { frameManufacturer: ['Megapolis'], frameBrand: ['Megapolis'], frameModel: ['MP 257'] },
      numeric: { names: [], tuples: [] },
      zones: [{ dioptre: [0.5, 3] }],
    },
    'semifinished-lenses': {
      text: { manufacturer: ['Hoya'], brand: ['Hilux'] },
      numeric: { names: ['refractionIndex', 'diameter'], tuples: [[1.6, 70]] },
      zones: [],
    },
    accessories: {
      text: { category: ['Растворы для линз'], model: ['Opti-Free 300 мл'] },
      numeric: { names: [], tuples: [] },
      zones: [],
    },
  },
  priceList: {
    text: { manufacturer: ['Safilo', 'Marcolin'], brand: ['Carrera', 'Guess'], model: models },
    prices: [3150, 9090, 14490, 26990],
    purchases: [1370, 4230, 9650],
  },
}

const describeList = (list: readonly ColdRequest[]) =>
  list.map((r) => `${r.http.method} ${r.http.path} ${JSON.stringify(r.http.body)}`)

describe('the cold mix', () => {
  test('distinct requests, the same for the same seed, in the shares of the mix', () => {
    const generator = new ColdMixGenerator(catalogue, 7)
    const lists = [generator.take(300), generator.take(3000), generator.take(3000)]
    const all = lists.flat()
    assert.equal(new Set(all.map((r) => r.key)).size, all.length, 'no request twice, across lists too')
    assert.equal(new Set(describeList(all)).size, all.length, 'no HTTP request twice')

    const again = new ColdMixGenerator(catalogue, 7)
    assert.deepEqual(describeList([again.take(300), again.take(3000)].flat()), describeList(lists.slice(0, 2).flat()))
    assert.notDeepEqual(describeList(new ColdMixGenerator(catalogue, 8).take(300)), describeList(lists[0] ?? []))

    for (const list of lists.slice(1)) {
      for (const [category, share] of Object.entries(COLD_MIX_SHARES)) {
        const count = list.filter((r) => r.category === category).length
        assert.ok(Math.abs(count / list.length - share / 100) < 0.01, `${category}: ${count} of ${list.length}`)
      }
    }
  })

  test('requests as the service takes them: fragments, quarter-dioptre prescriptions, pages 0–3, every sort', () => {
    const list = new ColdMixGenerator(catalogue, 1).take(5000)
    const pages = new Set<string>()
    const sorts = new Set<string>()
    for (const request of list) {
      const url = new URL(request.http.path, 'http://localhost')
      if (url.searchParams.has('page')) pages.add(url.searchParams.get('page') as string)
      if (url.pathname === '/api/v2/glasses/prices/list') {
        sorts.add(`${url.searchParams.get('sortColumn')} ${url.searchParams.get('sortDirection')}`)
      } else {
        for (const sort of url.searchParams.getAll('sort')) sorts.add(sort)
      }
      const body = (request.http.body ?? {}) as Record<string, unknown>
      for (const name of ['sphere', 'cylinder', 'add', 'dioptre'] as const) {
        const value = body[name]
        if (value !== undefined) assert.ok(Number.isInteger((value as number) * 4), `${name} ${value}: quarter steps`)
      }
      if (body.axis !== undefined) assert.ok(Number.isInteger(body.axis) && (body.axis as number) <= 180)
      const texts = [
        ...Object.values(body).filter((v) => typeof v === 'string'),
        ...(url.pathname.endsWith('/suggest') ? [url.searchParams.get('q') as string] : []),
      ]
      for (const text of texts) assert.ok((text as string).trim().length >= 2, `a text of 2 letters or more: ${text}`)
      assert.equal(request.http.method === 'POST', request.http.body !== undefined)
    }
    assert.deepEqual([...pages].sort(), ['0', '1', '2', '3'])
    for (const column of ['ID', 'PARAMETERS', 'PRICE', 'PURCHASE']) {
      for (const direction of ['ASC', 'DESC']) assert.ok(sorts.has(`${column} ${direction}`), `${column} ${direction}`)
    }
    assert.ok(sorts.has('retailPrice,desc'))
    const paths = new Set(list.map((r) => new URL(r.http.path, 'http://localhost').pathname))
    for (const kind of [
      'glasses',
      'sunglasses',
      'lenses',
      'contact-lenses',
      'extras',
      'semifinished-lenses',
      'accessories',
    ]) {
      assert.ok(paths.has(`/api/v2/good/nomenclature/search/${kind}`), kind)
    }
    assert.ok(paths.has('/api/v2/good/nomenclature/search/lenses/facets'))
    assert.ok(paths.has('/api/v2/good/nomenclature/suggest'))
  })

  test('a category the catalogue cannot feed leaves its share to the others', () => {
    const framesOnly: ColdCatalogue = {
      kinds: { glasses: catalogue.kinds.glasses as ColdCatalogue['kinds'][string] },
      priceList: { text: { manufacturer: [], brand: [], model: [] }, prices: [], purchases: [] },
    }
    const list = new ColdMixGenerator(framesOnly, 3).take(500)
    assert.equal(list.length, 500)
    assert.ok(list.every((r) => r.category === 'frames' || r.category === 'suggestions'))
    const tiny: ColdCatalogue = {
      ...framesOnly,
      kinds: { glasses: { text: { brand: ['Ab'] }, numeric: { names: [], tuples: [] }, zones: [] } },
    }
    assert.throws(() => new ColdMixGenerator(tiny, 3).take(1000), /ran out of distinct requests/)
  })

  test('fragments are 2–5 letters of the value, as typed', () => {
    const random = new Random(5)
    for (let i = 0; i < 500; i++) {
      const piece = fragment(random, 'Vogue Eyewear')
      assert.ok(piece.length >= 2 && piece.length <= 5, piece)
      assert.ok('vogue eyewear'.includes(piece), piece)
    }
  })
})
