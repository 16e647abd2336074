import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * An API key acts with the groups of the token that created it (issue 23):
 * they are stored with the key at its creation. Keys created before this
 * migration have none.
 */
export class ApiKeyGroups1764979200210 implements MigrationInterface {
  name = 'ApiKeyGroups1764979200210';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" ADD COLUMN "groups" text[] NOT NULL DEFAULT '{}'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "api_keys" DROP COLUMN "groups"`);
  }
}
