import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AuthUser } from '../../auth/auth-user.js';
import { RequestError } from '../../common/coded-error.js';
import { CollectionAccess } from '../collections/collection-access.service.js';
import { ChunksRepository, SourceChunkRow } from '../index/chunks.repository.js';
import type { ChunkPassage, ChunkSourceResponse } from './chunks.dto.js';

/** How many chunks on each side of the cited one a citation shows. */
export const NEIGHBOURS_EACH_SIDE = 2;

/** A chunk id as the database gives it: a positive bigint. */
const CHUNK_ID = /^[1-9][0-9]{0,17}$/;

/**
 * Where a citation leads: the cited chunk with its document, collection,
 * page or location, and the chunks around it. Read under the collection's
 * access rule, from PostgreSQL on every request: a chunk of a collection the
 * caller cannot read is answered as one that does not exist.
 */
@Injectable()
export class ChunkSources {
  private readonly chunks: ChunksRepository;

  constructor(
    @InjectDataSource() dataSource: DataSource,
    private readonly access: CollectionAccess,
  ) {
    this.chunks = new ChunksRepository(dataSource);
  }

  async source(user: AuthUser, chunkId: string): Promise<ChunkSourceResponse> {
    const rows = CHUNK_ID.test(chunkId) ? await this.chunks.withNeighbours(chunkId, NEIGHBOURS_EACH_SIDE) : [];
    const at = rows.findIndex((row) => row.cited);
    if (at < 0 || (await this.access.roleOf(user, rows[at].collection_id)) === null) {
      throw new RequestError('chunk_not_found', `Chunk ${JSON.stringify(chunkId.slice(0, 40))} not found`);
    }
    const cited = rows[at];
    return {
      ...passage(cited),
      collection_id: cited.collection_id,
      document: { id: cited.document_id, filename: cited.filename },
      before: rows.slice(0, at).map(passage),
      after: rows.slice(at + 1).map(passage),
    };
  }
}

function passage(row: SourceChunkRow): ChunkPassage {
  return { chunk_id: row.id, text: row.text, page: row.page, location: row.location ?? null };
}
