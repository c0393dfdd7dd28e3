import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { test } from 'node:test'
import { pathToFileURL } from 'node:url'
import { type Migration, sql } from 'kysely'
import { derivedSample, entryPrices } from '../../test/fixtures/catalog.js'
import { eachDatabase } from '../../test/harness.js'
import { insertPriceEntries, insertSkus, refreshMatview } from '../catalog/freshness/catalog-repository.js'
import { defineKind, integer, type Kind, range, text } from '../catalog/kinds/kind.js'
import { kindMigrationSource } from '../catalog/kinds/kind-migration.js'
import { normaliseKeyText } from '../catalog/kinds/kind-schema.js'
import { kinds } from '../catalog/kinds/kinds.js'
import { buildSearchQuery, type FilterValues } from '../catalog/search/search-query.js'
import { migrateToLatest } from '../db/migrate.js'
import { migrations } from '../db/migrations/index.js'
import { MAX_TEXT_LENGTH } from '../domain/limits.js'
import { seedCatalogue } from './demo-catalogue.js'
import { type DemoRow, entryKey, type GeneratedProduct, generateCatalogue } from './demo-generator.js'
import { demoRecipes, recipeOf } from './demo-recipes.js'
import { genericRecipe } from './generic-recipe.js'

/*
 * A kind known only by its descriptor: no demo recipe, no fixture sample. An eighth kind, defined here (the eye
 * tests an optician's room sells, priced by the patient's age band), gets its tables from the migration
 * kind-migration.ts prints, its demo catalogue from the generic recipe, its fixture sample from that recipe, and is
 * searched through the SQL search path with exact totals, on both databases. (The service's routes are registered
 * from the list in kinds.ts, so this kind's HTTP routes are not among what is exercised here.) The generic recipe
 * is also run over the seven kinds' descriptors, whose shapes cover every kind of attribute and range.
 */

const eyeTests = defineKind({
  path: 'eye-tests',
  table: 'eye_tests',
  title: 'Eye tests',
  ruTitle: 'Проверка зрения',
  match: 'all-zones',
  ru: {
    specialist: 'Специалист',
    service: 'Услуга',
    method: 'Методика',
    room: 'Кабинет',
    duration: 'Длительность',
    age: 'Возраст',
  },
  labels: { duration: { ru: 'Длительность, мин', en: 'Duration, min' } },
  attributes: {
    specialist: text('key'),
    service: text('key'),
    method: text('wildcard'),
    room: text(),
    duration: integer('wildcard'),
  },
  ranges: { age: range('integer', 'integer', 'none') },
  filters: ['specialist', 'service', 'method', 'room', 'duration', 'age'],
  item: ['specialist', 'service', 'method', 'room', 'duration', 'ageFrom', 'ageTo'],
  order: ['specialist', 'service', 'ageFrom'],
  example: { specialist: 'Оптометрист', age: 30 },
})

const generate = (kind: Kind, scale: number, seed = 5): GeneratedProduct[] => [
  ...generateCatalogue(genericRecipe(kind), { seed, scale }),
]

/** Whether a number fits a column: an integer, or a `numeric(p,s)` (at most p−s whole digits and s decimals). */
function fitsColumn(value: number, type: Kind['attributes'][number]['type'], sqlType: string): boolean {
  if (!Number.isFinite(value)) return false
  if (type === 'integer') return Number.isInteger(value) && Math.abs(value) < 2 ** 31
  const [, precision, scale = '0'] = /^numeric\((\d+)(?:,(\d+))?\)$/.exec(sqlType) ?? []
  if (!precision) return true
  const scaled = value * 10 ** Number(scale)
  return Math.abs(scaled - Math.round(scaled)) < 1e-6 && Math.abs(value) < 10 ** (Number(precision) - Number(scale))
}

