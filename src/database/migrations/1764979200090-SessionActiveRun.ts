import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A session names its run in flight (`SessionInfo.active_run`) in its own
 * row: the chat module sets it in the transaction that claims the run and
 * clears it in the one that ends it, both moving the owner's list version,
 * so the session list is cached with it and the session module reads no
 * other module's table. Backfilled from the runs running now.
 */
export class SessionActiveRun1764979200090 implements MigrationInterface {
  name = 'SessionActiveRun1764979200090';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_sessions" ADD COLUMN "active_run_id" uuid, ADD COLUMN "active_run_started_at" timestamptz`);
    await queryRunner.query(`
      UPDATE "chat_sessions" s SET "active_run_id" = r."id", "active_run_started_at" = r."created_at"
        FROM "chat_runs" r WHERE r."session_id" = s."id" AND r."status" = 'running'`);
    // Lists cached before this migration carry no run in flight: their users' versions move.
    await queryRunner.query(`UPDATE "chat_user_versions" SET "version" = nextval('chat_cache_version_seq')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_sessions" DROP COLUMN "active_run_started_at", DROP COLUMN "active_run_id"`);
  }
}
