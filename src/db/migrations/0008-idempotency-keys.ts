import { type Kysely, sql } from 'kysely'

/**
 * The outcomes of writes sent with an `Idempotency-Key` (http/idempotency.ts), per caller and key: what the
 * request was (method, path, a fingerprint of its body) and what it answered (status, the headers that matter,
 * the JSON body), kept until `expires_at`. A row is written in the same transaction as the write it answers, so a
 * committed write always has its outcome here and a rolled-back one has none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE idempotency_key (
      owner text NOT NULL,
      key text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      fingerprint text NOT NULL,
      status integer NOT NULL,
      headers jsonb NOT NULL,
      body text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (owner, key)
    )`.execute(db)
  await sql`CREATE INDEX idempotency_key_expires_at ON idempotency_key (expires_at)`.execute(db)
}
