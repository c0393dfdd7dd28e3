import * as k from '../../catalog/kinds/kinds.js'
import { type DemoRecipe, type DemoValue, type EntryPlan, shelfPrice } from '../demo-generator.js'
import { digits, lineOf, withSeries } from './common.js'

// Contact lenses: an entry prices a power zone of a product for a pack, colour and add (any base curve).

interface ContactLine {
  readonly manufacturer: string
  readonly name: string
  readonly period: 'однодневные' | 'двухнедельные' | 'месячные' | 'квартальные'
  readonly curvatures: readonly number[]
  readonly diameter: number
  readonly packs: readonly number[]
  /** Retail price of the smallest pack. */
  readonly price: number
  readonly design?: 'toric' | 'multifocal' | 'colour'
  readonly adds?: readonly string[]
}

const jj = 'Johnson & Johnson'
const contactLines: readonly ContactLine[] = [
  {
    manufacturer: jj,
    name: 'Acuvue Oasys',
    period: 'двухнедельные',
    curvatures: [8.4, 8.8],
    diameter: 14,
    packs: [6, 12, 24],
    price: 2200,
  },
  {
    manufacturer: 'Alcon',
    name: 'Air Optix plus HydraGlyde',
    period: 'месячные',
    curvatures: [8.6],
    diameter: 14.2,
    packs: [3, 6],
    price: 1600,
  },
  {
    manufacturer: 'CooperVision',
    name: 'Biofinity',
    period: 'месячные',
    curvatures: [8.6],
    diameter: 14,
    packs: [3, 6],
    price: 1900,
  },
  {
    manufacturer: 'Bausch + Lomb',
    name: 'Biotrue ONEday',
    period: 'однодневные',
    curvatures: [8.6],
    diameter: 14.2,
    packs: [30, 90],
    price: 2100,
  },
  {
    manufacturer: jj,
    name: '1-Day Acuvue Moist',
    period: 'однодневные',
    curvatures: [8.5, 9],
    diameter: 14.2,
    packs: [30, 90],
    price: 2300,
  },
  {
    manufacturer: 'Alcon',
    name: 'Dailies Total1',
    period: 'однодневные',
    curvatures: [8.5],
    diameter: 14.1,
    packs: [30, 90],
    price: 3900,
  },
  {
    manufacturer: 'CooperVision',
    name: 'Biofinity Toric',
    period: 'месячные',
    curvatures: [8.7],
    diameter: 14.5,
    packs: [3, 6],
    price: 2600,
    design: 'toric',
  },
  {
    manufacturer: jj,
    name: 'Acuvue Oasys for Astigmatism',
    period: 'двухнедельные',
    curvatures: [8.6],
    diameter: 14.5,
    packs: [6],
    price: 2900,
    design: 'toric',
  },
  {
    manufacturer: 'Alcon',
    name: 'Air Optix Colors',
    period: 'месячные',
    curvatures: [8.6],
    diameter: 14.2,
    packs: [2],
    price: 1700,
    design: 'colour',
  },
  {
    manufacturer: 'CooperVision',
    name: 'MyDay',
    period: 'однодневные',
    curvatures: [8.4],
    diameter: 14.2,
    packs: [30, 90],
    price: 2900,
  },
  {
    manufacturer: jj,
    name: 'Acuvue Oasys Multifocal',
    period: 'двухнедельные',
    curvatures: [8.4],
    diameter: 14.3,
    packs: [6],
    price: 3900,
    design: 'multifocal',
    adds: ['LOW', 'MID', 'HIGH'],
  },
  {
    manufacturer: 'Bausch + Lomb',
    name: 'Ultra',
    period: 'месячные',
    curvatures: [8.5],
    diameter: 14.2,
    packs: [3, 6],
    price: 1500,
  },
  {
    manufacturer: 'Alcon',
    name: 'Air Optix plus HydraGlyde for Astigmatism',
    period: 'месячные',
    curvatures: [8.7],
    diameter: 14.5,
    packs: [3, 6],
    price: 2300,
    design: 'toric',
  },
  {
    manufacturer: 'CooperVision',
    name: 'clariti 1 day',
    period: 'однодневные',
    curvatures: [8.6],
    diameter: 14.1,
    packs: [30, 90],
    price: 1600,
  },
  {
    manufacturer: jj,
    name: 'Acuvue Vita',
    period: 'месячные',
    curvatures: [8.4, 8.8],
    diameter: 14,
    packs: [6],
    price: 2700,
  },
  {
    manufacturer: 'Alcon',
    name: 'Dailies AquaComfort Plus',
    period: 'однодневные',
    curvatures: [8.7],
    diameter: 14,
    packs: [30, 90],
    price: 1700,
  },
  {
    manufacturer: 'CooperVision',
    name: 'Biofinity Multifocal',
    period: 'месячные',
    curvatures: [8.6],
    diameter: 14,
    packs: [3, 6],
    price: 3400,
    design: 'multifocal',
    adds: ['+1.00', '+1.50', '+2.00', '+2.50'],
  },
  {
    manufacturer: 'Bausch + Lomb',
    name: 'PureVision2',
    period: 'месячные',
    curvatures: [8.6],
    diameter: 14,
    packs: [6],
    price: 2400,
  },
  {
    manufacturer: jj,
    name: '1-Day Acuvue Moist for Astigmatism',
    period: 'однодневные',
    curvatures: [8.5],
    diameter: 14.5,
    packs: [30],
    price: 3100,
    design: 'toric',
  },
  {
    manufacturer: 'Alcon',
    name: 'Air Optix Night & Day Aqua',
    period: 'месячные',
    curvatures: [8.4, 8.6],
    diameter: 13.8,
    packs: [3, 6],
    price: 2100,
  },
  {
    manufacturer: 'CooperVision',
    name: 'Proclear 1 day',
    period: 'однодневные',
    curvatures: [8.7],
    diameter: 14.2,
    packs: [30, 90],
    price: 1900,
  },
  {
    manufacturer: 'Alcon',
    name: 'Precision1',
    period: 'однодневные',
    curvatures: [8.3],
    diameter: 14.2,
    packs: [30, 90],
    price: 2200,
  },
  {
    manufacturer: jj,
    name: '1-Day Acuvue Define',
    period: 'однодневные',
    curvatures: [8.5],
    diameter: 14.2,
    packs: [30],
    price: 2900,
    design: 'colour',
  },
  {
    manufacturer: 'Alcon',
    name: 'Dailies Total1 Multifocal',
    period: 'однодневные',
    curvatures: [8.5],
    diameter: 14.1,
    packs: [30],
    price: 5200,
    design: 'multifocal',
    adds: ['LO', 'MED', 'HI'],
  },
  {
    manufacturer: 'CooperVision',
    name: 'Biofinity Energys',
    period: 'месячные',
    curvatures: [8.6],
    diameter: 14,
    packs: [3, 6],
    price: 2200,
  },
  {
    manufacturer: 'Alcon',
    name: 'Total30',
    period: 'месячные',
    curvatures: [8.4],
    diameter: 14.2,
    packs: [3, 6],
    price: 2300,
  },
  {
    manufacturer: 'Bausch + Lomb',
    name: 'SofLens 38',
    period: 'двухнедельные',
    curvatures: [8.4, 8.7, 9],
    diameter: 14,
    packs: [6],
    price: 1100,
  },
  {
    manufacturer: 'Interojo',
    name: 'Adria Color 2 Tone',
    period: 'квартальные',
    curvatures: [8.6],
    diameter: 14.2,
    packs: [2],
    price: 1300,
    design: 'colour',
  },
]
const lensColours = ['голубые', 'зелёные', 'серые', 'карие', 'медовые']

