import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import Type from 'typebox'
import { message } from '../domain/messages.js'
import { type LoggerLevels, type LogLevels, parseSpringLevel, ROOT_LOGGER, SPRING_LEVELS } from './log-levels.js'
import { invalidField, ProblemError } from './problem.js'
import { problemResponses } from './schemas.js'
import { StringEnum } from './validation.js'

/*
 * Spring Boot Actuator's `/actuator/loggers`: the loggers and their levels, and a level changed at run time
 * (log-levels.ts). With authentication on, every call needs a token with the role `prices:write` (auth.ts).
 */

const tags = ['operations']

const LevelSchema = StringEnum(SPRING_LEVELS)

const LoggerLevelsSchema = Type.Object({
  configuredLevel: Type.Union([LevelSchema, Type.Null()], {
    description: 'The level set on this logger; null where it follows its parent (ROOT always has one)',
  }),
  effectiveLevel: LevelSchema,
})

const LoggersSchema = Type.Object({
  levels: Type.Array(LevelSchema, { description: 'The levels a logger may be given, most quiet first' }),
  loggers: Type.Record(Type.String(), LoggerLevelsSchema, {
    description:
      'Every logger by name: ROOT (the requests and everything else), then the named parts and their prefixes',
  }),
})

const LoggerParamsSchema = Type.Object({
  name: Type.String({ description: 'ROOT, or a name of `GET /actuator/loggers`', examples: [ROOT_LOGGER] }),
})

const SetLevelSchema = Type.Object(
  {
    configuredLevel: Type.Union([Type.String(), Type.Null()], {
      description: `One of ${SPRING_LEVELS.join(', ')} (any case), or null: follow the parent again (ROOT: LOG_LEVEL)`,
      examples: ['DEBUG'],
    }),
  },
  { examples: [{ configuredLevel: 'DEBUG' }] },
)

export interface LoggerRoutesOptions {
  readonly logLevels: LogLevels
}

/** `GET /actuator/loggers`, `GET /actuator/loggers/{name}` and `POST /actuator/loggers/{name}`. */
export async function loggerRoutes(fastify: FastifyInstance, options: LoggerRoutesOptions): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const { logLevels } = options

  const levelsOf = (name: string): LoggerLevels => {
    const levels = logLevels.levelsOf(name)
    if (!levels) throw new ProblemError(404, message('actuator.noLogger', { name }))
    return levels
  }

  app.get(
    '/actuator/loggers',
    {
      schema: {
        tags,
        operationId: 'loggers',
        summary: 'The loggers and their levels, as Spring Boot lists them',
        response: { 200: LoggersSchema },
      },
    },
    async () => ({
      levels: [...SPRING_LEVELS],
      loggers: Object.fromEntries(logLevels.names().map((name) => [name, levelsOf(name)])),
    }),
  )

  app.get(
    '/actuator/loggers/:name',
    {
      schema: {
        tags,
        operationId: 'logger',
        summary: 'The levels of one logger',
        params: LoggerParamsSchema,
        response: { 200: LoggerLevelsSchema, ...problemResponses(404) },
      },
    },
    async (request) => levelsOf(request.params.name),
  )

  app.post(
    '/actuator/loggers/:name',
    {
      schema: {
        tags,
        operationId: 'setLoggerLevel',
        summary: "Changes a logger's level at run time (until the service restarts)",
        description:
          'Takes effect at once for the logger and the loggers under it that have no level of their own; ROOT ' +
          "is the requests' level and every other's. null lets the logger follow its parent again (ROOT: back " +
          'to LOG_LEVEL).',
        params: LoggerParamsSchema,
        body: SetLevelSchema,
        response: { 204: Type.Null({ description: 'The level is set' }), ...problemResponses(400, 404) },
      },
    },
    async (request, reply) => {
      const given = request.body.configuredLevel
      const level = given === null ? null : parseSpringLevel(given)
      if (level === undefined) {
        throw invalidField('configuredLevel', message('validation.oneOf', { allowed: SPRING_LEVELS.join(', ') }))
      }
      levelsOf(request.params.name)
      logLevels.setLevel(request.params.name, level)
      request.log.info({ logger: request.params.name, level }, 'log level changed')
      return reply.code(204).send(null)
    },
  )
}
