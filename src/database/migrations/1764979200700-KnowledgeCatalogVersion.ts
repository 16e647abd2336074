import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The version of the collections and their access lists: one row, moved by
 * every statement that changes either table (a trigger, so no write path can
 * forget it), in that statement's transaction. A read replica serves the
 * collection list only when it holds this version (and the knowledge base's,
 * for the document counts) at least as new as the primary's.
 */
export class KnowledgeCatalogVersion1764979200700 implements MigrationInterface {
  name = 'KnowledgeCatalogVersion1764979200700';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "knowledge_catalog_version" (
        "id" smallint PRIMARY KEY DEFAULT 1 CHECK ("id" = 1),
        "version" bigint NOT NULL DEFAULT 0
      )`);
    await queryRunner.query(`INSERT INTO "knowledge_catalog_version" ("id", "version") VALUES (1, 0)`);
    await queryRunner.query(`
      CREATE FUNCTION "knowledge_catalog_bump"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        UPDATE "knowledge_catalog_version" SET "version" = "version" + 1 WHERE "id" = 1;
        RETURN NULL;
      END $$`);
    for (const table of ['knowledge_collections', 'knowledge_collection_access']) {
      await queryRunner.query(`
        CREATE TRIGGER "trg_${table}_catalog_version" AFTER INSERT OR UPDATE OR DELETE ON "${table}"
          FOR EACH STATEMENT EXECUTE FUNCTION "knowledge_catalog_bump"()`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['knowledge_collections', 'knowledge_collection_access']) {
      await queryRunner.query(`DROP TRIGGER "trg_${table}_catalog_version" ON "${table}"`);
    }
    await queryRunner.query(`DROP FUNCTION "knowledge_catalog_bump"()`);
    await queryRunner.query(`DROP TABLE "knowledge_catalog_version"`);
  }
}
