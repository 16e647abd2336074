import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Finds the leaves of bulk loads whose HNSW index was never built (a dense
 * epoch past `knowledge_index_state.dense_epoch`) with an index lookup
 * instead of a scan of every leaf, so that instances can check for them
 * often (see DenseRecall.finishPendingBulkLoads).
 */
export class DenseEpochIndex1764979200050 implements MigrationInterface {
  name = 'DenseEpochIndex1764979200050';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "idx_knowledge_chunks_dense_epoch" ON "knowledge_chunks" ("dense_epoch") WHERE "is_leaf"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "idx_knowledge_chunks_dense_epoch"`);
  }
}