function assertFits(kind: Kind, row: DemoRow, where: string, isEntry: boolean): void {
  for (const attribute of kind.attributes) {
    if (isEntry && attribute.entry === 'none') continue
    const value = row[attribute.name]
    if (value === null || value === undefined) {
      assert.ok(isEntry && attribute.entry === 'wildcard', `${where}: ${attribute.name} is set`)
    } else if (attribute.type === 'text') {
      assert.equal(typeof value, 'string', `${where}: ${attribute.name} is text`)
      assert.ok(String(value).trim().length > 0 && String(value).length <= MAX_TEXT_LENGTH, `${where}: ${value}`)
    } else {
      assert.ok(fitsColumn(Number(value), attribute.type, attribute.sqlType), `${where}: ${attribute.name} ${value}`)
    }
  }
  for (const r of kind.ranges) {
    const names = isEntry ? [`${r.name}From`, `${r.name}To`] : r.sku === 'none' ? [] : [r.name]
    for (const name of names) {
      const value = row[name]
      if (value === null || value === undefined) {
        assert.ok(isEntry || r.sku === 'optional', `${where}: ${name} is set`)
      } else assert.ok(fitsColumn(Number(value), r.type, r.sqlType), `${where}: ${name} ${value}`)
    }
    if (isEntry && row[`${r.name}From`] !== null && row[`${r.name}To`] !== null) {
      assert.ok(Number(row[`${r.name}From`]) <= Number(row[`${r.name}To`]), `${where}: ${r.name} from ≤ to`)
    }
  }
}

for (const kind of [...kinds, eyeTests]) {
  test(`generic recipe ${kind.path}: deterministic rows that fit the tables, every SKU of a priced product priced`, () => {
    const products = generate(kind, 1000)
    assert.deepEqual(generate(kind, 1000), products)
    assert.equal(
      products.reduce((sum, product) => sum + product.skus.length, 0),
      1000,
    )
    const keys = new Set<string>()
    for (const [index, product] of products.entries()) {
      for (const entry of product.entries) {
        assertFits(kind, entry, `product ${index} entry`, true)
        const key = entryKey(kind, entry)
        assert.ok(!keys.has(key), `entry key ${key} is unique`)
        keys.add(key)
        const [price, purchase] = [Number(entry.price), Number(entry.purchase)]
        assert.ok(price >= 100 && price <= 100_000, `retail ${price} roubles`)
        assert.ok(purchase > 0 && purchase < price, `purchase ${purchase} below retail ${price}`)
      }
      for (const sku of product.skus) {
        assertFits(kind, sku, `product ${index} SKU`, false)
        if (product.entries.length > 0) {
          assert.ok(
            product.entries.some((entry) => entryPrices(kind, entry, sku)),
            `product ${index}: SKU ${sku.barcode} is priced by an entry of its product`,
          )
        }
      }
    }
  })

  test(`generic recipe ${kind.path}: the first product carries the kind's example`, () => {
    const [first] = generate(kind, 50)
    assert.ok(first && first.entries.length > 0 && first.skus.length > 0, 'the first product is priced and sold')
    for (const [name, value] of Object.entries(kind.example)) {
      const filter = kind.filters.find((candidate) => candidate.name === name)!
      if (filter.match === 'substring') {
        for (const sku of first.skus) {
          assert.ok(normaliseKeyText(String(sku[name])).includes(normaliseKeyText(String(value))), `${name}`)
        }
      } else if (filter.match === 'equals') {
        for (const sku of first.skus) assert.equal(Number(sku[name]), Number(value), name)
      } else {
        const covering = first.entries.filter(
          (entry) => Number(entry[`${name}From`]) <= Number(value) && Number(value) <= Number(entry[`${name}To`]),
        )
        assert.ok(covering.length > 0, `a zone of ${name} holds ${value}`)
        if (filter.range.sku === 'required') {
          assert.ok(
            first.skus.some((sku) => Number(sku[name]) === Number(value)),
            `a SKU's ${name} is ${value}`,
          )
        }
      }
    }
  })
}

