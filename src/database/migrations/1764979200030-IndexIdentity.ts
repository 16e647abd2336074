import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Index identity: the embedding space (provider, model, dimensions) and the
 * tokenizer version each leaf was indexed with, so that a change of
 * configuration cannot silently mix two vector spaces or two tokenizations.
 * `knowledge_index_state.space_id` is the space the knowledge base is in;
 * leaves stored before this migration have none and are claimed by the first
 * instance that starts (see index-identity.ts).
 *
 * `dense_epoch` serves bulk loads with pgvector: leaves loaded in bulk get the
 * next epoch, which the current HNSW index does not cover (so loading them
 * does not update its graph row by row); an index over the next epoch is
 * then built concurrently and swapped in (see pgvector-store.ts).
 */
export class IndexIdentity1764979200030 implements MigrationInterface {
  name = 'IndexIdentity1764979200030';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "knowledge_embedding_spaces" (
        "id" smallint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        "provider" varchar(64) NOT NULL,
        "model" varchar(200) NOT NULL,
        "dimensions" integer NOT NULL CHECK ("dimensions" > 0),
        "tokenizer_version" varchar(64) NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "uq_knowledge_embedding_spaces" UNIQUE ("provider", "model", "dimensions", "tokenizer_version")
      )`);
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" ADD COLUMN "space_id" smallint REFERENCES "knowledge_embedding_spaces" ("id")`);
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" ADD COLUMN "dense_epoch" integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE "knowledge_index_state" ADD COLUMN "space_id" smallint REFERENCES "knowledge_embedding_spaces" ("id")`);
    await queryRunner.query(`ALTER TABLE "knowledge_index_state" ADD COLUMN "dense_epoch" integer NOT NULL DEFAULT 0`);
    // Names this deployment's queues on a Redis that several deployments share (see ingest-jobs.service.ts).
    await queryRunner.query(`ALTER TABLE "knowledge_index_state" ADD COLUMN "deployment_id" uuid NOT NULL DEFAULT gen_random_uuid()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "knowledge_index_state" DROP COLUMN "deployment_id", DROP COLUMN "dense_epoch", DROP COLUMN "space_id"`);
    await queryRunner.query(`ALTER TABLE "knowledge_chunks" DROP COLUMN "dense_epoch", DROP COLUMN "space_id"`);
    await queryRunner.query(`DROP TABLE "knowledge_embedding_spaces"`);
  }
}
