import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The LangGraph checkpoint tables, created by the saver's own versioned
 * setup so they match the library exactly; kept under TypeORM migrations so
 * every schema change of the service goes through one mechanism.
 */
export class LangGraphCheckpoints1764633600001 implements MigrationInterface {
  name = 'LangGraphCheckpoints1764633600001';
  // setup() reads its own version table and must not run inside this migration's transaction.
  transaction = false as const;

  async up(queryRunner: QueryRunner): Promise<void> {
    const pool = (queryRunner.connection.driver as unknown as { master: pg.Pool }).master;
    await new PostgresSaver(pool).setup();
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const table of ['checkpoint_writes', 'checkpoint_blobs', 'checkpoints', 'checkpoint_migrations']) {
      await queryRunner.query(`DROP TABLE IF EXISTS "${table}"`);
    }
  }
}
