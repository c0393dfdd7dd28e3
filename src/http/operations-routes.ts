import type { FastifyInstance } from 'fastify'
import Type from 'typebox'

const HealthSchema = Type.Object({ status: Type.String({ description: 'UP or DOWN' }) })

/** Spring Boot Actuator-compatible probes, so existing deployments keep their checks. */
export async function operationsRoutes(app: FastifyInstance): Promise<void> {
  app.get(
    '/actuator/health',
    {
      schema: {
        tags: ['operations'],
        operationId: 'health',
        summary: 'Health of the service and its database',
        response: { 200: HealthSchema, 503: HealthSchema },
      },
    },
    async (_request, reply) => {
      try {
        await app.db.ping()
        return { status: 'UP' }
      } catch {
        return reply.code(503).send({ status: 'DOWN' })
      }
    },
  )
}
