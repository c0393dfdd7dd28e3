import * as k from '../../catalog/kinds/kinds.js'
import { type DemoRecipe, modelCode, shelfPrice } from '../demo-generator.js'
import { adultGroups, between, frameColors, lineOf, rimTypes } from './common.js'
import type { FrameLine } from './frames.js'

// Ready-made glasses: a frame model with factory-fitted lenses, priced by dioptre band (any colour).

const readyFrameLines: readonly FrameLine[] = [
  { manufacturer: 'Fabia Monti', brand: 'Fabia Monti', pattern: 'FM ###', price: [700, 1400] },
  { manufacturer: 'Dacchi', brand: 'Dacchi', pattern: 'D####', price: [600, 1200] },
  { manufacturer: 'Megapolis', brand: 'Megapolis', pattern: 'MP ###', price: [500, 1000] },
  { manufacturer: 'Lectio Risus', brand: 'Lectio Risus', pattern: 'M###', price: [900, 2500] },
]
const readyLenses: readonly [string, string][] = [
  ['Mingyue', 'CR-39 HC'],
  ['Mingyue', 'CR-39 HMC'],
  ['Conant', '1.56 HMC blue-cut'],
  ['Tokai', 'CR-39 HMC'],
]
const minusBands: readonly [number, number][] = [
  [-3, -0.5],
  [-4.5, -3.5],
  [-6, -5],
]
const plusBands: readonly [number, number][] = [
  [0.5, 3],
  [3.5, 4.5],
  [5, 6],
]

export const extras: DemoRecipe = {
  kind: k.extras,
  barcodePrefix: '4606',
  product(index, random) {
    const { line, serial } = lineOf(readyFrameLines, index)
    const [lensManufacturer, lensBrand] = random.pick(readyLenses)
    const side = random.int(0, 2)
    const bands = side === 0 ? minusBands : side === 1 ? plusBands : [...minusBands, ...plusBands]
    const base = between(random, line.price) + (lensBrand.includes('blue-cut') ? 400 : 0)
    return {
      values: {
        frameManufacturer: line.manufacturer,
        frameBrand: line.brand,
        frameModel: modelCode(line.pattern, serial),
        lensManufacturer,
        lensBrand,
      },
      skuValues: {
        frameType: random.pick(rimTypes.slice(0, 2)),
        frameMaterial: random.pick(['металл', 'пластик', 'комбинированная']),
        frameTargetGroup: random.pick(adultGroups),
      },
      entries: bands.map((band, rank) => ({
        ranges: { dioptre: band },
        price: shelfPrice(base + (rank % 3) * random.int(150, 300)),
        // Readers come in quarter steps up to +3.00.
        ...(band[0] === 0.5 ? { steps: { dioptre: 0.25 } } : {}),
      })),
      options: { frameColor: random.sample(frameColors.slice(0, 12), random.int(1, 3)) },
      steps: { dioptre: 0.5 },
      skus: random.int(4, 14),
    }
  },
}
