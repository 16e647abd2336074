import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * API keys for service-to-service clients. Only the SHA-256 of a key is
 * stored (unique: each request looks its key up by it); `prefix` is the
 * start of the key, shown in listings so a user can tell keys apart.
 */
export class ApiKeys1764979200020 implements MigrationInterface {
  name = 'ApiKeys1764979200020';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "api_keys" (
        "id" uuid PRIMARY KEY,
        "user_id" varchar(128) NOT NULL,
        "name" varchar(100) NOT NULL,
        "prefix" varchar(16) NOT NULL,
        "key_hash" bytea NOT NULL,
        "role" varchar(16) NOT NULL,
        "created_at" timestamptz NOT NULL DEFAULT now(),
        "expires_at" timestamptz,
        "last_used_at" timestamptz,
        "revoked_at" timestamptz
      )
    `);
    await queryRunner.query(`CREATE UNIQUE INDEX "idx_api_keys_key_hash" ON "api_keys" ("key_hash")`);
    await queryRunner.query(`CREATE INDEX "idx_api_keys_user_created" ON "api_keys" ("user_id", "created_at")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "api_keys"`);
  }
}
