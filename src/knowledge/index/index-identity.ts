import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CodedError } from '../../common/coded-error.js';
import { TOKENIZER_VERSION } from '../../common/text.js';
import { sqlRows } from '../../database/sql.js';
import { EmbeddingProvider } from './embeddings.js';

/** What a leaf's search text and embedding were made with. */
export interface EmbeddingSpace {
  provider: string;
  model: string;
  dimensions: number;
  tokenizer_version: string;
}

export function describeSpace(space: EmbeddingSpace): string {
  return `${space.provider}/${space.model}, ${space.dimensions} dimensions, tokenizer ${space.tokenizer_version}`;
}

/** The knowledge base was indexed in another space than this instance's configuration makes. */
export class IndexSpaceMismatchError extends CodedError {
  readonly code = 'index_space_mismatch';

  constructor(
    readonly indexed: EmbeddingSpace,
    readonly configured: EmbeddingSpace,
  ) {
    super(
      `The knowledge base was indexed with ${describeSpace(indexed)}, but this instance is configured for ` +
        `${describeSpace(configured)}: vectors of the two are not comparable. Set EMBEDDING_PROVIDER, EMBEDDING_MODEL ` +
        `and EMBEDDING_DIMENSIONS back to the indexed values, or re-index the knowledge base in the new space with ` +
        '`npm run knowledge:reindex` (with the new settings) and start again.',
    );
    this.name = 'IndexSpaceMismatchError';
  }
}

/**
 * Index identity. Each leaf records its embedding space (provider, model,
 * dimensions, tokenizer version: `knowledge_embedding_spaces`), and the
 * knowledge base has one space (`knowledge_index_state.space_id`). At start
 * an instance whose configuration makes another space refuses to start
 * rather than rank one space's vectors against another's; ingest checks the
 * same in the transaction that stores a document, so an instance with other
 * settings cannot add to the index either. The index moves to another space
 * only by `npm run knowledge:reindex`.
 */
@Injectable()
export class IndexIdentity implements OnModuleInit {
  private readonly logger = new Logger(IndexIdentity.name);
  private id: number | null = null;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly embeddings: EmbeddingProvider,
  ) {}

  get configured(): EmbeddingSpace {
    return {
      provider: this.embeddings.provider,
      model: this.embeddings.model,
      dimensions: this.embeddings.dimensions,
      tokenizer_version: TOKENIZER_VERSION,
    };
  }

  /** This instance's space id (known after start). */
  get spaceId(): number {
    if (this.id === null) throw new Error('IndexIdentity is not initialised');
    return this.id;
  }

  async onModuleInit(): Promise<void> {
    this.id = await registerSpace(this.dataSource, this.configured);
    const claimed = await this.dataSource.transaction(async (manager) => {
      const indexed = await lockIndexSpace(manager);
      if (indexed !== null && indexed !== this.id) throw new IndexSpaceMismatchError(await spaceOf(manager, indexed), this.configured);
      if (indexed === null) await manager.query('UPDATE knowledge_index_state SET space_id = $1 WHERE id = 1', [this.id]);
      // Leaves stored before leaves recorded their space: the knowledge base's space is the only one they can be in.
      const rows = await sqlRows(manager, 'UPDATE knowledge_chunks SET space_id = $1 WHERE is_leaf AND space_id IS NULL RETURNING 1', [this.id]);
      return rows.length;
    });
    if (claimed > 0) {
      this.logger.warn(`${claimed} leaves stored without an index identity were recorded as ${describeSpace(this.configured)}`);
    }
  }

  /**
   * In an ingest's transaction, before its commit: fails with
   * IndexSpaceMismatchError when the knowledge base is (now) in another
   * space; claims it when it has none.
   */
  async checkBeforeCommit(manager: EntityManager): Promise<void> {
    const [state] = await sqlRows<{ space_id: number | null }>(
      manager,
      `UPDATE knowledge_index_state SET space_id = COALESCE(space_id, $1) WHERE id = 1 RETURNING space_id`,
      [this.spaceId],
    );
    if (state.space_id !== this.spaceId) throw new IndexSpaceMismatchError(await spaceOf(manager, state.space_id!), this.configured);
  }
}

/** The id of `space`, registered when new; safe when instances start together. */
export async function registerSpace(dataSource: DataSource | EntityManager, space: EmbeddingSpace): Promise<number> {
  const params = [space.provider, space.model, space.dimensions, space.tokenizer_version];
  const [inserted] = await sqlRows<{ id: number }>(
    dataSource,
    `INSERT INTO knowledge_embedding_spaces (provider, model, dimensions, tokenizer_version) VALUES ($1, $2, $3, $4)
     ON CONFLICT ON CONSTRAINT uq_knowledge_embedding_spaces DO NOTHING RETURNING id`,
    params,
  );
  if (inserted) return Number(inserted.id);
  const [existing] = await sqlRows<{ id: number }>(
    dataSource,
    'SELECT id FROM knowledge_embedding_spaces WHERE provider = $1 AND model = $2 AND dimensions = $3 AND tokenizer_version = $4',
    params,
  );
  return Number(existing.id);
}

/** The knowledge base's space id, its state row locked for the rest of the transaction. */
export async function lockIndexSpace(manager: EntityManager): Promise<number | null> {
  const [state] = await sqlRows<{ space_id: number | null }>(manager, 'SELECT space_id FROM knowledge_index_state WHERE id = 1 FOR UPDATE');
  return state.space_id === null ? null : Number(state.space_id);
}

async function spaceOf(manager: EntityManager, id: number): Promise<EmbeddingSpace> {
  const [space] = await sqlRows<EmbeddingSpace>(
    manager,
    'SELECT provider, model, dimensions, tokenizer_version FROM knowledge_embedding_spaces WHERE id = $1',
    [id],
  );
  return space;
}
