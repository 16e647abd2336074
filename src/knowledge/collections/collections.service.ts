import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ReadReplica } from '../../database/database.module.js';
import type { AuthUser } from '../../auth/auth-user.js';
import { RequestError } from '../../common/coded-error.js';
import { decodeKeysetCursor, encodeKeysetCursor } from '../../common/keyset-cursor.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { IndexStateRepository } from '../index/index-state.repository.js';
import { IngestJobs } from '../ingest/jobs/ingest-jobs.service.js';
import { CollectionAccess, CollectionNotFoundError } from './collection-access.service.js';
import {
  AccessEntry,
  CollectionRole,
  DEFAULT_COLLECTION_ID,
  DEFAULT_COLLECTION_NAME,
  EVERYONE,
  MAX_OWNED_COLLECTIONS,
  principalProblem,
  principalsOf,
  USER_PRINCIPAL_PREFIX,
} from './collection.js';
import { CollectionRow, CollectionsRepository } from './collections.repository.js';
import { COLLECTION_PAGE_DEFAULT, COLLECTION_PAGE_MAX } from './collections.dto.js';

/** A collection as the caller sees it: with the caller's role and its number of documents. */
export interface CollectionView extends CollectionRow {
  role: CollectionRole;
}

export interface CollectionPage {
  collections: CollectionView[];
  next_cursor: string | null;
}

/**
 * Knowledge collections: creating, listing, renaming and deleting them, and
 * their access lists. Whether the caller may is CollectionAccess's answer,
 * read from PostgreSQL on every call. The collection `default` (the
 * knowledge base as it was) is neither deleted nor renamed, and stays
 * readable by everyone.
 */
