import assert from 'node:assert/strict'
import { test } from 'node:test'
import { type EntrySeed, pricesPath, seedEntries } from '../../test/fixtures/glass-prices.js'
import { eachDatabase, useTestApp } from '../../test/harness.js'
import { FILTER_INPUTS, FILTER_NAMES } from '../../web/src/desk/prices-api.js'
import { en } from '../../web/src/i18n/en.js'
import { ru } from '../../web/src/i18n/ru.js'
import { insertSkus, refreshMatview } from '../catalog/freshness/catalog-repository.js'
import { glasses } from '../catalog/kinds/kinds.js'
import {
  GLASS_PRICE_FILTER_PARAMETERS,
  GLASS_PRICE_FILTERS,
  type GlassPriceFilterField,
} from '../domain/glass-price-fields.js'
import { parseGlassPriceFilter } from './glass-price-filter.js'
import { GlassPriceListQuerySchema } from './glass-price-schemas.js'

/*
 * Every filter the listing's description (domain/glass-price-fields.ts) names is known to each of its readers: the
 * query schema, the filter's reading, the SQL listing, the search index's listing, the bulk change's selection and
 * the desk's filter form with its labels in both languages. A filter one of them did not know would be silently
 * ignored there; here each one selects a part of the list, the same part everywhere.
 */

/** The SKUs the entries price, by model: what a filter on the SKUs' attribute (the colour) reads. */
const skus: Readonly<Record<string, readonly { readonly color: string }[]>> = {
  'A-100': [{ color: 'Чёрный' }, { color: 'Золото' }],
  'B-200': [{ color: 'Серебро' }],
  'A-300': [{ color: 'черный матовый' }],
  'C-400': [{ color: 'Красный' }],
}

const entries: EntrySeed[] = [
  { manufacturer: 'Альфа Оптика', brand: 'Aster', model: 'A-100', price: 1000, purchase: 400 },
  { manufacturer: 'Альфа Оптика', brand: 'Borealis', model: 'B-200', price: 2000, purchase: 900 },
  { manufacturer: 'Gamma Frames', brand: 'Aster Kids', model: 'A-300', price: 3000, purchase: 1500 },
  { manufacturer: 'Gamma Frames', brand: 'Corona', model: 'C-400', price: 4000, purchase: 2100 },
  { manufacturer: 'Delta Vision', brand: 'Dune', model: 'D-500', price: 5000, purchase: 2600 },
]

type Query = Readonly<Record<string, string>>

/** For each described filter, a query that selects a part of `entries` (neither none nor all) and that part. */
function probes(): { readonly name: string; readonly query: Query; readonly expected: readonly string[] }[] {
  return (GLASS_PRICE_FILTERS as readonly (typeof GLASS_PRICE_FILTERS)[number][]).map((field) => {
    switch (field.match) {
      case 'text': {
        const { source } = field
        // An entry's values: its column's, or its SKUs' (ё read as е, as every comparison does).
        const values = (entry: EntrySeed): string[] =>
          source.from === 'entry'
            ? [String((entry as unknown as Record<string, string>)[source.column])]
            : (skus[entry.model] ?? []).map((sku) => (sku as Record<string, string>)[source.filter] as string)
        const fold = (text: string) => text.toLowerCase().replaceAll('ё', 'е')
        const probe = fold((values(entries[0] as EntrySeed)[0] as string).slice(0, 3))
        const selected = entries.filter((entry) => values(entry).some((text) => fold(text).includes(probe)))
        return { name: field.name, query: { [field.name]: probe }, expected: selected.map((entry) => entry.model) }
      }
      default: {
        const value = (entry: EntrySeed) => (entry as unknown as Record<string, number>)[field.source.column]
        const values = entries.map((entry) => Number(value(entry))).sort((a, b) => a - b)
        const [from, to] = [values[1] as number, values[3] as number]
        const selected = entries.filter((entry) => Number(value(entry)) >= from && Number(value(entry)) <= to)
        return {
          name: field.name,
          query: { [field.from.parameter]: String(from), [field.to.parameter]: String(to) },
          expected: selected.map((entry) => entry.model),
        }
      }
    }
  })
}

