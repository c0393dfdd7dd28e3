import * as k from '../catalog/kinds/kinds.js'
import {
  type DemoRecipe,
  type DemoValue,
  type EntryPlan,
  modelCode,
  type ProductPlan,
  type Random,
  shelfPrice,
} from './demo-generator.js'

/*
 * The demo catalogue's data: real manufacturers and brands, model code patterns, parameter grids and rouble price
 * levels of a Russian optical chain (2024–2025 order of magnitude). Descriptive values are in Russian, as the
 * chain's ERP writes them. Each recipe turns a product number into a product plan; demo-generator.ts does the rest.
 *
 * Product numbers enumerate a product space with the line (manufacturer, brand) varying fastest, so even a small
 * catalogue shows every manufacturer. Past the real space, a series number is appended to a name.
 */

const frameColors = [
  'чёрный',
  'чёрный матовый',
  'черепаховый (гавана)',
  'коричневый',
  'золотой',
  'розовое золото',
  'серебристый',
  'графит (ган-метал)',
  'бронзовый',
  'прозрачный',
  'серый',
  'синий',
  'тёмно-синий',
  'красный',
  'бордовый',
  'зелёный',
  'розовый',
  'белый',
  'двухцветный',
]
const adultGroups = ['мужская', 'женская', 'унисекс']
const rimTypes = ['ободковая', 'полуободковая (на леске)', 'безободковая (винтовая)']
const frameMaterials = [
  'металл',
  'нержавеющая сталь',
  'монель',
  'титан',
  'бета-титан',
  'алюминий',
  'ацетат',
  'пропионат',
  'TR-90',
  'ультем',
  'карбон',
  'дерево',
  'комбинированная',
]
const shapes = [
  'прямоугольная',
  'квадратная',
  'круглая',
  'овальная',
  '«кошачий глаз»',
  'авиатор',
  'вайфарер',
  'клабмастер',
  'панто',
  'бабочка',
  'геометрическая',
  'оверсайз',
]
const sunShapes = [...shapes, 'маска', 'спортивная']
const sunLensTypes = ['градиентные', 'зеркальные', 'фотохромные', 'тонированные']
const polarized = 'поляризационные'

/** Eye sizes of adult and children's frames, with the bridge and temple that usually go with them. */
const adultSizes = ['48-20-140', '50-19-140', '52-18-140', '53-17-145', '54-18-145', '55-18-145', '56-17-145']
const kidsSizes = ['42-15-120', '44-16-125', '46-16-125', '48-16-130']

/** Product number → (line, serial within the line): lines take turns, so every line appears early. */
function lineOf<T>(lines: readonly T[], index: number): { line: T; serial: number } {
  return { line: lines[index % lines.length] as T, serial: Math.floor(index / lines.length) }
}

/** Splits `serial` over the radices given (fastest first); the remainder is the series number. */
function digits(serial: number, radices: readonly number[]): { picks: number[]; series: number } {
  const picks: number[] = []
  let rest = serial
  for (const radix of radices) {
    picks.push(rest % radix)
    rest = Math.floor(rest / radix)
  }
  return { picks, series: rest }
}

const withSeries = (name: string, series: number) => (series === 0 ? name : `${name} ${series + 1}`)
const between = (random: Random, [low, high]: readonly [number, number]) => low + (high - low) * random.float()

// ---------------------------------------------------------------------------------------------------------------
// Accessories: priced per model.

