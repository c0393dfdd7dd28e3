import * as k from '../../catalog/kinds/kinds.js'
import { type DemoRecipe, type ProductPlan, shelfPrice } from '../demo-generator.js'
import { digits, lineOf, polarized, withSeries } from './common.js'

// Spectacle lenses: an entry prices a power zone of a product (line × index × coating × technology) for a
// diameter band. Stock lenses are SKUs with a concrete sphere and cylinder; made-to-order lenses have none.

export interface LensIndex {
  readonly index: number
  readonly material: string
  /** Retail price of a standard single-vision lens of this index, roubles. */
  readonly price: number
  /** The strongest minus sphere made. */
  readonly minSphere: number
}

export const lensIndices: Readonly<Record<string, LensIndex>> = {
  '1.5': { index: 1.5, material: 'полимер CR-39', price: 800, minSphere: -8 },
  '1.53': { index: 1.53, material: 'Trivex', price: 2600, minSphere: -8 },
  '1.56': { index: 1.56, material: 'полимер 1.56', price: 1300, minSphere: -8 },
  '1.59': { index: 1.59, material: 'поликарбонат', price: 2600, minSphere: -10 },
  '1.6': { index: 1.6, material: 'MR-8', price: 4200, minSphere: -10 },
  '1.67': { index: 1.67, material: 'MR-7', price: 7500, minSphere: -12 },
  '1.74': { index: 1.74, material: 'MR-174', price: 14000, minSphere: -14 },
}

interface LensMaker {
  readonly covers: readonly string[]
  /** The maker's photochromic technology. */
  readonly photochromic: string
}

const lensMakers: Readonly<Record<string, LensMaker>> = {
  Essilor: {
    covers: ['Crizal Easy Pro', 'Crizal Rock', 'Crizal Sapphire HR', 'Crizal Prevencia'],
    photochromic: 'Transitions Gen S',
  },
  Hoya: { covers: ['Hi-Vision LongLife', 'Hi-Vision Meiryo', 'BlueControl'], photochromic: 'Sensity' },
  'Carl Zeiss Vision': {
    covers: ['DuraVision Platinum UV', 'DuraVision BlueProtect'],
    photochromic: 'PhotoFusion X',
  },
  Rodenstock: { covers: ['Solitaire Protect', 'HMC'], photochromic: 'ColorMatic' },
  Nikon: { covers: ['SeeCoat Next', 'SeeCoat Blue'], photochromic: 'Transitions Gen S' },
  Shamir: { covers: ['Glacier Plus UV', 'HMC'], photochromic: 'Transitions Gen S' },
  Tokai: { covers: ['HMC', 'SHMC', 'HMC + blue-cut'], photochromic: 'фотохромные' },
  Mingyue: { covers: ['HC', 'HMC', 'SHMC', 'HMC + blue-cut'], photochromic: 'фотохромные' },
  Conant: { covers: ['HC', 'HMC', 'SHMC'], photochromic: 'фотохромные' },
}

type LensType = 'однофокальные' | 'прогрессивные' | 'офисные' | 'разгрузочные' | 'для контроля миопии'

interface LensLine {
  readonly manufacturer: string
  readonly brand: string
  readonly type: LensType
  readonly lensClass: 'эконом' | 'стандарт' | 'премиум' | 'индивидуальные'
  readonly geometry: string
  /** Stock lenses (SKUs with powers) or made to order. */
  readonly stock: boolean
  readonly indices: readonly string[]
}