test('every described filter parameter is in the query schema and read from a query', () => {
  const properties = Object.keys(GlassPriceListQuerySchema.properties)
  for (const parameter of GLASS_PRICE_FILTER_PARAMETERS) {
    assert.ok(properties.includes(parameter), `${parameter} is in the listing's query schema`)
  }
  for (const { name, query } of probes()) {
    const filter = parseGlassPriceFilter(query) as Record<string, unknown>
    for (const parameter of Object.keys(query)) assert.ok(filter[parameter] !== undefined, `${name}: ${parameter} read`)
  }
})

test('a filter read from the SKUs names a filter of the frames kind', () => {
  for (const field of GLASS_PRICE_FILTERS as readonly GlassPriceFilterField[]) {
    if (field.source.from !== 'sku') continue
    const { filter } = field.source
    assert.ok(
      glasses.filters.some((candidate) => candidate.name === filter),
      `${field.name}: frames have a filter ${filter}`,
    )
  }
})

test('the desk draws an input for every described filter parameter, labelled in both languages', () => {
  assert.deepEqual(
    FILTER_INPUTS.map((input) => input.name),
    [...GLASS_PRICE_FILTER_PARAMETERS],
  )
  assert.deepEqual(FILTER_NAMES, GLASS_PRICE_FILTER_PARAMETERS)
  for (const input of FILTER_INPUTS) {
    for (const key of [input.label, input.formLabel]) {
      assert.ok(en[key] && ru[key], `${input.name}: ${key} is translated`)
    }
  }
})

eachDatabase('glass price list: every described filter selects the same entries everywhere', (ctx) => {
  const sqlApp = useTestApp(ctx, {
    env: { SEARCH_INDEX: 'off', RESULT_CACHE: 'off' },
    setup: async () => {
      await seedEntries(ctx.db, entries)
      await insertSkus(
        ctx.db.primary,
        glasses,
        entries.flatMap(({ manufacturer, brand, model }, index) =>
          (skus[model] ?? []).map((sku, number) => ({
            barcode: `46000000${index}${number}`,
            manufacturer,
            brand,
            model,
            ...sku,
          })),
        ),
      )
      await refreshMatview(ctx.db.primary, glasses)
    },
  })
  const indexApp = useTestApp(ctx, { env: { SEARCH_INDEX: 'on', RESULT_CACHE: 'off' } })

  const listing = async (app: ReturnType<typeof sqlApp>, query: Query) => {
    const response = await app.inject({
      method: 'GET',
      url: `${pricesPath}/list?size=50&sortColumn=ID&${new URLSearchParams(query)}`,
    })
    assert.equal(response.statusCode, 200, response.body)
    return (response.json().content as { model: string }[]).map((entry) => entry.model)
  }

  test('SQL, the search index and the bulk change each apply every described filter', async () => {
    await indexApp().searchIndex.catchUp()
    for (const { name, query, expected } of probes()) {
      assert.ok(expected.length > 0 && expected.length < entries.length, `${name}: the probe selects a part`)
      assert.deepEqual(await listing(sqlApp(), query), expected, `${name}: SQL`)
      const served = indexApp().searchIndex.served.index
      assert.deepEqual(await listing(indexApp(), query), expected, `${name}: the index`)
      assert.equal(indexApp().searchIndex.served.index, served + 1, `${name}: answered by the index`)
      const preview = await sqlApp().inject({
        method: 'POST',
        url: `${pricesPath}/list?dryRun=true&${new URLSearchParams(query)}`,
        payload: { priceTypeBase: 'RETAIL', priceTypeChange: 'RETAIL', coefficient: 1.1, round: 'WHOLE' },
      })
      assert.equal(preview.statusCode, 200, preview.body)
      assert.equal(preview.json().selectedCount, expected.length, `${name}: the bulk change's selection`)
    }
  })

  test('a colour picked from the list selects the entries with a SKU of that colour only', async () => {
    await indexApp().searchIndex.catchUp()
    const query = { color: 'черный', exact: 'color' }
    assert.deepEqual(await listing(sqlApp(), query), ['A-100'])
    assert.deepEqual(await listing(indexApp(), query), ['A-100'])
    // Typed, it is a substring: the matt black frame's entry too.
    assert.deepEqual(await listing(indexApp(), { color: 'черный' }), ['A-100', 'A-300'])
  })
})
