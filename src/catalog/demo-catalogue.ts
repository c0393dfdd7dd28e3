import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '../db/database.js'

export interface DemoOptions {
  readonly mode: 'auto' | 'true' | 'false'
  readonly scale: number
  readonly log: FastifyBaseLogger
}

/** Fills an empty database with the demo catalogue when `mode` asks for it. (Generator: see issue 2, point 5.) */
export async function ensureDemoCatalogue(_db: Database, options: DemoOptions): Promise<void> {
  options.log.info('demo catalogue: generator not available yet')
}
