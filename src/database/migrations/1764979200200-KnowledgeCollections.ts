import { MigrationInterface, QueryRunner } from 'typeorm';

/** The `default` collection's well-known id (DEFAULT_COLLECTION_ID in src/knowledge/collections/collection.ts). */
const DEFAULT_ID = '00000000-0000-4000-8000-000000000001';

/**
 * Knowledge collections with access lists (issue 23). The knowledge base that
 * was becomes the collection `default`, readable by everyone and written by
 * administrators: every document, chunk and ingest job stored before this
 * migration lands in it.
 *
 * Every row of retrieval knows its collection without a join:
 * `knowledge_chunks.collection_id` repeats its document's, kept equal by a
 * foreign key on (document_id, collection_id), and indexed on the leaves, so
 * that recall (full text, pgvector, the in-memory index) can filter by it.
 * The documents' and chunks' columns default to `default`, so rows written
 * without it (older tools, plain SQL) stay where they always were.
 *
 * The documents' foreign key to their collection is checked at commit
 * (DEFERRABLE INITIALLY DEFERRED): an ingest then locks its collection's row
 * after its job's row, the order a collection delete takes them in
 * (CollectionsRepository.deleteCollection), so the two never deadlock.
 * Identical content is stored once per collection, no longer once overall.
 */
export class KnowledgeCollections1764979200200 implements MigrationInterface {
  name = 'KnowledgeCollections1764979200200';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "knowledge_collections" (
        "id" uuid PRIMARY KEY,
        "name" varchar(100) NOT NULL,
        "description" varchar(2000) NOT NULL DEFAULT '',
        "owner" varchar(128),
        "created_at" timestamptz NOT NULL DEFAULT clock_timestamp(),
        "updated_at" timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`CREATE INDEX "idx_knowledge_collections_created" ON "knowledge_collections" ("created_at", "id")`);
    await queryRunner.query(`CREATE INDEX "idx_knowledge_collections_owner" ON "knowledge_collections" ("owner")`);
    await queryRunner.query(`
      CREATE TABLE "knowledge_collection_access" (
        "collection_id" uuid NOT NULL REFERENCES "knowledge_collections" ("id") ON DELETE CASCADE,
        "principal" varchar(140) NOT NULL CHECK ("principal" = 'everyone' OR "principal" LIKE 'user:_%' OR "principal" LIKE 'group:_%'),
        "role" varchar(8) NOT NULL CHECK ("role" IN ('viewer', 'editor', 'owner')),
        PRIMARY KEY ("collection_id", "principal")
      )`);
    // What a request reads: the entries of the caller's principals (everyone, user:<id>, group:<name>...).
    await queryRunner.query(`CREATE INDEX "idx_knowledge_collection_access_principal" ON "knowledge_collection_access" ("principal", "collection_id")`);
    await queryRunner.query(
      `INSERT INTO "knowledge_collections" ("id", "name", "description", "owner", "created_at", "updated_at")
       VALUES ($1, 'default', 'The shared knowledge base: readable by everyone, written by administrators', NULL, '2000-01-01T00:00:00Z', '2000-01-01T00:00:00Z')`,
      [DEFAULT_ID],
    );
    await queryRunner.query(`INSERT INTO "knowledge_collection_access" ("collection_id", "principal", "role") VALUES ($1, 'everyone', 'viewer')`, [DEFAULT_ID]);

    // Documents: in a collection (instant: a constant default), identical content once per collection.
    await queryRunner.query(
      `ALTER TABLE "knowledge_documents" ADD COLUMN "collection_id" uuid NOT NULL DEFAULT '${DEFAULT_ID}'
         REFERENCES "knowledge_collections" ("id") ON DELETE CASCADE DEFERRABLE INITIALLY DEFERRED`,
    );
    await queryRunner.query(`ALTER TABLE "knowledge_documents" DROP CONSTRAINT "uq_knowledge_documents_sha256"`);
    await queryRunner.query(`ALTER TABLE "knowledge_documents" ADD CONSTRAINT "uq_knowledge_documents_collection_sha256" UNIQUE ("collection_id", "content_sha256")`);
    await queryRunner.query(`ALTER TABLE "knowledge_documents" ADD CONSTRAINT "uq_knowledge_documents_id_collection" UNIQUE ("id", "collection_id")`);
    // Listings are per collection now; idx_knowledge_documents_created (all documents, newest first) stays for DeletableIngests' down.
    await queryRunner.query(`CREATE INDEX "idx_knowledge_documents_collection_created" ON "knowledge_documents" ("collection_id", "created_at" DESC, "id" DESC)`);

