import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eachDatabase, useTestApp } from '../../../test/harness.js'
import { kinds } from '../kinds/kinds.js'
import type { KindForms } from './kind-form-routes.js'

eachDatabase('kind forms', (ctx) => {
  const app = useTestApp(ctx)

  test('every kind has its form: the search fields in order, labelled in Russian from its descriptor', async () => {
    const response = await app().inject({ method: 'GET', url: '/api/v2/good/nomenclature/kinds' })
    assert.equal(response.statusCode, 200)
    const forms = response.json<KindForms>().kinds
    assert.deepEqual(
      forms.map((form) => form.kind),
      kinds.map((kind) => kind.path),
    )
    for (const [index, kind] of kinds.entries()) {
      const form = forms[index]!
      assert.deepEqual(form.title, { ru: kind.ruTitle, en: kind.title })
      assert.deepEqual(
        form.fields.map((field) => field.name),
        kind.filters.map((filter) => filter.name),
      )
      assert.deepEqual(
        form.columns.map((column) => column.name),
        kind.itemFields.map((field) => field.name),
      )
      for (const field of form.fields) assert.ok(field.label.ru && field.label.en, `${kind.path}.${field.name}`)
    }
  })

  test('text, number and prescription fields say how they are entered and checked', async () => {
    const forms = (await app().inject({ method: 'GET', url: '/api/v2/good/nomenclature/kinds' })).json<KindForms>()
    const lenses = forms.kinds.find((form) => form.kind === 'lenses')!
    const field = (name: string) => lenses.fields.find((candidate) => candidate.name === name)
    assert.deepEqual(field('brand'), { name: 'brand', label: { ru: 'Бренд', en: 'Brand' }, input: 'text' })
    assert.deepEqual(field('refractionIndex'), {
      name: 'refractionIndex',
      label: { ru: 'Индекс преломления', en: 'Refractive index' },
      input: 'number',
    })
    assert.deepEqual(field('cylinder'), {
      name: 'cylinder',
      label: { ru: 'Цилиндр', en: 'Cylinder' },
      input: 'prescription',
      role: 'cylinder',
      step: 0.25,
      min: -30,
      max: 30,
    })
    const axis = forms.kinds.find((form) => form.kind === 'contact-lenses')!.fields.find((f) => f.name === 'axis')
    assert.deepEqual([axis?.role, axis?.step, axis?.min, axis?.max], ['axis', 1, 0, 180])
    assert.deepEqual(lenses.columns.find((column) => column.name === 'sphereFrom')?.label, {
      ru: 'Сфера от',
      en: 'Sphere from',
    })
  })

  test("labels are the optician's words; spreadsheets keep their Russian column names; the wire keeps the API's", async () => {
    const forms = (await app().inject({ method: 'GET', url: '/api/v2/good/nomenclature/kinds' })).json<KindForms>()
    const form = (kind: string) => forms.kinds.find((candidate) => candidate.kind === kind)!
    const label = (kind: string, name: string) =>
      [...form(kind).fields, ...form(kind).columns].find((field) => field.name === name)?.label
    assert.deepEqual(label('glasses', 'targetGroup'), { ru: 'Пол и возраст', en: 'Gender and age' })
    assert.deepEqual(label('glasses', 'design'), { ru: 'Форма', en: 'Shape' })
    assert.deepEqual(label('glasses', 'type'), { ru: 'Тип оправы', en: 'Frame type' })
    assert.deepEqual(label('lenses', 'cover'), { ru: 'Покрытие', en: 'Coating' })
    assert.deepEqual(label('contact-lenses', 'wearingPeriod'), { ru: 'Срок замены', en: 'Replacement' })
    assert.deepEqual(label('contact-lenses', 'dioptre'), { ru: 'Оптическая сила', en: 'Power' })
    assert.deepEqual(label('contact-lenses', 'dioptreFrom'), { ru: 'Оптическая сила от', en: 'Power from' })
    assert.deepEqual(label('extras', 'frameTargetGroup'), { ru: 'Пол и возраст', en: 'Gender and age' })
    // What files already carry is still read: the spreadsheet's names are the descriptor's `ru`.
    const targetGroup = kinds.find((kind) => kind.path === 'glasses')!.attributes.find((a) => a.name === 'targetGroup')
    assert.equal(targetGroup?.ru, 'Целевая группа')
    // No jargon of the accounting systems on the counter.
    const words = forms.kinds.flatMap((k) => [...k.fields, ...k.columns].map((field) => field.label.ru))
    for (const jargon of ['Наименование', 'Целевая группа', 'Дизайн', 'Срок ношения', 'Диоптрии']) {
      assert.ok(!words.some((word) => word.startsWith(jargon)), jargon)
    }
  })
})
