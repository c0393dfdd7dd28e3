import type { FastifyBaseLogger } from 'fastify'

/*
 * Log levels changed at run time, as Spring Boot Actuator's `/actuator/loggers` changes Logback's. The root logger
 * (ROOT) is the application's pino logger: its level is that of every request's lines, and starts at LOG_LEVEL.
 * Long-lived parts of the service log through named children of it (`optics.catalog.search-index`), dotted as
 * Java's loggers are, so a level set on a name holds for the names under it (`optics.catalog` covers the search
 * index) until one of them is set itself; a name without a level of its own follows its parent, up to ROOT. As
 * Logback, every dotted prefix of a name is a logger too. Spring's level names map to pino's; pino's `fatal` shows
 * as ERROR, as Logback, which has no FATAL, shows it.
 */

/** Spring Boot's levels as Logback offers them, most quiet first (`levels` of `GET /actuator/loggers`). */
export const SPRING_LEVELS = ['OFF', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE'] as const
export type SpringLevel = (typeof SPRING_LEVELS)[number]

/** The name of the root logger. */
export const ROOT_LOGGER = 'ROOT'

const pinoLevelOf: Readonly<Record<SpringLevel, string>> = {
  OFF: 'silent',
  ERROR: 'error',
  WARN: 'warn',
  INFO: 'info',
  DEBUG: 'debug',
  TRACE: 'trace',
}

function springLevelOf(pinoLevel: string | undefined): SpringLevel {
  switch (pinoLevel) {
    case 'trace':
      return 'TRACE'
    case 'debug':
      return 'DEBUG'
    case 'info':
      return 'INFO'
    case 'warn':
      return 'WARN'
    case 'error':
    case 'fatal':
      return 'ERROR'
    default:
      // `silent`, or no logger at all (`logger: false`).
      return 'OFF'
  }
}

/** The level a Spring client names, in any case (Spring reads it leniently); undefined for no such level. */
export function parseSpringLevel(text: string): SpringLevel | undefined {
  const upper = text.trim().toUpperCase()
  return SPRING_LEVELS.find((level) => level === upper)
}

export interface LoggerLevels {
  /** The level set on this logger; null where it follows its parent. ROOT's is always set. */
  readonly configuredLevel: SpringLevel | null
  readonly effectiveLevel: SpringLevel
}

/** The loggers of one application and their levels. */
export class LogLevels {
  readonly #root: FastifyBaseLogger
  /** ROOT's level at start, which `null` brings it back to. */
  readonly #startLevel: SpringLevel
  #rootLevel: SpringLevel
  /** The pino logger of every name something logs through. */
  readonly #loggers = new Map<string, FastifyBaseLogger>()
  /** The levels set on names other than ROOT. */
  readonly #configured = new Map<string, SpringLevel>()

  constructor(root: FastifyBaseLogger) {
    this.#root = root
    this.#startLevel = springLevelOf(root.level)
    this.#rootLevel = this.#startLevel
  }

  /** A logger named `name` (dotted), a child of the root one whose lines carry `logger: name`. */
  child(name: string): FastifyBaseLogger {
    const logger = this.#root.child({ logger: name })
    this.#loggers.set(name, logger)
    logger.level = pinoLevelOf[this.#effective(name)]
    return logger
  }

  /** Every logger's name: ROOT first, then the others and their dotted prefixes in order. */
  names(): string[] {
    const names = new Set<string>()
    for (const name of this.#loggers.keys()) {
      const parts = name.split('.')
      for (let length = 1; length <= parts.length; length++) names.add(parts.slice(0, length).join('.'))
    }
    return [ROOT_LOGGER, ...[...names].sort()]
  }

  /** The levels of the logger `name`; undefined for a name that is no logger. */
  levelsOf(name: string): LoggerLevels | undefined {
    if (name === ROOT_LOGGER) return { configuredLevel: this.#rootLevel, effectiveLevel: this.#rootLevel }
    if (!this.names().includes(name)) return undefined
    return { configuredLevel: this.#configured.get(name) ?? null, effectiveLevel: this.#effective(name) }
  }

  /**
   * Sets the level of the logger `name`, or with null lets it follow its parent again (ROOT: back to its level at
   * start). Takes effect at once for every logger it covers and for requests that start after it. Returns false
   * for a name that is no logger (nothing changes).
   */
  setLevel(name: string, level: SpringLevel | null): boolean {
    if (name === ROOT_LOGGER) {
      this.#rootLevel = level ?? this.#startLevel
      this.#root.level = pinoLevelOf[this.#rootLevel]
    } else if (!this.names().includes(name)) {
      return false
    } else if (level === null) {
      this.#configured.delete(name)
    } else {
      this.#configured.set(name, level)
    }
    // pino's children keep the level they were made with, so each follows its own effective level here.
    for (const [loggerName, logger] of this.#loggers) logger.level = pinoLevelOf[this.#effective(loggerName)]
    return true
  }

  /** The level of the nearest of `name` and its prefixes that has one set, else ROOT's. */
  #effective(name: string): SpringLevel {
    const parts = name.split('.')
    for (let length = parts.length; length > 0; length--) {
      const configured = this.#configured.get(parts.slice(0, length).join('.'))
      if (configured) return configured
    }
    return this.#rootLevel
  }
}
