import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trigger that deletes an abandoned run's checkpoints takes the tables
 * in the order the checkpointer's own thread delete does (blobs, checkpoints,
 * writes). In the opposite order the two deadlocked when a run was given up
 * while its instance deleted the thread, and the sweep's session locks were
 * held until PostgreSQL's deadlock check broke the circle.
 */
export class CheckpointForgetLockOrder1764979200100 implements MigrationInterface {
  name = 'CheckpointForgetLockOrder1764979200100';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "chat_runs_forget_abandoned_checkpoints"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM "checkpoint_blobs" WHERE "thread_id" = NEW."id"::text;
        DELETE FROM "checkpoints" WHERE "thread_id" = NEW."id"::text;
        DELETE FROM "checkpoint_writes" WHERE "thread_id" = NEW."id"::text;
        RETURN NEW;
      END $$`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE OR REPLACE FUNCTION "chat_runs_forget_abandoned_checkpoints"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM "checkpoint_writes" WHERE "thread_id" = NEW."id"::text;
        DELETE FROM "checkpoint_blobs" WHERE "thread_id" = NEW."id"::text;
        DELETE FROM "checkpoints" WHERE "thread_id" = NEW."id"::text;
        RETURN NEW;
      END $$`);
  }
}
