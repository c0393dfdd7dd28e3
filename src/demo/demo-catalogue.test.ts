import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import { entryFieldColumns } from '../catalog/freshness/catalog-repository.js'
import type { Kind } from '../catalog/kinds/kind.js'
import { kinds } from '../catalog/kinds/kinds.js'
import { CatalogueNotEmptyError, ensureDemoCatalogue, isKindEmpty, seedCatalogue } from './demo-catalogue.js'
import { ean13CheckDigit, entryKey, type GeneratedProduct, generateCatalogue, modelCode } from './demo-generator.js'
import { recipeOf } from './demo-recipes.js'

/*
 * The demo catalogue: the generator's determinism and rules (no database), then the loader on both databases —
 * every generated row lands, unpriced SKUs are absent from the matview, entries without SKUs are in the price list.
 */

const generate = (kind: Kind, scale: number, seed = 7): GeneratedProduct[] => [
  ...generateCatalogue(recipeOf(kind), { seed, scale }),
]

const silentLog = { info() {}, debug() {}, warn() {}, error() {} } as never

for (const kind of kinds) {
  test(`demo generator ${kind.path}: the same seed and scale give the same rows, another seed other rows`, () => {
    const first = generate(kind, 400)
    assert.deepEqual(generate(kind, 400), first)
    assert.notDeepEqual(generate(kind, 400, 8), first)
    const skus = first.reduce((sum, product) => sum + product.skus.length, 0)
    assert.equal(skus, 400, 'the scale is the number of SKUs')
  })

  test(`demo generator ${kind.path}: barcodes are unique valid EAN-13, entry keys unique, every field known`, () => {
    const products = generate(kind, 2000)
    const barcodes = new Set<string>()
    const keys = new Set<string>()
    const entryNames = new Set(entryFieldColumns(kind).map(([name]) => name))
    for (const product of products) {
      for (const sku of product.skus) {
        const barcode = String(sku.barcode)
        assert.match(barcode, /^\d{13}$/)
        assert.equal(Number(barcode[12]), ean13CheckDigit(barcode.slice(0, 12)), barcode)
        assert.ok(!barcodes.has(barcode), `barcode ${barcode} is unique`)
        barcodes.add(barcode)
      }
      for (const entry of product.entries) {
        assert.deepEqual(new Set(Object.keys(entry)), entryNames)
        const key = entryKey(kind, entry)
        assert.ok(!keys.has(key), `entry key ${key} is unique`)
        keys.add(key)
        assert.ok(Number(entry.purchase) > 0 && Number(entry.purchase) < Number(entry.price), 'purchase below retail')
        const markup = Number(entry.price) / Number(entry.purchase)
        assert.ok(markup > 1.6 && markup < 3.4, `mark-up ${markup} near 1.8–3.0`)
        for (const range of kind.ranges) {
          const from = entry[`${range.name}From`]
          const to = entry[`${range.name}To`]
          if (from !== null && to !== null) assert.ok(Number(from) <= Number(to), `${range.name} from ≤ to`)
        }
      }
    }
  })

  test(`demo generator ${kind.path}: about 5% of SKUs have no price and about 5% of entries no SKU`, () => {
    const products = generate(kind, 3000)
    const skus = products.reduce((sum, product) => sum + product.skus.length, 0)
    const unpriced = products.filter((p) => p.entries.length === 0).reduce((sum, p) => sum + p.skus.length, 0)
    const entries = products.reduce((sum, product) => sum + product.entries.length, 0)
    const unsold = products.filter((p) => p.skus.length === 0).reduce((sum, p) => sum + p.entries.length, 0)
    assert.ok(unpriced / skus > 0.03 && unpriced / skus < 0.08, `unpriced share ${unpriced / skus}`)
    assert.ok(unsold / entries > 0.02 && unsold / entries < 0.09, `unsold share ${unsold / entries}`)
    assert.ok(entries < skus, 'entries are fewer than SKUs')
  })
}

test('model codes are distinct for distinct serials and keep the pattern', () => {
  const codes = new Set(Array.from({ length: 2500 }, (_, serial) => modelCode('SPL###', serial)))
  assert.equal(codes.size, 2500)
  assert.match(modelCode('RB####', 0), /^RB[1-9]\d{3}$/)
  assert.match(modelCode('SPL###', 950), /^SPL\d{3}-2$/)
})

test('made-to-order lenses have no powers, stock lenses have sphere and cylinder inside their zone', () => {
  const kind = kinds.find((candidate) => candidate.path === 'lenses')!
  const products = generate(kind, 2000).filter((p) => p.skus.length > 0 && p.entries.length > 0)
  const stock = products.filter((p) => p.skus[0]?.sphere !== null)
  const madeToOrder = products.filter((p) => p.skus[0]?.sphere === null)
  assert.ok(stock.length > 0 && madeToOrder.length > 0)
  for (const product of madeToOrder) {
    for (const sku of product.skus) assert.equal(sku.cylinder, null)
  }
  for (const product of stock) {
    for (const sku of product.skus) {
      const zones = product.entries.filter(
        (e) =>
          Number(sku.sphere) >= Number(e.sphereFrom) &&
          Number(sku.sphere) <= Number(e.sphereTo) &&
          Number(sku.cylinder) >= Number(e.cylinderFrom) &&
          Number(sku.cylinder) <= Number(e.cylinderTo) &&
          Number(sku.diameter) >= Number(e.diameterFrom) &&
          Number(sku.diameter) <= Number(e.diameterTo),
      )
      assert.equal(zones.length, 1, 'a stock lens lies in exactly one zone of its product')
    }
  }
})

const SCALE = 1000

