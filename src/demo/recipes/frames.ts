import * as k from '../../catalog/kinds/kinds.js'
import { type DemoRecipe, type EntryPlan, modelCode, shelfPrice } from '../demo-generator.js'
import {
  adultGroups,
  adultSizes,
  between,
  frameColors,
  frameMaterials,
  kidsSizes,
  lineOf,
  polarized,
  rimTypes,
  shapes,
  sunLensTypes,
  sunShapes,
} from './common.js'

// Frames and sunglasses: priced per model; a SKU is a colour (and size) of the model.

export interface FrameLine {
  readonly manufacturer: string
  readonly brand: string
  /** Model code pattern; `#` are digits. */
  readonly pattern: string
  readonly price: readonly [number, number]
  readonly kids?: boolean
  /** Famous models first, before synthesised codes. */
  readonly known?: readonly string[]
}

const frameLines: readonly FrameLine[] = [
  { manufacturer: 'EssilorLuxottica', brand: 'Ray-Ban', pattern: 'RX####', price: [9000, 22000] },
  { manufacturer: 'Safilo', brand: 'Carrera', pattern: 'CARRERA ####', price: [9000, 18000] },
  { manufacturer: 'Marcolin', brand: 'Guess', pattern: 'GU####', price: [7000, 14000] },
  { manufacturer: 'Kering Eyewear', brand: 'Gucci', pattern: 'GG####O', price: [30000, 65000] },
  { manufacturer: 'Fabia Monti', brand: 'Fabia Monti', pattern: 'FM ###', price: [1500, 3500] },
  { manufacturer: 'EssilorLuxottica', brand: 'Oakley', pattern: 'OX####', price: [10000, 24000] },
  { manufacturer: 'Safilo', brand: 'Boss', pattern: 'BOSS ####', price: [14000, 26000] },
  { manufacturer: 'De Rigo', brand: 'Police', pattern: 'VPL###', price: [8000, 15000] },
  { manufacturer: 'Marchon', brand: 'Calvin Klein', pattern: 'CK#####', price: [9000, 16000] },
  { manufacturer: 'Silhouette Group', brand: 'Silhouette', pattern: '####', price: [22000, 45000] },
  { manufacturer: 'Dacchi', brand: 'Dacchi', pattern: 'D####', price: [1500, 3000] },
  { manufacturer: 'EssilorLuxottica', brand: 'Vogue Eyewear', pattern: 'VO####', price: [7000, 14000] },
  { manufacturer: 'Safilo', brand: 'Tommy Hilfiger', pattern: 'TH ####', price: [9000, 17000] },
  { manufacturer: 'Marcolin', brand: 'Tom Ford', pattern: 'FT####-B', price: [28000, 55000] },
  { manufacturer: 'Kering Eyewear', brand: 'Saint Laurent', pattern: 'SL ###', price: [30000, 60000] },
  { manufacturer: 'Marchon', brand: 'Lacoste', pattern: 'L####', price: [10000, 17000] },
  { manufacturer: 'EssilorLuxottica', brand: 'Persol', pattern: 'PO####V', price: [16000, 32000] },
  { manufacturer: 'Megapolis', brand: 'Megapolis', pattern: 'MP ###', price: [1200, 2500] },
  { manufacturer: 'Safilo', brand: 'Pierre Cardin', pattern: 'P.C. ####', price: [6000, 11000] },
  { manufacturer: 'Marcolin', brand: 'Max Mara', pattern: 'MM####', price: [18000, 32000] },
  { manufacturer: 'Kering Eyewear', brand: 'Lindberg', pattern: 'Spirit Titanium ####', price: [60000, 150000] },
  { manufacturer: 'EssilorLuxottica', brand: 'Prada', pattern: 'PR ##ZV', price: [25000, 50000] },
  { manufacturer: 'Marchon', brand: 'Nike', pattern: 'NIKE ####', price: [8000, 14000] },
  { manufacturer: 'Cafa France', brand: 'Cafa France', pattern: 'CF####', price: [2500, 5000] },
  { manufacturer: 'Kering Eyewear', brand: 'Cartier', pattern: 'CT####O', price: [70000, 180000] },
  { manufacturer: 'EssilorLuxottica', brand: 'Ray-Ban Junior', pattern: 'RY####', price: [6000, 10000], kids: true },
  { manufacturer: 'Marchon', brand: 'Flexon', pattern: 'FLEXON ###', price: [14000, 22000] },
  { manufacturer: 'EssilorLuxottica', brand: 'Emporio Armani', pattern: 'EA####', price: [12000, 22000] },
  { manufacturer: 'Nano Vista', brand: 'Nano Vista', pattern: 'NAO3####', price: [5000, 9000], kids: true },
  { manufacturer: 'EssilorLuxottica', brand: 'Michael Kors', pattern: 'MK####', price: [12000, 22000] },
]