test('a kind with its own recipe keeps it; a kind without one gets the generic recipe, once', () => {
  for (const kind of kinds) assert.equal(recipeOf(kind), demoRecipes.get(kind.path), kind.path)
  const recipe = recipeOf(eyeTests)
  assert.equal(recipe.kind, eyeTests)
  assert.match(recipe.barcodePrefix, /^48\d\d$/)
  assert.equal(recipeOf(eyeTests), recipe)
  assert.throws(
    () =>
      genericRecipe(
        defineKind({
          path: 'numbers',
          table: 'numbers',
          title: 'Numbers',
          ruTitle: 'Числа',
          match: 'most-specific',
          ru: { size: 'Размер' },
          attributes: { size: integer('key') },
          filters: ['size'],
          item: ['size'],
          order: ['size'],
          example: {},
        }),
      ),
    /needs a text key/,
  )
})

test('every kind without a written fixture sample would get one from its demo recipe', () => {
  for (const kind of [...kinds, eyeTests]) {
    const { entry, sku } = derivedSample(kind)
    assert.ok(entryPrices(kind, entry, sku), `${kind.path}: the entry prices the SKU`)
    const texts = kind.attributes.filter((a) => a.type === 'text').map((a) => normaliseKeyText(String(sku[a.name])))
    assert.ok(
      texts.every((value) => value !== ''),
      `${kind.path}: every text is set`,
    )
    assert.equal(new Set(texts).size, texts.length, `${kind.path}: every text is distinct`)
  }
})

