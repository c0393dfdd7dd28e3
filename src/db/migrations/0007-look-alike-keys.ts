import { type Kysely, sql } from 'kysely'

/**
 * Keys of the glass price list stored before the service brought text to one form (domain/key-text.ts: invisible
 * characters removed, no-break spaces made spaces, NFC) are brought to it here, where that is safe, and the rest
 * is reported in `glass_price_key_report`, one row per entry that needed attention:
 *
 * - `normalised`: the entry's keys were rewritten to their one form. Its new key is nobody else's, so nothing
 *   merges by surprise. The rewrite is one change of the history (action UPDATE by `system`, parameters naming
 *   this migration), with a new version (ETag); the change-log triggers record it like any other write.
 * - `look-alike`: its one form is another entry's key too (`look_alikes` lists them): two entries that print the
 *   same. Both keep their prices and stay as they are; a price manager deletes or renames one (writing the one
 *   not yet in its one form through the API answers 409 naming the other). `run` numbers the report's runs.
 * - `invalid`: a key holds what the API now refuses (U+FFFD where bytes did not decode, a bidi control), or is
 *   nothing but invisible characters: left as it is, to be corrected by hand.
 *
 * Only text with a character outside printable ASCII can change, so the rest of the table is read once, for its
 * keys. Frozen: the rules are written out here as this migration applies them, not imported.
 *
 * `optics_key_text(text)` is that one form in SQL, trimmed of whitespace as the API trims keys: the migration uses
 * it, and so does a revert, which writes keys recorded before they had one form. NFC needs a UTF8 database
 * (PostgreSQL's `normalize`) and Unicode escapes; on another encoding the function only trims and nothing is
 * migrated.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE glass_price_key_report (
      run integer NOT NULL,
      entry_id bigint NOT NULL,
      outcome text NOT NULL CHECK (outcome IN ('normalised', 'look-alike', 'invalid')),
      reason text NOT NULL,
      manufacturer text NOT NULL,
      brand text NOT NULL,
      model text NOT NULL,
      canonical_manufacturer text NOT NULL,
      canonical_brand text NOT NULL,
      canonical_model text NOT NULL,
      look_alikes bigint[],
      reported_at timestamptz NOT NULL DEFAULT now()
    )`.execute(db)
  const { rows } = await sql<{ encoding: string }>`SELECT current_setting('server_encoding') AS encoding`.execute(db)
  const nfc = rows[0]?.encoding === 'UTF8'
  const invisible = '[\\u00ad\\u061c\\u180e\\u200b-\\u200f\\u2060-\\u2064\\ufeff]'
  const whitespace =
    ' \\t\\n\\u000b\\f\\r\\u1680\\u2000\\u2001\\u2002\\u2003\\u2004\\u2005\\u2006\\u2007\\u2008\\u2009\\u200a' +
    '\\u2028\\u2029\\u205f\\u3000'
  const spaced = `translate(regexp_replace(value, E'${invisible}', '', 'g'), E'\\u00a0\\u2007\\u202f', '   ')`
  await sql
    .raw(`CREATE FUNCTION optics_key_text(value text) RETURNS text
      LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
      RETURN ${nfc ? `btrim(normalize(${spaced}, NFC), E'${whitespace}')` : 'btrim(value)'}`)
    .execute(db)
  if (nfc) await normaliseLookAlikeKeys(db)
}

/** What the API refuses in a key (the first reason), or NULL. */
function invalidReasonSql(column: string, field: string) {
  return sql.raw(`CASE
      WHEN ${column} = '' THEN '${field} is blank once invisible characters are removed'
      WHEN strpos(${column}, E'\\ufffd') > 0 THEN '${field} holds U+FFFD (bytes that were not UTF-8)'
      WHEN ${column} ~ E'[\\u202a-\\u202e\\u2066-\\u2069]' THEN '${field} holds a bidirectional control character'
    END`)
}

/**
 * Reports the glass price list's look-alike keys and normalises those that can be (see the migration's comment).
 * Exported for its test, which plants keys the API no longer lets in; `up` runs it once, and so does the migration
 * 0011-confusable-keys, which gives `optics_key_text` a finer form (`migration` names it in the history).
 */