    // Chunks: their document's collection, denormalized for recall's filter and kept equal by the foreign key.
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" ADD COLUMN "collection_id" uuid NOT NULL DEFAULT '${DEFAULT_ID}'`);
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" DROP CONSTRAINT "knowledge_chunks_document_id_fkey"`);
    await queryRunner.query(
      `ALTER TABLE "knowledge_chunks" ADD CONSTRAINT "fk_knowledge_chunks_document_collection" FOREIGN KEY ("document_id", "collection_id")
         REFERENCES "knowledge_documents" ("id", "collection_id") ON DELETE CASCADE ON UPDATE CASCADE`,
    );
    await queryRunner.query(`CREATE INDEX "idx_knowledge_chunks_collection" ON "knowledge_chunks" ("collection_id", "id") WHERE "is_leaf"`);

    // Ingest jobs: the collection their document goes to; deleting the collection deletes them.
    await queryRunner.query(`ALTER TABLE "knowledge_ingest_jobs" ADD COLUMN "collection_id" uuid NOT NULL DEFAULT '${DEFAULT_ID}'`);
    await queryRunner.query(`ALTER TABLE "knowledge_ingest_jobs" ALTER COLUMN "collection_id" DROP DEFAULT`);
    await queryRunner.query(
      `ALTER TABLE "knowledge_ingest_jobs" ADD CONSTRAINT "fk_knowledge_ingest_jobs_collection" FOREIGN KEY ("collection_id") REFERENCES "knowledge_collections" ("id") ON DELETE CASCADE`,
    );
    await queryRunner.query(`CREATE INDEX "idx_knowledge_ingest_jobs_collection" ON "knowledge_ingest_jobs" ("collection_id", "created_at" DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Back to one knowledge base: the documents of other collections (and their chunks and jobs) go.
    await queryRunner.query(`DELETE FROM "knowledge_ingest_jobs" WHERE "collection_id" <> $1`, [DEFAULT_ID]);
    await queryRunner.query(`DELETE FROM "knowledge_documents" WHERE "collection_id" <> $1`, [DEFAULT_ID]);
    await queryRunner.query(`DROP INDEX "idx_knowledge_ingest_jobs_collection"`);
    await queryRunner.query(`ALTER TABLE "knowledge_ingest_jobs" DROP COLUMN "collection_id"`);
    await queryRunner.query(`DROP INDEX "idx_knowledge_chunks_collection"`);
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" DROP CONSTRAINT "fk_knowledge_chunks_document_collection"`);
    await queryRunner.query(
      `ALTER TABLE "knowledge_chunks" ADD CONSTRAINT "knowledge_chunks_document_id_fkey" FOREIGN KEY ("document_id") REFERENCES "knowledge_documents" ("id") ON DELETE CASCADE`,
    );
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" DROP COLUMN "collection_id"`);
    await queryRunner.query(`DROP INDEX "idx_knowledge_documents_collection_created"`);
    await queryRunner.query(`ALTER TABLE "knowledge_documents" DROP CONSTRAINT "uq_knowledge_documents_id_collection"`);
    await queryRunner.query(`ALTER TABLE "knowledge_documents" DROP CONSTRAINT "uq_knowledge_documents_collection_sha256"`);
    await queryRunner.query(`ALTER TABLE "knowledge_documents" ADD CONSTRAINT "uq_knowledge_documents_sha256" UNIQUE ("content_sha256")`);
    await queryRunner.query(`ALTER TABLE "knowledge_documents" DROP COLUMN "collection_id"`);
    await queryRunner.query(`DROP TABLE "knowledge_collection_access"`);
    await queryRunner.query(`DROP TABLE "knowledge_collections"`);
  }
}
