import { MigrationInterface, QueryRunner } from 'typeorm';

/** A run may end `cancelled` (POST /api/chat/runs/:run_id/cancel). */
export class CancelledRuns1764979200000 implements MigrationInterface {
  name = 'CancelledRuns1764979200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_runs" DROP CONSTRAINT IF EXISTS "chat_runs_status_check"`);
    await queryRunner.query(
      `ALTER TABLE "chat_runs" ADD CONSTRAINT "chat_runs_status_check" CHECK ("status" IN ('running', 'done', 'error', 'interrupted', 'abandoned', 'cancelled'))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`UPDATE "chat_runs" SET "status" = 'error' WHERE "status" = 'cancelled'`);
    await queryRunner.query(`ALTER TABLE "chat_runs" DROP CONSTRAINT IF EXISTS "chat_runs_status_check"`);
    await queryRunner.query(`ALTER TABLE "chat_runs" ADD CONSTRAINT "chat_runs_status_check" CHECK ("status" IN ('running', 'done', 'error', 'interrupted', 'abandoned'))`);
  }
}
