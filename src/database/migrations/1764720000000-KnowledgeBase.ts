import { MigrationInterface, QueryRunner } from 'typeorm';

export class KnowledgeBase1764720000000 implements MigrationInterface {
  name = 'KnowledgeBase1764720000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "knowledge_documents" (
        "id" uuid PRIMARY KEY,
        "filename" varchar(255) NOT NULL,
        "content_type" varchar(100) NOT NULL,
        "size_bytes" integer NOT NULL CHECK ("size_bytes" >= 0),
        "content_sha256" char(64) NOT NULL,
        "page_count" integer,
        "chunk_count" integer NOT NULL DEFAULT 0,
        "created_by" varchar(128) NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "uq_knowledge_documents_sha256" UNIQUE ("content_sha256")
      )`);
    // Level 1 is the largest parent; the highest level holds the leaves that retrieval ranks.
    // Embeddings are float32 little-endian bytes: compact, and loaded into memory without parsing.
    await queryRunner.query(`
      CREATE TABLE "knowledge_chunks" (
        "id" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        "document_id" uuid NOT NULL REFERENCES "knowledge_documents" ("id") ON DELETE CASCADE,
        "parent_id" bigint REFERENCES "knowledge_chunks" ("id") ON DELETE CASCADE,
        "level" smallint NOT NULL CHECK ("level" >= 1),
        "is_leaf" boolean NOT NULL,
        "ordinal" integer NOT NULL,
        "page" integer,
        "text" text NOT NULL,
        "search_vector" tsvector NOT NULL,
        "embedding" bytea
      )`);
    await queryRunner.query(`CREATE INDEX "idx_knowledge_chunks_search" ON "knowledge_chunks" USING GIN ("search_vector") WHERE "is_leaf"`);
    await queryRunner.query(`CREATE INDEX "idx_knowledge_chunks_document" ON "knowledge_chunks" ("document_id", "level", "ordinal")`);
    await queryRunner.query(`CREATE INDEX "idx_knowledge_chunks_parent" ON "knowledge_chunks" ("parent_id")`);
    // Bumped by every ingest and delete: instances reload their in-memory dense index when it moves.
    await queryRunner.query(`CREATE TABLE "knowledge_index_state" ("id" smallint PRIMARY KEY CHECK ("id" = 1), "version" bigint NOT NULL)`);
    await queryRunner.query(`INSERT INTO "knowledge_index_state" ("id", "version") VALUES (1, 0)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "knowledge_index_state"`);
    await queryRunner.query(`DROP TABLE "knowledge_chunks"`);
    await queryRunner.query(`DROP TABLE "knowledge_documents"`);
  }
}
