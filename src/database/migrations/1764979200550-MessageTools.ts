import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A stored answer names the tools its turn ran (`MessageInfo.tools`), in the
 * order they were first called; written when the turn commits. Older
 * messages name none.
 */
export class MessageTools1764979200550 implements MigrationInterface {
  name = 'MessageTools1764979200550';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_messages" ADD COLUMN "tools" jsonb NOT NULL DEFAULT '[]'::jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_messages" DROP COLUMN "tools"`);
  }
}
