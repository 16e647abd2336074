import { Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { CodedError } from '../../common/coded-error.js';
import { TOKENIZER_VERSION } from '../../common/text.js';
import { ChunksRepository } from './chunks.repository.js';
import { EmbeddingProvider } from './embeddings.js';
import { IndexStateRepository } from './index-state.repository.js';

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
  private readonly state: IndexStateRepository;
  private readonly chunks: ChunksRepository;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly embeddings: EmbeddingProvider,
  ) {
    this.state = new IndexStateRepository(dataSource);
    this.chunks = new ChunksRepository(dataSource);
  }

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
    this.id = await this.state.registerSpace(this.configured);
    const claimed = await this.dataSource.transaction(async (manager) => {
      const indexed = await this.state.lockSpace(manager);
      if (indexed !== null && indexed !== this.id) throw new IndexSpaceMismatchError(await this.state.spaceOf(manager, indexed), this.configured);
      if (indexed === null) await this.state.setSpace(manager, this.id!);
      // Leaves stored before leaves recorded their space: the knowledge base's space is the only one they can be in.
      return this.chunks.recordUnspacedLeaves(manager, this.id!);
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
    const spaceId = await this.state.claimSpace(manager, this.spaceId);
    if (spaceId !== this.spaceId) throw new IndexSpaceMismatchError(await this.state.spaceOf(manager, spaceId!), this.configured);
  }
}
