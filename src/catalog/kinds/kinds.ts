import { decimal, defineKind, integer, type Kind, type KindSpec, range, text } from './kind.js'

/*
 * The seven kinds of the nomenclature. This file is the only per-kind code of the service.
 *
 * Required keys (`text('key')`) are what an entry must name; they are also what the matview joins on, so every
 * kind has at least two. Wildcard keys (`text('wildcard')`) may be NULL on an entry, which then covers any value.
 */

const power = 'numeric(5,2)'
const diameter = 'numeric(4,1)'

const accessoriesSpec = {
  path: 'accessories',
  table: 'accessories',
  title: 'Accessories',
  ruTitle: 'Аксессуары',
  match: 'most-specific',
  ru: { category: 'Категория', model: 'Модель' },
  attributes: { category: text('key'), model: text('key') },
  filters: ['category', 'model'],
  item: ['category', 'model'],
  order: ['category', 'model'],
  example: { category: 'Футляры' },
} as const satisfies KindSpec
export const accessories = defineKind(accessoriesSpec)

const sunglassesSpec = {
  path: 'sunglasses',
  table: 'sunglasses',
  title: 'Sunglasses',
  ruTitle: 'Солнцезащитные очки',
  match: 'most-specific',
  ru: {
    manufacturer: 'Производитель',
    brand: 'Бренд',
    model: 'Модель',
    color: 'Цвет',
    lensesType: 'Тип линз',
    targetGroup: 'Целевая группа',
    material: 'Материал',
    frameType: 'Тип оправы',
    design: 'Дизайн',
  },
  labels: {
    targetGroup: { ru: 'Пол и возраст', en: 'Gender and age' },
    design: { ru: 'Форма', en: 'Shape' },
    lensesType: { en: 'Lens type' },
  },
  attributes: {
    manufacturer: text('key'),
    brand: text('key'),
    model: text('key'),
    color: text('wildcard'),
    lensesType: text('wildcard'),
    targetGroup: text(),
    material: text(),
    frameType: text(),
    design: text(),
  },
  filters: ['manufacturer', 'brand', 'color', 'model', 'targetGroup', 'material', 'frameType', 'lensesType', 'design'],
  item: ['manufacturer', 'brand', 'color', 'model', 'targetGroup', 'material', 'frameType', 'lensesType', 'design'],
  order: ['manufacturer', 'brand', 'model', 'color', 'lensesType'],
  example: { manufacturer: 'Safilo', brand: 'Polaroid' },
} as const satisfies KindSpec
export const sunglasses = defineKind(sunglassesSpec)

/** Frames. Their price list is the glass price list of `/api/v2/glasses/prices`. */
const glassesSpec = {
  path: 'glasses',
  table: 'glasses',
  title: 'Frames',
  ruTitle: 'Оправы',
  match: 'most-specific',
  ru: {
    manufacturer: 'Производитель',
    brand: 'Бренд',
    model: 'Модель',
    color: 'Цвет',
    targetGroup: 'Целевая группа',
    material: 'Материал',
    type: 'Тип',
    size: 'Размер',
    design: 'Дизайн',
  },
  labels: {
    targetGroup: { ru: 'Пол и возраст', en: 'Gender and age' },
    design: { ru: 'Форма', en: 'Shape' },
    type: { ru: 'Тип оправы', en: 'Frame type' },
  },
  attributes: {
    manufacturer: text('key'),
    brand: text('key'),
    model: text('key'),
    color: text(),
    targetGroup: text(),
    material: text(),
    type: text(),
    size: text(),
    design: text(),
  },
  filters: ['manufacturer', 'brand', 'color', 'model', 'targetGroup', 'material', 'type', 'size', 'design'],
  item: ['manufacturer', 'brand', 'color', 'model', 'targetGroup', 'material', 'type', 'size', 'design'],
  order: ['manufacturer', 'brand', 'model', 'color', 'size'],
  example: { manufacturer: 'EssilorLuxottica', brand: 'Ray-Ban' },
} as const satisfies KindSpec
export const glasses = defineKind(glassesSpec)

