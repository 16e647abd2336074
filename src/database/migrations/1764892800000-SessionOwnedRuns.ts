import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sessions own everything about them, and cached reads can be checked
 * against the database from any instance:
 *
 * - A session's row is written when its first turn starts, so runs can
 *   reference it: deleting a session deletes its runs, and deleting a run
 *   deletes its LangGraph checkpoints (a paused task's thread is the id of
 *   the run that paused), so no row outlives its session.
 * - `chat_sessions.version` marks the state of a transcript and
 *   `chat_user_versions.version` that of a user's session list; both take a
 *   new value from one sequence in the transaction of every change, and a
 *   cached copy is served only while its version is current.
 */
export class SessionOwnedRuns1764892800000 implements MigrationInterface {
  name = 'SessionOwnedRuns1764892800000';

  async up(queryRunner: QueryRunner): Promise<void> {
    // One sequence for every version: a session deleted and created again under the same id never
    // repeats a version its earlier life had, so no cached copy of the old one can pass for current.
    await queryRunner.query(`CREATE SEQUENCE "chat_cache_version_seq"`);
    await queryRunner.query(`ALTER TABLE "chat_sessions" ADD COLUMN "version" bigint NOT NULL DEFAULT nextval('chat_cache_version_seq')`);
    await queryRunner.query(`
      CREATE TABLE "chat_user_versions" (
        "user_id" varchar(128) PRIMARY KEY,
        "version" bigint NOT NULL DEFAULT nextval('chat_cache_version_seq')
      )`);
    // Runs of sessions that never got a row (a first turn cut off before it committed) name nothing that exists.
    await queryRunner.query(`DELETE FROM "chat_runs" r WHERE NOT EXISTS (SELECT 1 FROM "chat_sessions" s WHERE s."id" = r."session_id")`);
    await queryRunner.query(`CREATE INDEX "idx_chat_runs_session" ON "chat_runs" ("session_id")`);
    await queryRunner.query(`
      ALTER TABLE "chat_runs" ADD CONSTRAINT "fk_chat_runs_session"
        FOREIGN KEY ("session_id") REFERENCES "chat_sessions" ("id") ON DELETE CASCADE`);
    await queryRunner.query(`
      CREATE FUNCTION "chat_runs_forget_checkpoints"() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM "checkpoint_writes" WHERE "thread_id" = OLD."id"::text;
        DELETE FROM "checkpoint_blobs" WHERE "thread_id" = OLD."id"::text;
        DELETE FROM "checkpoints" WHERE "thread_id" = OLD."id"::text;
        RETURN OLD;
      END $$`);
    await queryRunner.query(`
      CREATE TRIGGER "trg_chat_runs_forget_checkpoints" AFTER DELETE ON "chat_runs"
        FOR EACH ROW EXECUTE FUNCTION "chat_runs_forget_checkpoints"()`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER "trg_chat_runs_forget_checkpoints" ON "chat_runs"`);
    await queryRunner.query(`DROP FUNCTION "chat_runs_forget_checkpoints"()`);
    await queryRunner.query(`ALTER TABLE "chat_runs" DROP CONSTRAINT "fk_chat_runs_session"`);
    await queryRunner.query(`DROP INDEX "idx_chat_runs_session"`);
    await queryRunner.query(`DROP TABLE "chat_user_versions"`);
    await queryRunner.query(`ALTER TABLE "chat_sessions" DROP COLUMN "version"`);
    await queryRunner.query(`DROP SEQUENCE "chat_cache_version_seq"`);
  }
}
