import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runs of the LangGraph Server API queued behind a thread's running run
 * (`multitask_strategy: "enqueue"`): known by every instance (`status:
 * pending`) until the instance that took them starts them, in the order they
 * came. That instance beats `heartbeat_at` while it waits; a row whose
 * heartbeat stopped belongs to an instance that died. They go with their session.
 */
export class LangGraphPendingRuns1764979200620 implements MigrationInterface {
  name = 'LangGraphPendingRuns1764979200620';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "langgraph_pending_runs" (
        "run_id" uuid PRIMARY KEY,
        "session_id" uuid NOT NULL REFERENCES "chat_sessions" ("id") ON DELETE CASCADE,
        "user_id" varchar(128) NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT clock_timestamp(),
        "heartbeat_at" timestamptz NOT NULL DEFAULT clock_timestamp()
      )`);
    await queryRunner.query(`CREATE INDEX "idx_langgraph_pending_runs_session" ON "langgraph_pending_runs" ("session_id", "created_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "langgraph_pending_runs"`);
  }
}
