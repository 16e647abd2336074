import { MigrationInterface, QueryRunner } from 'typeorm';

export class ChatRuns1764633600000 implements MigrationInterface {
  name = 'ChatRuns1764633600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // No foreign key to chat_sessions: a new session's row is written when its first turn commits.
    await queryRunner.query(`
      CREATE TABLE "chat_runs" (
        "id" uuid PRIMARY KEY,
        "session_id" uuid NOT NULL,
        "user_id" varchar(128) NOT NULL,
        "status" varchar(16) NOT NULL CHECK ("status" IN ('running', 'done', 'error', 'interrupted', 'abandoned')),
        "error" text,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "heartbeat_at" timestamptz NOT NULL DEFAULT now(),
        "finished_at" timestamptz
      )`);
    // One run in flight per session, enforced by the database for every instance.
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_chat_runs_one_running_per_session" ON "chat_runs" ("session_id") WHERE "status" = 'running'`);
    await queryRunner.query(`CREATE INDEX "idx_chat_runs_finished" ON "chat_runs" ("finished_at") WHERE "finished_at" IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "chat_runs"`);
  }
}