/** The migration kind-migration.ts prints for `kind`, loaded as the module a file of src/db/migrations/ would be. */
async function printedMigration(kind: Kind): Promise<Migration> {
  const directory = mkdtempSync(join(tmpdir(), 'optics-kind-migration-'))
  try {
    const file = join(directory, `9999-${kind.path}.ts`)
    // The module imports kysely; from outside the project it is named by its resolved location.
    const source = kindMigrationSource(kind).replace("from 'kysely'", `from '${import.meta.resolve('kysely')}'`)
    writeFileSync(file, source)
    return (await import(pathToFileURL(file).href)) as Migration
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}

/** Every row of a search through the SQL path (one page holds them all) and its total. */
async function searchSql(
  db: Parameters<typeof buildSearchQuery>[0],
  kind: Kind,
  byPriceList: boolean,
  filters: FilterValues,
) {
  const queries = buildSearchQuery(db, kind, { byPriceList, filters, page: { page: 0, size: 10_000, sort: [] } })
  const rows = await queries.page.execute()
  const count = await queries.count.executeTakeFirstOrThrow()
  return { rows, total: Number(count.count) }
}

const SCALE = 400

eachDatabase('a kind from its descriptor alone', (ctx) => {
  const count = async (query: ReturnType<typeof sql<{ n: number }>>) => (await query.execute(ctx.db.primary)).rows[0]?.n

  test('its printed migration creates its tables; its derived fixture sample is found with every item field', async () => {
    const applied = await migrateToLatest(ctx.db.primary, {
      ...migrations,
      [`9999-${eyeTests.path}`]: await printedMigration(eyeTests),
    })
    assert.deepEqual(applied, [`9999-${eyeTests.path}`])

    const { entry, sku } = derivedSample(eyeTests)
    await insertPriceEntries(ctx.db.primary, eyeTests, [entry])
    await insertSkus(ctx.db.primary, eyeTests, [sku])
    await refreshMatview(ctx.db.primary, eyeTests)
    for (const byPriceList of [false, true]) {
      const { rows, total } = await searchSql(ctx.db.primary, eyeTests, byPriceList, {})
      assert.equal(total, 1)
      const [item] = rows
      for (const field of eyeTests.itemFields) {
        const source = field.source
        const expected =
          source.from === 'price'
            ? entry.price
            : source.from === 'bound'
              ? entry[field.name]
              : byPriceList
                ? field.entryColumn
                  ? entry[field.name]
                  : null
                : sku[field.name]
        const actual = item?.[field.name]
        assert.deepEqual(
          actual === null || field.type === 'text' ? actual : Number(actual),
          expected ?? null,
          `${field.name} (byPriceList=${byPriceList})`,
        )
      }
    }
  })

  test('the generic recipe seeds it: every row loads, the constraints hold, every SKU of a priced product is priced', async () => {
    const [result] = await seedCatalogue(ctx.db, { scale: SCALE, seed: 3, kinds: [eyeTests], replace: true })
    assert.equal(result?.skus, SCALE)
    const products = [...generateCatalogue(genericRecipe(eyeTests), { seed: 3, scale: SCALE })]
    assert.equal(
      result?.entries,
      products.reduce((sum, p) => sum + p.entries.length, 0),
    )

    assert.equal(
      await count(sql`SELECT count(*)::int AS n FROM eye_tests_price WHERE NOT (0 < purchase AND purchase < price)`),
      0,
      'every purchase price is below retail',
    )
    const priced = new Set(products.filter((p) => p.entries.length > 0).flatMap((p) => p.skus.map((s) => s.barcode)))
    const { rows } = await sql<{ barcode: string }>`
      SELECT DISTINCT s.barcode FROM eye_tests_mv m JOIN eye_tests_sku s ON s.id = m.sku_id`.execute(ctx.db.primary)
    assert.deepEqual(new Set(rows.map((row) => row.barcode)), priced, 'the matview holds every priced SKU')
    // All zones: a SKU is in the matview once per entry of its product (each zone prices it).
    const pairs = products.reduce((sum, p) => sum + p.skus.length * p.entries.length, 0)
    assert.equal(await count(sql`SELECT count(*)::int AS n FROM eye_tests_mv`), pairs)
  })

  test('a search by SQL for its example finds its rows, with exact totals, in both modes', async () => {
    const products = [...generateCatalogue(genericRecipe(eyeTests), { seed: 3, scale: SCALE })]
    const matches = (value: unknown) => normaliseKeyText(String(value)).includes('оптометрист')
    const expected = {
      matview: products.reduce(
        (sum, p) => sum + p.skus.filter((s) => matches(s.specialist)).length * p.entries.length,
        0,
      ),
      priceList: products.reduce((sum, p) => sum + p.entries.filter((e) => matches(e.specialist)).length, 0),
    }
    assert.ok(expected.matview > 0 && expected.priceList > 0, 'the example names goods of the catalogue')
    for (const byPriceList of [false, true]) {
      const { rows, total } = await searchSql(ctx.db.primary, eyeTests, byPriceList, { specialist: ' ОПТОМЕТРИСТ ' })
      assert.equal(total, byPriceList ? expected.priceList : expected.matview, `byPriceList=${byPriceList}`)
      assert.equal(rows.length, total)
      for (const row of rows) assert.ok(matches(row.specialist))

      // The whole example, as the OpenAPI document sends it, finds goods too.
      const whole = await searchSql(ctx.db.primary, eyeTests, byPriceList, eyeTests.example)
      assert.ok(whole.total > 0, `the example finds goods (byPriceList=${byPriceList})`)
      assert.equal(whole.rows.length, whole.total)
      for (const row of whole.rows) assert.ok(Number(row.ageFrom) <= 30 && 30 <= Number(row.ageTo))
    }
  })

  test("the generic recipe's rows of the seven kinds load into their tables, and the matview prices them", async () => {
    for (const kind of kinds) {
      const products = generate(kind, 60)
      await insertPriceEntries(
        ctx.db.primary,
        kind,
        products.flatMap((p) => p.entries),
      )
      await insertSkus(
        ctx.db.primary,
        kind,
        products.flatMap((p) => p.skus),
      )
      await refreshMatview(ctx.db.primary, kind)
      const priced = new Set(products.filter((p) => p.entries.length > 0).flatMap((p) => p.skus.map((s) => s.barcode)))
      const { rows } = await sql<{ barcode: string }>`
        SELECT DISTINCT s.barcode FROM ${sql.table(kind.matview)} m
        JOIN ${sql.table(kind.skuTable)} s ON s.id = m.sku_id`.execute(ctx.db.primary)
      assert.deepEqual(new Set(rows.map((row) => row.barcode)), priced, kind.path)
    }
  })
})
