import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What web clients need to point at messages and find running runs:
 *
 * - `chat_messages.public_id`: the message's stable id on the wire (a UUID
 *   the database draws at insert; existing rows get one here). The bigint
 *   `id` stays internal.
 * - `chat_messages.run_id`: the run that stored the message (no foreign key:
 *   finished runs may be purged while their messages stay).
 * - `chat_messages.status`: `complete`, `cancelled` or `failed`; existing rows
 *   are `complete`.
 * - `chat_messages.feedback_*`: the owner's rating and comment, all set or
 *   all null.
 * - an index for a user's running runs (`SessionInfo.active_run`, read fresh
 *   with every session list).
 */
export class ClientMessageFields1764979200005 implements MigrationInterface {
  name = 'ClientMessageFields1764979200005';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "chat_messages"
        ADD COLUMN "public_id" uuid NOT NULL DEFAULT gen_random_uuid(),
        ADD COLUMN "run_id" uuid,
        ADD COLUMN "status" varchar(16) NOT NULL DEFAULT 'complete'
          CONSTRAINT "chk_chat_messages_status" CHECK ("status" IN ('complete', 'cancelled', 'failed')),
        ADD COLUMN "feedback_rating" varchar(8)
          CONSTRAINT "chk_chat_messages_feedback_rating" CHECK ("feedback_rating" IN ('up', 'down')),
        ADD COLUMN "feedback_comment" text,
        ADD COLUMN "feedback_updated_at" timestamptz,
        ADD CONSTRAINT "chk_chat_messages_feedback_whole" CHECK (
          ("feedback_rating" IS NULL AND "feedback_comment" IS NULL AND "feedback_updated_at" IS NULL)
          OR ("feedback_rating" IS NOT NULL AND "feedback_updated_at" IS NOT NULL))`);
    await queryRunner.query(`CREATE UNIQUE INDEX "uq_chat_messages_public_id" ON "chat_messages" ("public_id")`);
    await queryRunner.query(`CREATE INDEX "idx_chat_runs_user_running" ON "chat_runs" ("user_id") WHERE "status" = 'running'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "idx_chat_runs_user_running"`);
    await queryRunner.query(`DROP INDEX "uq_chat_messages_public_id"`);
    await queryRunner.query(`
      ALTER TABLE "chat_messages"
        DROP CONSTRAINT "chk_chat_messages_feedback_whole",
        DROP COLUMN "feedback_updated_at",
        DROP COLUMN "feedback_comment",
        DROP COLUMN "feedback_rating",
        DROP COLUMN "status",
        DROP COLUMN "run_id",
        DROP COLUMN "public_id"`);
  }
}