@Injectable()
export class CollectionsService {
  private readonly collections: CollectionsRepository;
  private readonly state: IndexStateRepository;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly access: CollectionAccess,
    private readonly jobs: IngestJobs,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly replica: ReadReplica,
  ) {
    this.collections = new CollectionsRepository(dataSource);
    this.state = new IndexStateRepository(dataSource);
  }

  /** A new collection, its creator its owner (`user:<id>` with role owner). */
  async create(user: AuthUser, fields: { name: string; description?: string }): Promise<CollectionView> {
    if (this.config.knowledge.collectionCreators === 'admins' && !user.isAdmin) {
      throw new RequestError('collection_creation_forbidden', 'Only administrators may create collections here (KNOWLEDGE_COLLECTION_CREATORS=admins)');
    }
    const id = randomUUID();
    await this.collections.withCreateLock(user.userId, async (manager) => {
      // Under the user's lock: concurrent creations cannot pass the limit together.
      if (!user.isAdmin && (await this.collections.countOwned(manager, user.userId)) >= MAX_OWNED_COLLECTIONS) {
        throw new RequestError('collection_limit', `At most ${MAX_OWNED_COLLECTIONS} collections created per user: delete one first`);
      }
      const owner: AccessEntry = { principal: `${USER_PRINCIPAL_PREFIX}${user.userId}`, role: 'owner' };
      await this.collections.insert(manager, { id, name: fields.name, description: fields.description ?? '', owner: user.userId }, [owner]);
    });
    return this.get(user, id);
  }

  /** The collections the caller may read (every one, for an administrator), oldest first, a page at a time. */
  async list(user: AuthUser, page: { limit?: number; cursor?: string }): Promise<CollectionPage> {
    const limit = Math.min(Math.max(page.limit ?? COLLECTION_PAGE_DEFAULT, 1), COLLECTION_PAGE_MAX);
    const after = page.cursor ? decodeKeysetCursor(page.cursor) : null;
    // On the read replica when it holds what the primary holds now (the caller's own changes included).
    const rows = await this.replica.read(
      'collection_list',
      () => this.collections.listVersions(),
      (db) => this.collections.pageOn(db, principalsOf(user), user.isAdmin, limit + 1, after),
    );
    const shown = rows.slice(0, limit);
    const last = shown[shown.length - 1];
    return {
      collections: shown.map(({ entry_role, created_micros: _, ...row }) => ({ ...row, role: user.isAdmin ? 'owner' : (entry_role ?? 'viewer') })),
      next_cursor: rows.length > limit && last ? encodeKeysetCursor({ micros: last.created_micros, id: last.id }) : null,
    };
  }

  async get(user: AuthUser, rawId: string): Promise<CollectionView> {
    const { id, role } = await this.access.require(user, rawId, 'viewer');
    const row = await this.collections.find(id);
    if (!row) throw new CollectionNotFoundError(rawId);
    return { ...row, role };
  }

  /** Renames and (or) describes the collection (owners); `default` keeps its name. */
  async update(user: AuthUser, rawId: string, changes: { name?: string; description?: string }): Promise<CollectionView> {
    if (changes.name === undefined && changes.description === undefined) throw new RequestError('invalid_request', 'Send name, description or both');
    const { id } = await this.access.require(user, rawId, 'owner');
    if (id === DEFAULT_COLLECTION_ID && changes.name !== undefined && changes.name !== DEFAULT_COLLECTION_NAME) {
      throw new RequestError('default_collection_protected', 'The default collection keeps its name (its description may change)');
    }
    if (!(await this.collections.update(id, changes))) throw new CollectionNotFoundError(rawId);
    return this.get(user, id);
  }

  /**
   * Deletes the collection (owners) with its documents, chunks, vectors,
   * ingest jobs and access list, in one transaction. Its unfinished jobs are
   * cancelled by the deletion of their rows: an attempt under way finds its
   * row gone before it commits and stores nothing. The index version moves,
   * so every instance's in-memory dense index drops the vectors.
   */
  async remove(user: AuthUser, rawId: string): Promise<{ id: string; documents_deleted: number; jobs_cancelled: number }> {
    const { id } = await this.access.require(user, rawId, 'owner');
    if (id === DEFAULT_COLLECTION_ID) throw new RequestError('default_collection_protected', 'The default collection cannot be deleted');
    const deleted = await this.dataSource.transaction(async (manager) => {
      const removed = await this.collections.deleteCollection(manager, id);
      if (removed) await this.state.bumpVersion(manager);
      return removed;
    });
    if (!deleted) throw new CollectionNotFoundError(rawId);
    await this.jobs.dropFromQueue(deleted.unfinishedJobs);
    return { id, documents_deleted: deleted.documents, jobs_cancelled: deleted.unfinishedJobs.length };
  }

  /** The access list (anyone who may read the collection may read who else may). */
  async accessList(user: AuthUser, rawId: string): Promise<{ collection_id: string; entries: AccessEntry[] }> {
    const { id } = await this.access.require(user, rawId, 'viewer');
    return { collection_id: id, entries: await this.collections.entries(id) };
  }

  /**
   * Replaces the access list (owners). Each principal once, each valid; at
   * least one owner entry remains, so that someone besides the
   * administrators can manage the collection (an owner may hand it over, not
   * orphan it). `default` keeps an `everyone` entry instead: it is readable
   * by everyone, and administrators manage it.
   */
  async replaceAccess(user: AuthUser, rawId: string, entries: AccessEntry[]): Promise<{ collection_id: string; entries: AccessEntry[] }> {
    const { id } = await this.access.require(user, rawId, 'owner');
    const seen = new Set<string>();
    for (const [index, entry] of entries.entries()) {
      const problem = principalProblem(entry.principal);
      if (problem) throw new RequestError('invalid_request', `entries.${index}.principal ${problem}`);
      if (seen.has(entry.principal))
        throw new RequestError('invalid_request', `entries.${index}.principal ${JSON.stringify(entry.principal)} is listed twice: give each principal one role`);
      seen.add(entry.principal);
    }
    if (id === DEFAULT_COLLECTION_ID) {
      if (!seen.has(EVERYONE)) throw new RequestError('default_collection_protected', 'The default collection stays readable by everyone: keep an entry for "everyone"');
    } else if (!entries.some((entry) => entry.role === 'owner')) {
      throw new RequestError('collection_owner_required', 'The access list must keep at least one owner: name the new owner before removing the last one');
    }
    const list = entries.map(({ principal, role }) => ({ principal, role }));
    if (!(await this.collections.replaceEntries(id, list))) throw new CollectionNotFoundError(rawId);
    // Read back without asking again: an owner who handed the collection over may no longer read it.
    return { collection_id: id, entries: await this.collections.entries(id) };
  }
}