const lensLines: readonly LensLine[] = [
  l('Essilor', 'Varilux Comfort Max', 'прогрессивные', 'премиум', 'free-form', false, ['1.5', '1.6', '1.67']),
  l('Hoya', 'Nulux', 'однофокальные', 'стандарт', 'асферическая', true, ['1.5', '1.6', '1.67']),
  l('Carl Zeiss Vision', 'ClearView', 'однофокальные', 'премиум', 'free-form', true, ['1.5', '1.6', '1.67', '1.74']),
  l('Mingyue', 'Mingyue', 'однофокальные', 'эконом', 'сферическая', true, ['1.5', '1.56', '1.6']),
  l('Rodenstock', 'Perfalit', 'однофокальные', 'стандарт', 'асферическая', true, ['1.5', '1.6', '1.67']),
  l('Nikon', 'SeeMax', 'однофокальные', 'премиум', 'двояковыпуклая асферическая', true, ['1.6', '1.67', '1.74']),
  l('Shamir', 'Autograph', 'прогрессивные', 'индивидуальные', 'free-form', false, ['1.5', '1.6', '1.67']),
  l('Essilor', 'Orma', 'однофокальные', 'стандарт', 'сферическая', true, ['1.5']),
  l('Hoya', 'Hoyalux iD MyStyle', 'прогрессивные', 'индивидуальные', 'free-form', false, ['1.5', '1.6', '1.67']),
  l('Tokai', 'Tokai', 'однофокальные', 'стандарт', 'асферическая', true, ['1.56', '1.6', '1.67', '1.74']),
  l('Carl Zeiss Vision', 'SmartLife Progressive', 'прогрессивные', 'премиум', 'free-form', false, ['1.5', '1.6']),
  l('Essilor', 'Eyezen', 'разгрузочные', 'премиум', 'асферическая', false, ['1.5', '1.6', '1.67']),
  l('Conant', 'Conant', 'однофокальные', 'эконом', 'сферическая', true, ['1.5', '1.56']),
  l('Rodenstock', 'Impression', 'прогрессивные', 'индивидуальные', 'free-form', false, ['1.5', '1.6', '1.67']),
  l('Essilor', 'Airwear', 'однофокальные', 'стандарт', 'асферическая', true, ['1.59']),
  l('Hoya', 'Hilux', 'однофокальные', 'эконом', 'сферическая', true, ['1.5', '1.6']),
  l('Nikon', 'Presio', 'прогрессивные', 'премиум', 'free-form', false, ['1.5', '1.6', '1.67']),
  l('Essilor', 'Stellest', 'для контроля миопии', 'премиум', 'асферическая', false, ['1.59']),
  l('Carl Zeiss Vision', 'Officelens', 'офисные', 'премиум', 'free-form', false, ['1.5', '1.6']),
  l('Hoya', 'MiyoSmart', 'для контроля миопии', 'премиум', 'асферическая', false, ['1.59']),
  l('Shamir', 'Relax', 'разгрузочные', 'стандарт', 'асферическая', false, ['1.5', '1.6']),
  l('Essilor', 'Ormix', 'однофокальные', 'стандарт', 'асферическая', true, ['1.6']),
  l('Hoya', 'Sync III', 'разгрузочные', 'премиум', 'асферическая', false, ['1.5', '1.6', '1.67']),
  l('Essilor', 'Varilux Liberty', 'прогрессивные', 'стандарт', 'асферическая', false, ['1.5', '1.6']),
  l('Shamir', 'Workstyle', 'офисные', 'стандарт', 'free-form', false, ['1.5', '1.6']),
  l('Essilor', 'Trivex Stock', 'однофокальные', 'стандарт', 'асферическая', true, ['1.53']),
]

function l(
  manufacturer: string,
  brand: string,
  type: LensType,
  lensClass: LensLine['lensClass'],
  geometry: string,
  stock: boolean,
  indices: string[],
): LensLine {
  return { manufacturer, brand, type, lensClass, geometry, stock, indices }
}

const classFactor = { эконом: 0.6, стандарт: 1, премиум: 1.8, индивидуальные: 3 }
/** What a design adds to the index's price, before the class factor. */
const typeSurcharge: Record<LensType, number> = {
  однофокальные: 0,
  разгрузочные: 2500,
  офисные: 6000,
  прогрессивные: 9000,
  'для контроля миопии': 12000,
}