/** Spectacle lenses: an entry prices a power zone of a lens product for a diameter band. */
const lensesSpec = {
  path: 'lenses',
  table: 'lenses',
  title: 'Spectacle lenses',
  ruTitle: 'Очковые линзы',
  match: 'all-zones',
  ru: {
    manufacturer: 'Производитель',
    brand: 'Бренд',
    type: 'Тип',
    lensClass: 'Класс линз',
    material: 'Материал',
    geometry: 'Геометрия',
    cover: 'Покрытие',
    technology: 'Технология',
    color: 'Цвет',
    refractionIndex: 'Индекс преломления',
    diameter: 'Диаметр',
    sphere: 'Сфера',
    cylinder: 'Цилиндр',
    add: 'Аддидация',
  },
  labels: {
    type: { ru: 'Тип линзы', en: 'Lens type' },
    lensClass: { en: 'Lens class' },
    cover: { en: 'Coating' },
    refractionIndex: { en: 'Refractive index' },
    add: { en: 'Addition' },
  },
  attributes: {
    manufacturer: text('key'),
    brand: text('key'),
    type: text('wildcard'),
    lensClass: text('wildcard'),
    material: text('wildcard'),
    geometry: text('wildcard'),
    cover: text('wildcard'),
    technology: text('wildcard'),
    color: text('wildcard'),
    refractionIndex: decimal('numeric(4,3)', 'key'),
  },
  ranges: {
    diameter: range('decimal', diameter, 'required'),
    sphere: range('decimal', power, 'optional', 'sphere'),
    cylinder: range('decimal', power, 'optional', 'cylinder'),
    add: range('decimal', power, 'optional', 'addition'),
  },
  filters: [
    'manufacturer',
    'brand',
    'type',
    'lensClass',
    'material',
    'geometry',
    'cover',
    'technology',
    'color',
    'refractionIndex',
    'diameter',
  ],
  prescription: ['sphere', 'cylinder', 'add'],
  item: [
    'manufacturer',
    'brand',
    'type',
    'lensClass',
    'cover',
    'color',
    'refractionIndex',
    'diameter',
    'diameterFrom',
    'diameterTo',
    'sphereFrom',
    'sphereTo',
    'cylinderFrom',
    'cylinderTo',
    'addFrom',
    'addTo',
  ],
  order: ['manufacturer', 'brand', 'type', 'refractionIndex', 'cover', 'diameter', 'sphereFrom', 'cylinderFrom'],
  example: { manufacturer: 'Essilor', refractionIndex: 1.6, sphere: -2.5 },
} as const satisfies KindSpec
export const lenses = defineKind(lensesSpec)

/** Contact lenses: an entry prices a power zone of a product (one box). */
const contactLensesSpec = {
  path: 'contact-lenses',
  table: 'contact_lenses',
  title: 'Contact lenses',
  ruTitle: 'Контактные линзы',
  match: 'all-zones',
  ru: {
    manufacturer: 'Производитель',
    name: 'Наименование',
    wearingPeriod: 'Срок ношения',
    color: 'Цвет',
    packageQuantity: 'Количество в упаковке',
    add: 'Аддидация',
    curvatureRadius: 'Радиус кривизны',
    diameter: 'Диаметр',
    dioptre: 'Диоптрии',
    cylinder: 'Цилиндр',
    axis: 'Ось',
  },
  labels: {
    name: { ru: 'Название', en: 'Product' },
    wearingPeriod: { ru: 'Срок замены', en: 'Replacement' },
    packageQuantity: { ru: 'Линз в упаковке', en: 'Lenses per box' },
    add: { en: 'Addition' },
    curvatureRadius: { ru: 'Радиус кривизны (BC)', en: 'Base curve (BC)' },
    dioptre: { ru: 'Оптическая сила', en: 'Power' },
  },
  attributes: {
    manufacturer: text('key'),
    name: text('key'),
    wearingPeriod: text('wildcard'),
    color: text('wildcard'),
    packageQuantity: integer('wildcard'),
    add: text('wildcard'),
    curvatureRadius: decimal('numeric(4,2)', 'wildcard'),
  },
  ranges: {
    diameter: range('decimal', diameter, 'required'),
    dioptre: range('decimal', power, 'required', 'sphere'),
    cylinder: range('decimal', power, 'optional', 'cylinder'),
    axis: range('integer', 'integer', 'optional', 'axis'),
  },
  filters: ['manufacturer', 'name', 'color', 'diameter', 'curvatureRadius'],
  prescription: ['dioptre', 'cylinder', 'axis'],
  item: [
    'manufacturer',
    'name',
    'wearingPeriod',
    'color',
    'packageQuantity',
    'add',
    'curvatureRadius',
    'diameter',
    'diameterFrom',
    'diameterTo',
    'dioptreFrom',
    'dioptreTo',
    'cylinderFrom',
    'cylinderTo',
    'axisFrom',
    'axisTo',
  ],
  order: ['manufacturer', 'name', 'packageQuantity', 'curvatureRadius', 'diameter', 'dioptreFrom', 'cylinderFrom'],
  example: { manufacturer: 'Alcon', name: 'Dailies Total1', dioptre: -3 },
} as const satisfies KindSpec
export const contactLenses = defineKind(contactLensesSpec)