eachDatabase('demo catalogue loader', (ctx) => {
  const app = useTestApp(ctx, {
    setup: async () => {
      await seedCatalogue(ctx.db, { scale: SCALE, seed: 7 })
    },
  })

  for (const kind of kinds) {
    test(`seed ${kind.path}: every generated row is loaded; unpriced SKUs are absent from the matview`, async () => {
      const products = generate(kind, SCALE)
      const priced = new Set(products.filter((p) => p.entries.length > 0).flatMap((p) => p.skus.map((s) => s.barcode)))
      const unpriced = new Set(
        products.filter((p) => p.entries.length === 0).flatMap((p) => p.skus.map((s) => s.barcode)),
      )
      assert.ok(unpriced.size > 0, 'the catalogue has unpriced SKUs')
      const { rows: skuRows } = await sql<{
        n: number
      }>`SELECT count(*)::int AS n FROM ${sql.table(kind.skuTable)}`.execute(ctx.db.primary)
      assert.equal(skuRows[0]?.n, SCALE)
      const { rows } = await sql<{ barcode: string }>`
        SELECT DISTINCT s.barcode FROM ${sql.table(kind.matview)} m JOIN ${sql.table(kind.skuTable)} s ON s.id = m.sku_id`.execute(
        ctx.db.primary,
      )
      const inMatview = new Set(rows.map((row) => row.barcode))
      assert.deepEqual(inMatview, priced, 'exactly the priced SKUs are in the matview')
    })

    test(`seed ${kind.path}: entries without SKUs are found in price-list mode, not in the matview`, async () => {
      const products = generate(kind, SCALE)
      const entries = products.reduce((sum, p) => sum + p.entries.length, 0)
      const unsold = products.filter((p) => p.skus.length === 0).flatMap((p) => p.entries)
      assert.ok(unsold.length > 0, 'the catalogue has entries without SKUs')
      const url = `/api/v2/good/nomenclature/search/${kind.path}`
      const byPriceList = (await app().inject({ method: 'POST', url, payload: { byPriceList: true } })).json()
      assert.equal(byPriceList.totalElements, entries)
      const { rows } = await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM ${sql.table(kind.priceTable)} e
        WHERE NOT EXISTS (SELECT 1 FROM ${sql.table(kind.matview)} m WHERE m.price_id = e.id)`.execute(ctx.db.primary)
      assert.ok((rows[0]?.n ?? 0) >= unsold.length, 'the unsold entries price nothing')
    })
  }

  test('seed without replace refuses a kind that holds data; with replace it loads the same rows again', async () => {
    const kind = kinds[0]!
    await assert.rejects(seedCatalogue(ctx.db, { scale: 10, kinds: [kind] }), CatalogueNotEmptyError)
    const before = await sql<{ barcode: string }>`SELECT barcode FROM ${sql.table(kind.skuTable)} ORDER BY id`.execute(
      ctx.db.primary,
    )
    await seedCatalogue(ctx.db, { scale: SCALE, seed: 7, kinds: [kind], replace: true })
    const again = await sql<{
      barcode: string
      id: number
    }>`SELECT barcode, id FROM ${sql.table(kind.skuTable)} ORDER BY id`.execute(ctx.db.primary)
    assert.deepEqual(
      again.rows.map((row) => row.barcode),
      before.rows.map((row) => row.barcode),
    )
    assert.equal(again.rows[0]?.id, 1, 'ids restart')
  })
})

eachDatabase('demo catalogue at bulk scale', (ctx) => {
  test('a bulk seed drops the secondary indexes for the load and builds the same ones again', async () => {
    const kind = kinds.find((candidate) => candidate.path === 'accessories')!
    const indexes = async () =>
      (
        await sql<{ definition: string }>`
          SELECT indexdef AS definition FROM pg_indexes
          WHERE schemaname = current_schema() AND tablename IN (${kind.priceTable}, ${kind.skuTable})
          ORDER BY indexname`.execute(ctx.db.primary)
      ).rows.map((row) => row.definition)
    const before = await indexes()
    assert.ok(before.some((definition) => definition.includes(`${kind.priceTable}_natural_order`)))
    const [result] = await seedCatalogue(ctx.db, { scale: 50_000, kinds: [kind] })
    assert.equal(result?.skus, 50_000)
    assert.deepEqual(await indexes(), before)
  })
})

eachDatabase('demo catalogue on start', (ctx) => {
  test('DEMO_DATA=false loads nothing; auto loads only an empty embedded database; true fills empty kinds', async () => {
    await ensureDemoCatalogue(ctx.db, { mode: 'false', scale: 30, log: silentLog })
    assert.ok(await isKindEmpty(ctx.db, kinds[0]!))

    await ensureDemoCatalogue(ctx.db, { mode: 'auto', scale: 30, log: silentLog })
    const loadedByAuto = !(await isKindEmpty(ctx.db, kinds[0]!))
    assert.equal(loadedByAuto, ctx.target === 'pglite', 'auto loads the embedded database only')

    await ensureDemoCatalogue(ctx.db, { mode: 'true', scale: 30, log: silentLog })
    for (const kind of kinds) assert.ok(!(await isKindEmpty(ctx.db, kind)), `${kind.path} is loaded`)

    // A database with data is never touched again.
    const count = async () =>
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM glasses_price`.execute(ctx.db.primary)).rows[0]?.n
    const before = await count()
    await ensureDemoCatalogue(ctx.db, { mode: 'true', scale: 60, log: silentLog })
    await ensureDemoCatalogue(ctx.db, { mode: 'auto', scale: 60, log: silentLog })
    assert.equal(await count(), before)
  })
})