/** Technology and colour of a lens product: clear, photochromic (grey or brown), polarised. */
function lensTechnologies(maker: LensMaker, type: LensType) {
  const options = [
    { technology: 'нет', color: 'бесцветные', surcharge: 0 },
    { technology: maker.photochromic, color: 'серые', surcharge: 4500 },
    { technology: maker.photochromic, color: 'коричневые', surcharge: 4500 },
  ]
  if (type === 'однофокальные') options.push({ technology: polarized, color: 'серые', surcharge: 3500 })
  return options
}

/**
 * Power zones of a product, non-overlapping: stock zones split the sphere at ±4 (and further for high indices),
 * each with the diameter band it is stocked in; made-to-order zones cover the index's whole range at one band
 * and split by cylinder too. Stronger zones cost 10–40% more.
 */
function lensZones(line: LensLine, index: LensIndex): { ranges: Record<string, [number, number]>; factor: number }[] {
  if (line.stock) {
    const zones: { ranges: Record<string, [number, number]>; factor: number }[] = [
      { ranges: { diameter: [65, 70], sphere: [-4, 0], cylinder: [-2, 0] }, factor: 1 },
      { ranges: { diameter: [60, 65], sphere: [0.25, 4], cylinder: [-2, 0] }, factor: 1.05 },
      { ranges: { diameter: [65, 70], sphere: [-6, -4.25], cylinder: [-2, 0] }, factor: 1.15 },
      { ranges: { diameter: [55, 60], sphere: [4.25, 6], cylinder: [-2, 0] }, factor: 1.25 },
    ]
    if (index.minSphere <= -10) {
      zones.push({ ranges: { diameter: [65, 70], sphere: [-8, -6.25], cylinder: [-2, 0] }, factor: 1.35 })
    }
    return zones
  }
  const diameter: [number, number] = line.type === 'для контроля миопии' ? [60, 70] : [65, 75]
  const add: Record<string, [number, number]> =
    line.type === 'прогрессивные' || line.type === 'офисные' ? { add: [0.75, 3.5] } : {}
  const maxSphere = index.minSphere <= -10 ? 8 : 6
  return [
    { ranges: { diameter, sphere: [-4, 4], cylinder: [-2, 0], ...add }, factor: 1 },
    { ranges: { diameter, sphere: [-4, 4], cylinder: [-4, -2.25], ...add }, factor: 1.15 },
    { ranges: { diameter, sphere: [index.minSphere, -4.25], cylinder: [-4, 0], ...add }, factor: 1.3 },
    { ranges: { diameter, sphere: [4.25, maxSphere], cylinder: [-4, 0], ...add }, factor: 1.4 },
  ]
}

export const lenses: DemoRecipe = {
  kind: k.lenses,
  barcodePrefix: '4604',
  denseFrom: 15000,
  product(productIndex, random): ProductPlan {
    const { line, serial } = lineOf(lensLines, productIndex)
    const maker = lensMakers[line.manufacturer] as LensMaker
    const technologies = lensTechnologies(maker, line.type)
    const {
      picks: [i, t, c],
      series,
    } = digits(serial, [line.indices.length, technologies.length, maker.covers.length])
    const index = lensIndices[line.indices[i as number] as string] as LensIndex
    const technology = technologies[t as number]!
    const cover = maker.covers[c as number] as string
    const base =
      (index.price + typeSurcharge[line.type]) * classFactor[line.lensClass] * (1 + 0.15 * (c as number)) +
      technology.surcharge
    const wobble = random.int(90, 115) / 100
    return {
      values: {
        manufacturer: line.manufacturer,
        brand: withSeries(line.brand, series),
        type: line.type,
        lensClass: line.lensClass,
        material: index.material,
        geometry: line.geometry,
        cover,
        technology: technology.technology,
        color: technology.color,
        refractionIndex: index.index,
      },
      entries: lensZones(line, index).map((zone) => ({
        ranges: zone.ranges,
        price: shelfPrice(base * wobble * zone.factor),
      })),
      concrete: line.stock,
      steps: { diameter: 5 },
      // A made-to-order lens is one SKU per diameter of its band.
      ...(line.stock ? { skus: random.int(20, 60) } : { skus: 3, maxSkus: 3 }),
    }
  },
}
