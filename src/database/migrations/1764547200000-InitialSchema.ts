import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1764547200000 implements MigrationInterface {
  name = 'InitialSchema1764547200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "chat_sessions" (
        "id" uuid PRIMARY KEY,
        "user_id" varchar(128) NOT NULL,
        "title" varchar(200) NOT NULL DEFAULT '',
        "metadata" jsonb NOT NULL DEFAULT '{}'::jsonb,
        "message_count" integer NOT NULL DEFAULT 0 CHECK ("message_count" >= 0),
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "updated_at" timestamptz NOT NULL DEFAULT now()
      )`);
    // A user's sessions, newest first, with the id as a tie-breaker for keyset pagination.
    await queryRunner.query(`CREATE INDEX "idx_chat_sessions_user_updated" ON "chat_sessions" ("user_id", "updated_at" DESC, "id" DESC)`);
    await queryRunner.query(`
      CREATE TABLE "chat_messages" (
        "id" bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        "session_id" uuid NOT NULL REFERENCES "chat_sessions" ("id") ON DELETE CASCADE,
        "seq" integer NOT NULL CHECK ("seq" >= 1),
        "type" varchar(16) NOT NULL CHECK ("type" IN ('human', 'ai', 'system')),
        "content" text NOT NULL,
        "rag_trace" jsonb,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT "uq_chat_messages_session_seq" UNIQUE ("session_id", "seq")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "chat_messages"`);
    await queryRunner.query(`DROP TABLE "chat_sessions"`);
  }
}
