import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Ingest jobs. An upload is stored here (`content`) before it is answered
 * with 202, so an acknowledged upload survives a restart of any instance or
 * of Redis; the queue (BullMQ on Redis) only schedules the work. Status,
 * progress and error are written by the worker; `content` is cleared once
 * the job has ended.
 */
export class IngestJobs1764979200040 implements MigrationInterface {
  name = 'IngestJobs1764979200040';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "knowledge_ingest_jobs" (
        "id" uuid PRIMARY KEY,
        "filename" varchar(255) NOT NULL,
        "size_bytes" integer NOT NULL CHECK ("size_bytes" >= 0),
        "content" bytea,
        "created_by" varchar(128) NOT NULL,
        "status" varchar(16) NOT NULL DEFAULT 'queued' CHECK ("status" IN ('queued', 'active', 'completed', 'failed')),
        "stage" varchar(16),
        "progress_done" integer NOT NULL DEFAULT 0,
        "progress_total" integer NOT NULL DEFAULT 0,
        "attempts" integer NOT NULL DEFAULT 0,
        "error_code" varchar(64),
        "error_message" text,
        "document_id" uuid REFERENCES "knowledge_documents" ("id") ON DELETE SET NULL,
        "duplicate" boolean,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now(),
        "finished_at" timestamptz
      )`);
    await queryRunner.query(`CREATE INDEX "idx_knowledge_ingest_jobs_created" ON "knowledge_ingest_jobs" ("created_at" DESC, "id")`);
    await queryRunner.query(`CREATE INDEX "idx_knowledge_ingest_jobs_unfinished" ON "knowledge_ingest_jobs" ("created_at") WHERE "status" IN ('queued', 'active')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "knowledge_ingest_jobs"`);
  }
}
