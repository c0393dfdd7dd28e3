import * as k from '../../catalog/kinds/kinds.js'
import { type DemoRecipe, type EntryPlan, shelfPrice } from '../demo-generator.js'
import { digits, lineOf, withSeries } from './common.js'
import { type LensIndex, lensIndices } from './lenses.js'

// Semi-finished blanks: priced per product for any diameter, sometimes dearer at 80 mm. SKUs of one product and
// diameter differ by base curve, which the API does not show: twins but for the barcode.

interface BlankLine {
  readonly manufacturer: string
  readonly brand: string
  readonly lensesClass: string
  readonly indices: readonly string[]
}

const blankLines: readonly BlankLine[] = [
  { manufacturer: 'Essilor', brand: 'Orma', lensesClass: 'стандарт', indices: ['1.5'] },
  { manufacturer: 'Hoya', brand: 'Hilux', lensesClass: 'стандарт', indices: ['1.5', '1.6', '1.67', '1.74'] },
  { manufacturer: 'Mingyue', brand: 'Mingyue SF', lensesClass: 'эконом', indices: ['1.5', '1.56', '1.6'] },
  { manufacturer: 'Essilor', brand: 'Ormix', lensesClass: 'премиум', indices: ['1.6'] },
  { manufacturer: 'Conant', brand: 'Conant SF', lensesClass: 'эконом', indices: ['1.5', '1.56'] },
  { manufacturer: 'Essilor', brand: 'Stylis', lensesClass: 'премиум', indices: ['1.67'] },
  { manufacturer: 'Hoya', brand: 'Nulux', lensesClass: 'премиум', indices: ['1.6', '1.67'] },
  { manufacturer: 'Essilor', brand: 'Airwear', lensesClass: 'стандарт', indices: ['1.59'] },
]
const blankIndexPrice: Readonly<Record<string, number>> = {
  '1.5': 350,
  '1.53': 1500,
  '1.56': 500,
  '1.59': 1200,
  '1.6': 1100,
  '1.67': 2200,
  '1.74': 4000,
}
const blankTypes: readonly [string, number, string][] = [
  ['однофокальные', 1, 'сферическая'],
  ['прогрессивные', 2, 'асферическая'],
  ['бифокальные flat-top 28', 1.4, 'сферическая'],
  ['free-form заготовка', 1.5, 'сферическая'],
]
const blankTechnologies: readonly [string, string, number][] = [
  ['нет', 'бесцветные', 0],
  ['фотохромные', 'серые', 900],
  ['поляризационные', 'коричневые', 700],
]
const blankCovers: readonly [string, number][] = [
  ['HC', 1],
  ['без покрытия', 0.85],
]

export const semifinishedLenses: DemoRecipe = {
  kind: k.semifinishedLenses,
  barcodePrefix: '4607',
  product(productIndex, random) {
    const { line, serial } = lineOf(blankLines, productIndex)
    const {
      picks: [i, t, tech, c],
      series,
    } = digits(serial, [line.indices.length, blankTypes.length, blankTechnologies.length, blankCovers.length])
    const indexName = line.indices[i as number] as string
    const [type, typeFactorValue, geometry] = blankTypes[t as number]!
    const [technology, color, surcharge] = blankTechnologies[tech as number]!
    const [cover, coverFactor] = blankCovers[c as number]!
    const base =
      ((blankIndexPrice[indexName] as number) * typeFactorValue * coverFactor + surcharge) * (random.int(90, 115) / 100)
    const entries: EntryPlan[] = [{ values: { diameter: null }, price: shelfPrice(base) }]
    const diameters = random.sample([65, 70, 75, 80], random.int(2, 4))
    if (diameters.includes(80) && random.chance(0.4)) {
      entries.push({ values: { diameter: 80 }, price: shelfPrice(base * 1.2) })
    }
    return {
      values: {
        manufacturer: line.manufacturer,
        brand: withSeries(line.brand, series),
        type,
        lensesClass: line.lensesClass,
        material: (lensIndices[indexName] as LensIndex).material,
        geometry,
        cover,
        technology,
        color,
        refractionIndex: Number(indexName),
      },
      entries,
      options: { diameter: diameters },
      distinct: false,
      skus: random.int(4, 16),
      maxSkus: 16,
    }
  },
}
