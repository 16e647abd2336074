import { DataSource, EntityManager } from 'typeorm';
import { sqlRows } from '../../database/sql.js';
import type { EmbeddingSpace } from './index-identity.js';

/**
 * The knowledge base's one state row (`knowledge_index_state`: its version,
 * embedding space, dense epoch, bulk-load bookkeeping, deployment id) and
 * the embedding spaces (`knowledge_embedding_spaces`). Methods that take an
 * EntityManager run in the caller's transaction.
 */
export class IndexStateRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The id of `space`, registered when new; safe when instances start together. */
  async registerSpace(space: EmbeddingSpace, db: DataSource | EntityManager = this.dataSource): Promise<number> {
    const params = [space.provider, space.model, space.dimensions, space.tokenizer_version];
    const [inserted] = await sqlRows<{ id: number }>(
      db,
      `INSERT INTO knowledge_embedding_spaces (provider, model, dimensions, tokenizer_version) VALUES ($1, $2, $3, $4)
     ON CONFLICT ON CONSTRAINT uq_knowledge_embedding_spaces DO NOTHING RETURNING id`,
      params,
    );
    if (inserted) return Number(inserted.id);
    const [existing] = await sqlRows<{ id: number }>(
      db,
      'SELECT id FROM knowledge_embedding_spaces WHERE provider = $1 AND model = $2 AND dimensions = $3 AND tokenizer_version = $4',
      params,
    );
    return Number(existing.id);
  }

  async spaceOf(manager: EntityManager, id: number): Promise<EmbeddingSpace> {
    const [space] = await sqlRows<EmbeddingSpace>(manager, 'SELECT provider, model, dimensions, tokenizer_version FROM knowledge_embedding_spaces WHERE id = $1', [id]);
    return space;
  }

  /** The knowledge base's space id, its state row locked for the rest of the transaction. */
  async lockSpace(manager: EntityManager): Promise<number | null> {
    const [state] = await sqlRows<{ space_id: number | null }>(manager, 'SELECT space_id FROM knowledge_index_state WHERE id = 1 FOR UPDATE');
    return state.space_id === null ? null : Number(state.space_id);
  }

  async setSpace(manager: EntityManager, spaceId: number): Promise<void> {
    await manager.query('UPDATE knowledge_index_state SET space_id = $1 WHERE id = 1', [spaceId]);
  }

  /** Moves the knowledge base into `spaceId` and bumps its version (the end of a re-index). */
  async moveToSpace(manager: EntityManager, spaceId: number): Promise<void> {
    await manager.query('UPDATE knowledge_index_state SET space_id = $1, version = version + 1 WHERE id = 1', [spaceId]);
  }

  /** Claims the knowledge base for `spaceId` when it has no space; returns its space afterwards. */
  async claimSpace(manager: EntityManager, spaceId: number): Promise<number | null> {
    const [state] = await sqlRows<{ space_id: number | null }>(manager, `UPDATE knowledge_index_state SET space_id = COALESCE(space_id, $1) WHERE id = 1 RETURNING space_id`, [
      spaceId,
    ]);
    return state.space_id;
  }

  /**
   * Bumps the version after a document's rows are written. `bulkLoaded`: a
   * bulk load outside the index, whose commit time (and the first since the
   * last build) tells the jobs' reconciler when its load has ended.
   */
  async bumpVersion(manager: EntityManager, bulkLoaded = false): Promise<void> {
    await manager.query(
      `UPDATE knowledge_index_state SET version = version + 1${
        bulkLoaded ? ', bulk_loaded_at = clock_timestamp(), bulk_pending_since = COALESCE(bulk_pending_since, clock_timestamp())' : ''
      } WHERE id = 1`,
    );
  }

  /** The version, bumped by every change of the leaves (as text: a bigint). */
  async version(): Promise<string> {
    const [{ version }] = await sqlRows<{ version: string }>(this.dataSource, 'SELECT version::text FROM knowledge_index_state WHERE id = 1');
    return version;
  }

  /** The database's own id, which names its ingest queue. */
  async deploymentId(): Promise<string> {
    const [{ deployment }] = await sqlRows<{ deployment: string }>(this.dataSource, 'SELECT deployment_id::text AS deployment FROM knowledge_index_state WHERE id = 1');
    return deployment;
  }

  /** Forgets a wait for a bulk build when no leaf lies past the current dense epoch (a load committed into the epoch a build was covering). */
  async clearBulkPendingWithoutLeaves(): Promise<void> {
    await this.dataSource.query(
      `UPDATE knowledge_index_state s SET bulk_pending_since = NULL
          WHERE id = 1 AND bulk_pending_since IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM knowledge_chunks c WHERE c.is_leaf AND c.dense_epoch > s.dense_epoch)`,
    );
  }

  /** Whether no bulk load has committed for `quietSeconds`, or the oldest waiting one has waited `maxWaitSeconds`. */
  async bulkBuildDue(quietSeconds: number, maxWaitSeconds: number): Promise<boolean> {
    const [state] = await sqlRows<{ due: boolean }>(
      this.dataSource,
      `SELECT bulk_loaded_at IS NULL OR bulk_loaded_at < clock_timestamp() - make_interval(secs => $1)
              OR bulk_pending_since < clock_timestamp() - make_interval(secs => $2) AS due
         FROM knowledge_index_state WHERE id = 1`,
      [quietSeconds, maxWaitSeconds],
    );
    return state.due;
  }
}
