import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run given up as abandoned (its instance died or stopped answering) loses
 * its LangGraph checkpoints in the transaction that gives it up, wherever
 * that happens (the session's next turn, a follower, the periodic sweep):
 * only a run paused for the user (`interrupted`) keeps a checkpoint to
 * resume from. A paused task resumed by the abandoned run keeps its own
 * thread (the id of the run that paused), so the user can still answer it.
 */
export class AbandonedRunsForgetCheckpoints1764979200070 implements MigrationInterface {
  name = 'AbandonedRunsForgetCheckpoints1764979200070';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE FUNCTION "chat_runs_forget_abandoned_checkpoints"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM "checkpoint_writes" WHERE "thread_id" = NEW."id"::text;
        DELETE FROM "checkpoint_blobs" WHERE "thread_id" = NEW."id"::text;
        DELETE FROM "checkpoints" WHERE "thread_id" = NEW."id"::text;
        RETURN NEW;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER "trg_chat_runs_forget_abandoned_checkpoints" AFTER UPDATE OF "status" ON "chat_runs"
        FOR EACH ROW WHEN (NEW."status" = 'abandoned' AND OLD."status" IS DISTINCT FROM 'abandoned')
        EXECUTE FUNCTION "chat_runs_forget_abandoned_checkpoints"()`);
    // Runs given up before this migration kept theirs.
    await queryRunner.query(`
      DELETE FROM "checkpoint_writes" w USING "chat_runs" r WHERE r."status" = 'abandoned' AND w."thread_id" = r."id"::text`);
    await queryRunner.query(`
      DELETE FROM "checkpoint_blobs" b USING "chat_runs" r WHERE r."status" = 'abandoned' AND b."thread_id" = r."id"::text`);
    await queryRunner.query(`
      DELETE FROM "checkpoints" c USING "chat_runs" r WHERE r."status" = 'abandoned' AND c."thread_id" = r."id"::text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "trg_chat_runs_forget_abandoned_checkpoints" ON "chat_runs"`);
    await queryRunner.query(`DROP FUNCTION "chat_runs_forget_abandoned_checkpoints"()`);
  }
}
