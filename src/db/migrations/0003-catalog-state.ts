import { type Kysely, sql } from 'kysely'

/**
 * Per kind: the data generation that every write bumps (by trigger) and the generation its matview shows.
 *
 * Frozen: the statements are what catalog/catalog-state.ts `catalogStateSql` gave for the seven kinds of
 * 0001-catalog when this migration was released, written out.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db)
}

const statements: readonly string[] = [
  `CREATE TABLE catalog_state (
      kind text PRIMARY KEY,
      data_generation bigint NOT NULL DEFAULT 0,
      changed_at timestamptz,
      refreshed_generation bigint NOT NULL DEFAULT 0,
      refreshed_at timestamptz,
      refresh_ms integer
    )`,
  `CREATE FUNCTION catalog_mark_stale() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
    BEGIN
      UPDATE catalog_state SET data_generation = data_generation + 1, changed_at = now() WHERE kind = TG_ARGV[0];
      RETURN NULL;
    END
    $$`,
  `INSERT INTO catalog_state (kind, data_generation)
       SELECT 'accessories', CASE WHEN EXISTS (SELECT 1 FROM accessories_price) OR EXISTS (SELECT 1 FROM accessories_sku)
                           THEN 1 ELSE 0 END`,
  `CREATE TRIGGER accessories_price_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON accessories_price
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('accessories')`,
  `CREATE TRIGGER accessories_sku_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON accessories_sku
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('accessories')`,
  `INSERT INTO catalog_state (kind, data_generation)
       SELECT 'sunglasses', CASE WHEN EXISTS (SELECT 1 FROM sunglasses_price) OR EXISTS (SELECT 1 FROM sunglasses_sku)
                           THEN 1 ELSE 0 END`,
  `CREATE TRIGGER sunglasses_price_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sunglasses_price
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('sunglasses')`,
  `CREATE TRIGGER sunglasses_sku_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sunglasses_sku
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('sunglasses')`,
  `INSERT INTO catalog_state (kind, data_generation)
       SELECT 'glasses', CASE WHEN EXISTS (SELECT 1 FROM glasses_price) OR EXISTS (SELECT 1 FROM glasses_sku)
                           THEN 1 ELSE 0 END`,
  `CREATE TRIGGER glasses_price_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON glasses_price
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('glasses')`,
  `CREATE TRIGGER glasses_sku_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON glasses_sku
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('glasses')`,
  `INSERT INTO catalog_state (kind, data_generation)
       SELECT 'lenses', CASE WHEN EXISTS (SELECT 1 FROM lenses_price) OR EXISTS (SELECT 1 FROM lenses_sku)
                           THEN 1 ELSE 0 END`,
  `CREATE TRIGGER lenses_price_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON lenses_price
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('lenses')`,
  `CREATE TRIGGER lenses_sku_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON lenses_sku
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('lenses')`,
  `INSERT INTO catalog_state (kind, data_generation)
       SELECT 'contact-lenses', CASE WHEN EXISTS (SELECT 1 FROM contact_lenses_price) OR EXISTS (SELECT 1 FROM contact_lenses_sku)
                           THEN 1 ELSE 0 END`,
  `CREATE TRIGGER contact_lenses_price_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON contact_lenses_price
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('contact-lenses')`,
  `CREATE TRIGGER contact_lenses_sku_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON contact_lenses_sku
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('contact-lenses')`,
  `INSERT INTO catalog_state (kind, data_generation)
       SELECT 'extras', CASE WHEN EXISTS (SELECT 1 FROM extras_price) OR EXISTS (SELECT 1 FROM extras_sku)
                           THEN 1 ELSE 0 END`,
  `CREATE TRIGGER extras_price_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON extras_price
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('extras')`,
  `CREATE TRIGGER extras_sku_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON extras_sku
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('extras')`,
  `INSERT INTO catalog_state (kind, data_generation)
       SELECT 'semifinished-lenses', CASE WHEN EXISTS (SELECT 1 FROM semifinished_lenses_price) OR EXISTS (SELECT 1 FROM semifinished_lenses_sku)
                           THEN 1 ELSE 0 END`,
  `CREATE TRIGGER semifinished_lenses_price_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON semifinished_lenses_price
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('semifinished-lenses')`,
  `CREATE TRIGGER semifinished_lenses_sku_catalog_stale AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON semifinished_lenses_sku
         FOR EACH STATEMENT EXECUTE FUNCTION catalog_mark_stale('semifinished-lenses')`,
]
