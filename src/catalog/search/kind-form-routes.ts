import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import Type, { type Static } from 'typebox'
import { problemResponses } from '../../http/schemas.js'
import type { Filter, ItemField, Kind, Label } from '../kinds/kind.js'
import { kinds } from '../kinds/kinds.js'
import { MAX_AXIS, MAX_POWER } from './prescription.js'

/*
 * What a search form needs to know of each kind, from the same descriptors the API uses: its fields with their
 * type and Russian and English labels, how a prescription field is checked, and its item fields (the columns of
 * a result table, each one a sort key). The web app draws its tabs and forms from this alone, so a new kind
 * needs no code there.
 */

const LabelSchema = Type.Object({ ru: Type.String(), en: Type.String() })

const FormFieldSchema = Type.Object({
  name: Type.String({ description: 'The search body field' }),
  label: LabelSchema,
  input: Type.Union([Type.Literal('text'), Type.Literal('number'), Type.Literal('prescription')], {
    description:
      'text: a case-insensitive substring (facets and suggestions offer values); number: equal to, or within ' +
      'the band of, an item; prescription: a power or axis of a prescription (see `step`, `min`, `max`)',
  }),
  role: Type.Optional(
    Type.Union([Type.Literal('sphere'), Type.Literal('cylinder'), Type.Literal('addition'), Type.Literal('axis')]),
  ),
  step: Type.Optional(Type.Number({ description: 'A prescription value is a whole multiple of this' })),
  min: Type.Optional(Type.Number()),
  max: Type.Optional(Type.Number()),
})

const ColumnSchema = Type.Object({
  name: Type.String({ description: 'The item field, also a sort key' }),
  label: LabelSchema,
  type: Type.Union([Type.Literal('text'), Type.Literal('decimal'), Type.Literal('integer')]),
})

export const KindFormsSchema = Type.Object(
  {
    kinds: Type.Array(
      Type.Object({
        kind: Type.String({ description: 'The kind, as in /search/{kind}' }),
        title: LabelSchema,
        fields: Type.Array(FormFieldSchema),
        columns: Type.Array(ColumnSchema),
      }),
    ),
  },
  { title: 'Search forms of the kinds' },
)
export type KindForms = Static<typeof KindFormsSchema>
type FormField = Static<typeof FormFieldSchema>

/** The price's label; every other label comes from the kind's descriptor (its `labels`, else its `ru` names). */
const PRICE_LABEL = { ru: 'Цена', en: 'Price' }

function columnLabel(field: ItemField): Label {
  switch (field.source.from) {
    case 'price':
      return PRICE_LABEL
    case 'attribute':
      return field.source.attribute.label
    case 'point':
      return field.source.range.label
    case 'bound': {
      const { label } = field.source.range
      const from = field.source.bound === 'from'
      return { ru: `${label.ru} ${from ? 'от' : 'до'}`, en: `${label.en} ${from ? 'from' : 'to'}` }
    }
  }
}

function formField(filter: Filter): FormField {
  const label = filter.match === 'covers' ? filter.range.label : filter.attribute.label
  if (filter.match === 'substring') return { name: filter.name, label, input: 'text' }
  const role = filter.match === 'covers' && filter.prescription ? filter.range.prescription : undefined
  if (!role) return { name: filter.name, label, input: 'number' }
  return role === 'axis'
    ? { name: filter.name, label, input: 'prescription', role, step: 1, min: 0, max: MAX_AXIS }
    : { name: filter.name, label, input: 'prescription', role, step: 0.25, min: -MAX_POWER, max: MAX_POWER }
}

/** The search form and result columns of one kind. */
export function kindForm(kind: Kind): KindForms['kinds'][number] {
  return {
    kind: kind.path,
    title: { ru: kind.ruTitle, en: kind.title },
    fields: kind.filters.map(formField),
    columns: kind.itemFields.map((field) => ({ name: field.name, label: columnLabel(field), type: field.type })),
  }
}

const forms: KindForms = { kinds: kinds.map(kindForm) }

/** `GET /api/v2/good/nomenclature/kinds`: every kind's search form, for a front end to draw. */
export async function kindFormRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/api/v2/good/nomenclature/kinds',
    {
      schema: {
        tags: ['nomenclature'],
        operationId: 'nomenclatureKinds',
        summary: 'Per kind: the search form (fields, labels, prescription rules) and the result columns',
        description:
          'Drawn from the kind descriptors the searches use, so a front end needs no code per kind. Labels are ' +
          'Russian and English; text fields take values from /facets and /suggest.',
        response: { 200: KindFormsSchema, ...problemResponses(503) },
      },
    },
    async (): Promise<KindForms> => forms,
  )
}
