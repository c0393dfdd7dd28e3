import type { Random } from '../demo-generator.js'

// The vocabulary and helpers the recipes share: frame colours, shapes and sizes, and how a product number
// picks a line and its values.

export const frameColors = [
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
export const adultGroups = ['мужская', 'женская', 'унисекс']
export const rimTypes = ['ободковая', 'полуободковая (на леске)', 'безободковая (винтовая)']
export const frameMaterials = [
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
export const shapes = [
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
export const sunShapes = [...shapes, 'маска', 'спортивная']
export const sunLensTypes = ['градиентные', 'зеркальные', 'фотохромные', 'тонированные']
export const polarized = 'поляризационные'

/** Eye sizes of adult and children's frames, with the bridge and temple that usually go with them. */
export const adultSizes = ['48-20-140', '50-19-140', '52-18-140', '53-17-145', '54-18-145', '55-18-145', '56-17-145']
export const kidsSizes = ['42-15-120', '44-16-125', '46-16-125', '48-16-130']

/** Product number → (line, serial within the line): lines take turns, so every line appears early. */
export function lineOf<T>(lines: readonly T[], index: number): { line: T; serial: number } {
  return { line: lines[index % lines.length] as T, serial: Math.floor(index / lines.length) }
}

/** Splits `serial` over the radices given (fastest first); the remainder is the series number. */
export function digits(serial: number, radices: readonly number[]): { picks: number[]; series: number } {
  const picks: number[] = []
  let rest = serial
  for (const radix of radices) {
    picks.push(rest % radix)
    rest = Math.floor(rest / radix)
  }
  return { picks, series: rest }
}

export const withSeries = (name: string, series: number) => (series === 0 ? name : `${name} ${series + 1}`)
export const between = (random: Random, [low, high]: readonly [number, number]) => low + (high - low) * random.float()
