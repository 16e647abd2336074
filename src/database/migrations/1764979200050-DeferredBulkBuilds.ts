import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Bulk loads that leave their HNSW index build to a later one (a folder
 * uploaded as many jobs builds once, after the last). An index on
 * `dense_epoch` finds leaves no index covers yet (an epoch past
 * `knowledge_index_state.dense_epoch`) with a lookup instead of a scan, so
 * that instances can check for them often; `bulk_loaded_at` (the last such
 * load's commit) and `bulk_pending_since` (the first one's since the last
 * build) tell when a load has ended or waited long enough to be built (see
 * DenseRecall.finishPendingBulkLoads).
 */
export class DeferredBulkBuilds1764979200050 implements MigrationInterface {
  name = 'DeferredBulkBuilds1764979200050';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE INDEX "idx_knowledge_chunks_dense_epoch" ON "knowledge_chunks" ("dense_epoch") WHERE "is_leaf"`);
    await queryRunner.query(`ALTER TABLE "knowledge_index_state" ADD COLUMN "bulk_loaded_at" timestamptz, ADD COLUMN "bulk_pending_since" timestamptz`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "knowledge_index_state" DROP COLUMN "bulk_pending_since", DROP COLUMN "bulk_loaded_at"`);
    await queryRunner.query(`DROP INDEX "idx_knowledge_chunks_dense_epoch"`);
  }
}