export async function normaliseLookAlikeKeys(db: Kysely<any>, migration = '0007-look-alike-keys'): Promise<void> {
  const last = await sql<{ run: number }>`SELECT coalesce(max(run), 0) AS run FROM glass_price_key_report`.execute(db)
  const run = Number(last.rows[0]?.run ?? 0) + 1
  const notPlainAscii = sql.raw(`'[^\\u0020-\\u007e]'`)
  await sql`
    INSERT INTO glass_price_key_report (run, entry_id, outcome, reason, manufacturer, brand, model,
      canonical_manufacturer, canonical_brand, canonical_model, look_alikes)
    WITH canon AS MATERIALIZED (
      SELECT id, manufacturer, brand, model,
        optics_key_text(manufacturer) AS cm, optics_key_text(brand) AS cb, optics_key_text(model) AS cmo
      FROM glasses_price
      WHERE manufacturer ~ ${notPlainAscii} OR brand ~ ${notPlainAscii} OR model ~ ${notPlainAscii}
    ),
    candidates AS MATERIALIZED (
      SELECT c.*, coalesce(${invalidReasonSql('c.cm', 'manufacturer')}, ${invalidReasonSql('c.cb', 'brand')},
        ${invalidReasonSql('c.cmo', 'model')}) AS invalid
      FROM canon c
    ),
    keyed AS MATERIALIZED (
      SELECT p.id, optics_norm(coalesce(c.cm, p.manufacturer)) AS km, optics_norm(coalesce(c.cb, p.brand)) AS kb,
        optics_norm(coalesce(c.cmo, p.model)) AS kmo
      FROM glasses_price p LEFT JOIN canon c ON c.id = p.id
    ),
    shared AS (
      SELECT c.id, array_agg(k.id ORDER BY k.id) AS ids
      FROM candidates c
      JOIN keyed k ON k.km = optics_norm(c.cm) AND k.kb = optics_norm(c.cb) AND k.kmo = optics_norm(c.cmo)
        AND k.id <> c.id
      WHERE c.invalid IS NULL
      GROUP BY c.id
    )
    SELECT ${run}, c.id,
      CASE WHEN c.invalid IS NOT NULL THEN 'invalid' WHEN s.ids IS NOT NULL THEN 'look-alike' ELSE 'normalised' END,
      CASE WHEN c.invalid IS NOT NULL THEN c.invalid
        WHEN s.ids IS NOT NULL THEN 'prints as the key of entries ' || array_to_string(s.ids, ', ')
        ELSE 'keys brought to one form' END,
      c.manufacturer, c.brand, c.model, c.cm, c.cb, c.cmo, s.ids
    FROM candidates c LEFT JOIN shared s ON s.id = c.id
    WHERE c.invalid IS NOT NULL OR s.ids IS NOT NULL
      OR (c.cm, c.cb, c.cmo) IS DISTINCT FROM (c.manufacturer, c.brand, c.model)
    ORDER BY c.id`.execute(db)

  const count = await sql<{ count: string | number }>`
    SELECT count(*) AS count FROM glass_price_key_report WHERE run = ${run} AND outcome = 'normalised'`.execute(db)
  const normalised = Number(count.rows[0]?.count ?? 0)
  if (normalised === 0) return

  // One change of the history, as any write of the price list records itself: who, what, old → new per field.
  const change = await sql<{ id: string | number }>`
    INSERT INTO glass_price_change (action, created_by, parameters, changed_count)
    VALUES ('UPDATE', 'system', jsonb_build_object('migration', ${migration}::text), ${normalised})
    RETURNING id`.execute(db)
  const changeId = change.rows[0]?.id
  await sql`
    INSERT INTO glass_price_change_row (change_id, entry_id, field, old_value, new_value)
    SELECT ${changeId}, r.entry_id, f.field, f.old_value, f.new_value
    FROM glass_price_key_report r
    CROSS JOIN LATERAL (VALUES ('manufacturer', r.manufacturer, r.canonical_manufacturer),
      ('brand', r.brand, r.canonical_brand), ('model', r.model, r.canonical_model)) AS f (field, old_value, new_value)
    WHERE r.run = ${run} AND r.outcome = 'normalised' AND f.old_value <> f.new_value`.execute(db)
  await sql`
    UPDATE glasses_price p
    SET manufacturer = r.canonical_manufacturer, brand = r.canonical_brand, model = r.canonical_model,
      version = p.version + 1, updated_at = now(), updated_by = 'system'
    FROM glass_price_key_report r
    WHERE r.run = ${run} AND r.entry_id = p.id AND r.outcome = 'normalised'`.execute(db)
}
