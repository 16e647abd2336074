import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A delete during an ingest wins: an ingest job ends `cancelled` when its
 * document is deleted before the job ended (see IngestJobs.deleteDocument).
 * Listing documents reads stored figures: `leaf_count` is written with the
 * document (as `chunk_count` is), backfilled here from its chunks; pages are
 * read newest first through an index on (created_at, id).
 */
export class DeletableIngests1764979200080 implements MigrationInterface {
  name = 'DeletableIngests1764979200080';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "knowledge_ingest_jobs" DROP CONSTRAINT "knowledge_ingest_jobs_status_check"`);
    await queryRunner.query(
      `ALTER TABLE "knowledge_ingest_jobs" ADD CONSTRAINT "knowledge_ingest_jobs_status_check" CHECK ("status" IN ('queued', 'active', 'completed', 'failed', 'cancelled'))`,
    );
    await queryRunner.query(`ALTER TABLE "knowledge_documents" ADD COLUMN "leaf_count" integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`
      UPDATE "knowledge_documents" d SET "leaf_count" = c.n
        FROM (SELECT "document_id", count(*)::int AS n FROM "knowledge_chunks" WHERE "is_leaf" GROUP BY "document_id") c
       WHERE c."document_id" = d."id"`);
    await queryRunner.query(`CREATE INDEX "idx_knowledge_documents_created" ON "knowledge_documents" ("created_at" DESC, "id" DESC)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "idx_knowledge_documents_created"`);
    await queryRunner.query(`ALTER TABLE "knowledge_documents" DROP COLUMN "leaf_count"`);
    await queryRunner.query(`UPDATE "knowledge_ingest_jobs" SET "status" = 'completed' WHERE "status" = 'cancelled'`);
    await queryRunner.query(`ALTER TABLE "knowledge_ingest_jobs" DROP CONSTRAINT "knowledge_ingest_jobs_status_check"`);
    await queryRunner.query(
      `ALTER TABLE "knowledge_ingest_jobs" ADD CONSTRAINT "knowledge_ingest_jobs_status_check" CHECK ("status" IN ('queued', 'active', 'completed', 'failed'))`,
    );
  }
}
