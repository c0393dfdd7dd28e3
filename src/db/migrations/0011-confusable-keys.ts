import { type Kysely, sql } from 'kysely'
import { normaliseLookAlikeKeys } from './0007-look-alike-keys.js'

/**
 * Keys compared as a person sees them (domain/key-text.ts): on top of the form of 0007-look-alike-keys, NFKC
 * (fullwidth `５２` is `52`) and one script per word (`Rаy-Ban` with a Cyrillic `а` is `Ray-Ban`). The new
 * `optics_key_text` is that form in SQL, and the glass price list's stored keys are brought to it as 0007 did:
 * rewritten where the new key is nobody else's (one change of the history), reported in `glass_price_key_report`
 * as `look-alike` where it is another entry's key too (both left as they are), `invalid` where it holds what the
 * API refuses.
 *
 * `optics_key_text_nfc` is the function of 0007, kept by a new name: after NFKC it removes the invisible
 * characters, makes the spaces NFKC left plain and trims, so the trimming happens after NFKC, as the service trims
 * its one form. `optics_key_word` writes one word in one script; the letters are the service's (LOOK_ALIKES),
 * written out here, frozen. On a database whose encoding is not UTF8 nothing changes.
 */
const cyrillic = 'АВЕКМНОРСТХЅІЈҮԚԜЁЇаеорсухѕіјһԛԝёї'
const latin = 'ABEKMHOPCTXSIJYQWËÏaeopcyxsijhqwëï'
const latinLetter = '[A-Za-z\\u00c0-\\u00d6\\u00d8-\\u00f6\\u00f8-\\u024f]'
const cyrillicLetter = '[\\u0400-\\u052f]'
const wordCharacters = '0-9A-Za-z\\u00c0-\\u00d6\\u00d8-\\u00f6\\u00f8-\\u024f\\u0300-\\u036f\\u0400-\\u052f'

export async function up(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ encoding: string }>`SELECT current_setting('server_encoding') AS encoding`.execute(db)
  if (rows[0]?.encoding !== 'UTF8') return
  await sql`ALTER FUNCTION optics_key_text(text) RENAME TO optics_key_text_nfc`.execute(db)
  await sql
    .raw(`CREATE FUNCTION optics_key_word(word text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      RETURN CASE
        WHEN word !~ '${latinLetter}' OR word !~ '${cyrillicLetter}' THEN word
        WHEN translate(word, '${cyrillic}', '') ~ '${cyrillicLetter}'
          AND translate(word, '${latin}', '') !~ '${latinLetter}' THEN translate(word, '${latin}', '${cyrillic}')
        ELSE translate(word, '${cyrillic}', '${latin}')
      END`)
    .execute(db)
  await sql
    .raw(`CREATE FUNCTION optics_key_text(value text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      RETURN (
        SELECT coalesce(string_agg(optics_key_word(part[1]), '' ORDER BY position), '')
        FROM regexp_matches(optics_key_text_nfc(normalize(value, NFKC)), '[${wordCharacters}]+|[^${wordCharacters}]+', 'g')
          WITH ORDINALITY AS parts (part, position)
      )`)
    .execute(db)
  await normaliseLookAlikeKeys(db, '0011-confusable-keys')
}