const accessoryLines: readonly { category: string; models: readonly [string, number, number][] }[] = [
  {
    category: 'Футляры',
    models: [
      ['Футляр жёсткий на магните', 600, 1500],
      ['Футляр мягкий (чехол)', 300, 700],
      ['Футляр складной', 700, 1800],
      ['Футляр детский', 400, 900],
      ['Футляр для солнцезащитных очков', 800, 2500],
    ],
  },
  {
    category: 'Салфетки',
    models: [
      ['Салфетка из микрофибры 15×15', 150, 300],
      ['Салфетка из микрофибры 18×15 с принтом', 250, 400],
      ['Влажные салфетки для очков, 10 шт.', 150, 250],
    ],
  },
  {
    category: 'Спреи для очков',
    models: [
      ['Спрей для очков 30 мл', 250, 450],
      ['Спрей для очков 50 мл', 350, 700],
      ['Спрей-антифог 30 мл', 400, 700],
    ],
  },
  {
    category: 'Растворы для линз',
    models: [
      ['Opti-Free PureMoist 300 мл', 800, 1100],
      ['Opti-Free Express 355 мл', 700, 1000],
      ['ReNu MultiPlus 360 мл', 600, 900],
      ['Biotrue 300 мл', 700, 1000],
      ['AOSEPT PLUS HydraGlyde 360 мл', 1100, 1500],
      ['Opti-Free PureMoist 90 мл', 350, 500],
    ],
  },
  { category: 'Капли для глаз', models: [['Увлажняющие капли для линз 10 мл', 400, 900]] },
  {
    category: 'Контейнеры и пинцеты',
    models: [
      ['Контейнер для линз', 100, 300],
      ['Дорожный набор: контейнер, пинцет, зеркальце', 300, 600],
      ['Пинцет для линз', 100, 250],
    ],
  },
  {
    category: 'Шнурки и цепочки',
    models: [
      ['Шнурок неопреновый', 300, 600],
      ['Цепочка металлическая', 600, 2000],
      ['Спортивный ремешок', 400, 900],
    ],
  },
  {
    category: 'Ремкомплекты',
    models: [
      ['Отвёртка 3-в-1', 150, 400],
      ['Набор винтов', 150, 350],
      ['Носоупоры силиконовые, пара', 100, 300],
    ],
  },
  { category: 'Клипсы', models: [['Клипса поляризационная', 900, 2500]] },
]
const accessoryModels = accessoryLines.flatMap(({ category, models }) =>
  models.map(([model, low, high]) => ({ category, model, low, high })),
)

const accessories: DemoRecipe = {
  kind: k.accessories,
  barcodePrefix: '4601',
  product(index, random) {
    const { line, serial } = lineOf(accessoryModels, index)
    // Past the first, a model is a supplier's variant with its own article number.
    const model = serial === 0 ? line.model : `${line.model}, арт. ${modelCode('AC-#####', serial - 1)}`
    return {
      values: { category: line.category, model },
      entries: [{ price: shelfPrice(between(random, [line.low, line.high])) }],
      skus: random.int(1, 2),
      distinct: false,
    }
  },
}

// ---------------------------------------------------------------------------------------------------------------
// Frames and sunglasses: priced per model; a SKU is a colour (and size) of the model.

interface FrameLine {
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

const glasses: DemoRecipe = {
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

const sunglasses: DemoRecipe = {
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

// ---------------------------------------------------------------------------------------------------------------
// Spectacle lenses: an entry prices a power zone of a product (line × index × coating × technology) for a
// diameter band. Stock lenses are SKUs with a concrete sphere and cylinder; made-to-order lenses have none.

interface LensIndex {
  readonly index: number
  readonly material: string
  /** Retail price of a standard single-vision lens of this index, roubles. */
  readonly price: number
  /** The strongest minus sphere made. */
  readonly minSphere: number
}

const lensIndices: Readonly<Record<string, LensIndex>> = {
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

const lenses: DemoRecipe = {
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

// ---------------------------------------------------------------------------------------------------------------
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

const contactLenses: DemoRecipe = {
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

// ---------------------------------------------------------------------------------------------------------------
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

const extras: DemoRecipe = {
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

// ---------------------------------------------------------------------------------------------------------------
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

const semifinishedLenses: DemoRecipe = {
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

/** The recipes of the seven kinds, by kind path. */
export const demoRecipes: ReadonlyMap<string, DemoRecipe> = new Map(
  [accessories, sunglasses, glasses, lenses, contactLenses, extras, semifinishedLenses].map((recipe) => [
    recipe.kind.path,
    recipe,
  ]),
)