/** Ready-made corrective glasses: a frame with factory-fitted lenses of one dioptre, priced by dioptre band. */
const extrasSpec = {
  path: 'extras',
  table: 'extras',
  title: 'Ready-made glasses',
  ruTitle: 'Готовые очки',
  match: 'most-specific',
  ru: {
    frameManufacturer: 'Производитель оправы',
    frameBrand: 'Бренд оправы',
    frameModel: 'Модель оправы',
    frameType: 'Тип оправы',
    frameMaterial: 'Материал оправы',
    frameTargetGroup: 'Целевая группа оправы',
    frameColor: 'Цвет оправы',
    lensManufacturer: 'Производитель линз',
    lensBrand: 'Бренд линз',
    dioptre: 'Диоптрии',
  },
  labels: {
    frameTargetGroup: { ru: 'Пол и возраст', en: 'Gender and age' },
    dioptre: { ru: 'Оптическая сила', en: 'Power' },
  },
  attributes: {
    frameManufacturer: text('key'),
    frameBrand: text('key'),
    frameModel: text('key'),
    frameType: text('wildcard'),
    frameMaterial: text('wildcard'),
    frameTargetGroup: text('wildcard'),
    frameColor: text('wildcard'),
    lensManufacturer: text('wildcard'),
    lensBrand: text('wildcard'),
  },
  ranges: { dioptre: range('decimal', power, 'required', 'sphere') },
  filters: [
    'frameManufacturer',
    'frameBrand',
    'frameModel',
    'frameType',
    'frameMaterial',
    'frameTargetGroup',
    'frameColor',
  ],
  prescription: ['dioptre'],
  item: [
    'frameManufacturer',
    'frameBrand',
    'frameModel',
    'frameType',
    'frameMaterial',
    'frameTargetGroup',
    'frameColor',
    'lensManufacturer',
    'lensBrand',
    'dioptreFrom',
    'dioptreTo',
  ],
  order: ['frameManufacturer', 'frameBrand', 'frameModel', 'frameColor', 'dioptreFrom'],
  example: { frameManufacturer: 'Dacchi', dioptre: 2.5 },
} as const satisfies KindSpec
export const extras = defineKind(extrasSpec)

/** Semi-finished lens blanks; an entry without a diameter prices every diameter. */
const semifinishedLensesSpec = {
  path: 'semifinished-lenses',
  table: 'semifinished_lenses',
  title: 'Semi-finished lenses',
  ruTitle: 'Полуфабрикаты линз',
  match: 'most-specific',
  ru: {
    manufacturer: 'Производитель',
    brand: 'Бренд',
    type: 'Тип',
    lensesClass: 'Класс линз',
    material: 'Материал',
    geometry: 'Геометрия',
    cover: 'Покрытие',
    technology: 'Технология',
    color: 'Цвет',
    refractionIndex: 'Индекс преломления',
    diameter: 'Диаметр',
  },
  labels: {
    type: { ru: 'Тип линзы', en: 'Lens type' },
    lensesClass: { en: 'Lens class' },
    cover: { en: 'Coating' },
    refractionIndex: { en: 'Refractive index' },
  },
  attributes: {
    manufacturer: text('key'),
    brand: text('key'),
    type: text('wildcard'),
    lensesClass: text('wildcard'),
    material: text('wildcard'),
    geometry: text('wildcard'),
    cover: text('wildcard'),
    technology: text('wildcard'),
    color: text('wildcard'),
    refractionIndex: decimal('numeric(4,3)', 'key'),
    diameter: decimal(diameter, 'wildcard'),
  },
  filters: [
    'manufacturer',
    'brand',
    'type',
    'lensesClass',
    'material',
    'geometry',
    'cover',
    'technology',
    'color',
    'refractionIndex',
    'diameter',
  ],
  item: [
    'manufacturer',
    'brand',
    'type',
    'lensesClass',
    'cover',
    'color',
    'geometry',
    'technology',
    'refractionIndex',
    'diameter',
  ],
  order: ['manufacturer', 'brand', 'type', 'refractionIndex', 'cover', 'diameter'],
  example: { manufacturer: 'Hoya', refractionIndex: 1.67 },
} as const satisfies KindSpec
export const semifinishedLenses = defineKind(semifinishedLensesSpec)

/** All kinds, in the contract's order. */
export const kinds: readonly Kind[] = [
  accessories,
  sunglasses,
  glasses,
  lenses,
  contactLenses,
  extras,
  semifinishedLenses,
]

export const kindByPath: ReadonlyMap<string, Kind> = new Map(kinds.map((kind) => [kind.path, kind]))

/** Every kind's spec as a type, literal to its names: the types of the kinds' tables follow from them (kind-tables.ts). */
export type KindSpecs =
  | typeof accessoriesSpec
  | typeof sunglassesSpec
  | typeof glassesSpec
  | typeof lensesSpec
  | typeof contactLensesSpec
  | typeof extrasSpec
  | typeof semifinishedLensesSpec