/** Power zones of a contact-lens product; the stronger ones in 0.50 steps and dearer. */
function contactZones(line: ContactLine): EntryPlan[] {
  const diameter: [number, number] = [line.diameter, line.diameter]
  const zone = (ranges: Record<string, [number, number]>, factor: number, steps?: Record<string, number>) => ({
    ranges: { diameter, ...ranges },
    price: factor,
    ...(steps ? { steps } : {}),
  })
  if (line.design === 'toric') {
    const toric = { cylinder: [-2.25, -0.75] as [number, number], axis: [10, 180] as [number, number] }
    return [zone({ dioptre: [-6, 4], ...toric }, 1), zone({ dioptre: [-9, -6.5], ...toric }, 1.15, { dioptre: 0.5 })]
  }
  if (line.design === 'colour')
    return [zone({ dioptre: [-6, 0] }, 1), zone({ dioptre: [-8, -6.5] }, 1.1, { dioptre: 0.5 })]
  return [
    zone({ dioptre: [-6, 6] }, 1),
    zone({ dioptre: [-12, -6.5] }, 1.1, { dioptre: 0.5 }),
    zone({ dioptre: [6.5, 8] }, 1.1, { dioptre: 0.5 }),
  ]
}

export const contactLenses: DemoRecipe = {
  kind: k.contactLenses,
  barcodePrefix: '4605',
  denseFrom: 5000,
  product(index, random) {
    const { line, serial } = lineOf(contactLines, index)
    const colours = line.design === 'colour' ? lensColours : ['прозрачные']
    const adds = line.adds ?? [null]
    const {
      picks: [p, c, a],
      series,
    } = digits(serial, [line.packs.length, colours.length, adds.length])
    const pack = line.packs[p as number] as number
    // Bigger packs cost less per lens.
    const packPrice = line.price * (pack / (line.packs[0] as number)) ** 0.9
    const wobble = random.int(95, 110) / 100
    return {
      values: {
        manufacturer: line.manufacturer,
        name: withSeries(line.name, series),
        wearingPeriod: line.period,
        color: colours[c as number] as string,
        packageQuantity: pack,
        add: adds[a as number] as DemoValue,
        curvatureRadius: null,
      },
      entries: contactZones(line).map((zone) => ({ ...zone, price: shelfPrice(packPrice * wobble * zone.price) })),
      options: { curvatureRadius: line.curvatures },
      concrete: true,
      steps: { diameter: 0.1, cylinder: 0.5, axis: 10 },
      skus: random.int(20, 60),
    }
  },
}
