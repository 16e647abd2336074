import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A run keeps the message that started it, so a cancel that cannot reach the
 * instance running it can still keep that message (marked cancelled) itself.
 */
export class RunMessages1764979200010 implements MigrationInterface {
  name = 'RunMessages1764979200010';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_runs" ADD COLUMN "message" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "chat_runs" DROP COLUMN "message"`);
  }
}