const sunLines: readonly FrameLine[] = [
  {
    manufacturer: 'EssilorLuxottica',
    brand: 'Ray-Ban',
    pattern: 'RB####',
    price: [10000, 25000],
    known: ['RB3025 Aviator', 'RB2140 Wayfarer', 'RB3447 Round Metal', 'RB3016 Clubmaster'],
  },
  { manufacturer: 'Safilo', brand: 'Polaroid', pattern: 'PLD ####/S', price: [4000, 9000] },
  { manufacturer: 'Kering Eyewear', brand: 'Gucci', pattern: 'GG####S', price: [30000, 70000] },
  {
    manufacturer: 'EssilorLuxottica',
    brand: 'Oakley',
    pattern: 'OO####',
    price: [11000, 26000],
    known: ['OO9102 Holbrook', 'OO9208 Radar EV'],
  },
  { manufacturer: 'Safilo', brand: 'Carrera', pattern: 'CARRERA ####/S', price: [8000, 18000] },
  { manufacturer: 'Matrix', brand: 'Matrix', pattern: 'MT####', price: [1000, 3500] },
  { manufacturer: 'De Rigo', brand: 'Police', pattern: 'SPL###', price: [8000, 15000] },
  { manufacturer: 'Marcolin', brand: 'Tom Ford', pattern: 'FT####', price: [30000, 60000] },
  { manufacturer: 'EssilorLuxottica', brand: 'Persol', pattern: 'PO####S', price: [18000, 35000], known: ['PO0714'] },
  { manufacturer: 'Kering Eyewear', brand: 'Maui Jim', pattern: 'MJ###', price: [20000, 40000] },
  { manufacturer: 'Safilo', brand: 'Boss', pattern: 'BOSS ####/S', price: [15000, 27000] },
  { manufacturer: 'EssilorLuxottica', brand: 'Vogue Eyewear', pattern: 'VO####S', price: [8000, 15000] },
  { manufacturer: 'Bollé Brands', brand: 'Bollé', pattern: 'BS###', price: [7000, 14000] },
  { manufacturer: 'Kering Eyewear', brand: 'Saint Laurent', pattern: 'SL ###', price: [30000, 60000] },
  { manufacturer: 'EssilorLuxottica', brand: 'Prada', pattern: 'PR ##ZS', price: [28000, 55000] },
  { manufacturer: 'Marcolin', brand: 'Guess', pattern: 'GU####', price: [7000, 13000] },
  { manufacturer: 'EssilorLuxottica', brand: 'Arnette', pattern: 'AN####', price: [6000, 11000] },
  { manufacturer: 'Kering Eyewear', brand: 'Puma', pattern: 'PU####S', price: [6000, 11000] },
]

function frameModel(line: FrameLine, serial: number): string {
  const known = line.known ?? []
  return serial < known.length ? (known[serial] as string) : modelCode(line.pattern, serial - known.length)
}

export const glasses: DemoRecipe = {
  kind: k.glasses,
  barcodePrefix: '4603',
  product(index, random) {
    const { line, serial } = lineOf(frameLines, index)
    const sizes = line.kids ? kidsSizes : adultSizes
    return {
      values: { manufacturer: line.manufacturer, brand: line.brand, model: frameModel(line, serial) },
      skuValues: {
        targetGroup: line.kids ? random.pick(['детская', 'подростковая']) : random.pick(adultGroups),
        material: random.pick(frameMaterials),
        type: random.pick(rimTypes),
        design: random.pick(shapes),
      },
      entries: [{ price: shelfPrice(between(random, line.price)) }],
      options: {
        color: random.sample(frameColors, random.int(1, 4)),
        size: random.sample(sizes, random.int(1, 2)),
      },
      skus: random.int(1, 6),
    }
  },
}

export const sunglasses: DemoRecipe = {
  kind: k.sunglasses,
  barcodePrefix: '4602',
  product(index, random) {
    const { line, serial } = lineOf(sunLines, index)
    const price = shelfPrice(between(random, line.price))
    const entries: EntryPlan[] = [{ price }]
    const lensTypes = random.sample(sunLensTypes, random.int(1, 2))
    // A polarised version of a model is often dearer: a variant entry, most specific wins.
    const polarisation = random.int(0, 9)
    if (polarisation < 3) {
      entries.push({ values: { lensesType: polarized }, price: shelfPrice((price * random.int(115, 140)) / 100) })
    } else if (polarisation < 5) {
      lensTypes.push(polarized)
    }
    return {
      values: { manufacturer: line.manufacturer, brand: line.brand, model: frameModel(line, serial) },
      skuValues: {
        targetGroup: random.pick(adultGroups),
        material: random.pick(frameMaterials),
        frameType: random.pick(rimTypes.slice(0, 2)),
        design: random.pick(sunShapes),
      },
      entries,
      options: { color: random.sample(frameColors, random.int(1, 4)), lensesType: lensTypes },
      skus: random.int(2, 8),
    }
  },
}
