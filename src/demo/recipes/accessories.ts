import * as k from '../../catalog/kinds/kinds.js'
import { type DemoRecipe, modelCode, shelfPrice } from '../demo-generator.js'
import { between, lineOf } from './common.js'

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

export const accessories: DemoRecipe = {
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
