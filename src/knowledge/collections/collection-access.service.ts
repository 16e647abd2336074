import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { AuthUser } from '../../auth/auth-user.js';
import { RequestError } from '../../common/coded-error.js';
import { CollectionRole, DEFAULT_COLLECTION_ALIAS, DEFAULT_COLLECTION_ID, highestRole, principalsOf, roleAllows } from './collection.js';
import { CollectionsRepository } from './collections.repository.js';
import { RetrievalScope } from './retrieval-scope.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** What a role allows, for the message of a 403. */
const ALLOWED: Record<CollectionRole, string> = {
  viewer: 'read it',
  editor: 'add and delete its documents',
  owner: 'change its access list, rename or delete it',
};

/**
 * Who may do what with a knowledge collection. Every answer reads PostgreSQL
 * (the caller's entries, by an index on the principal): nothing is cached,
 * so an entry removed on one instance holds on every instance from the next
 * request on. Administrators (AuthUser.isAdmin) are owners of every
 * collection. A collection the caller cannot read is answered as one that
 * does not exist (404): its existence is not disclosed.
 */
@Injectable()
export class CollectionAccess {
  private readonly collections: CollectionsRepository;

  constructor(@InjectDataSource() dataSource: DataSource) {
    this.collections = new CollectionsRepository(dataSource);
  }

  /**
   * The caller's role on the collection (its highest entry among
   * `everyone`, `user:<id>` and `group:<name>` of each of the caller's
   * groups; `owner` for an administrator), or null when the caller cannot
   * read it or it does not exist. `collectionId` may be anything a client
   * sent: what is not a collection id is null.
   */
  async roleOf(user: AuthUser, collectionId: string): Promise<CollectionRole | null> {
    const id = collectionIdOf(collectionId);
    if (!id) return null;
    const { exists, roles } = await this.collections.entryRoles(principalsOf(user), id);
    if (!exists) return null;
    return user.isAdmin ? 'owner' : highestRole(roles);
  }

  /**
   * The ids of every collection the caller may read. With
   * `adminOverride: false` an administrator gets only those its own entries
   * (and `everyone`) give, as any user would: what a search over "all my
   * collections" may want, rather than every user's private collection.
   */
  async readableCollectionIds(user: AuthUser, options: { adminOverride?: boolean } = {}): Promise<string[]> {
    if (user.isAdmin && options.adminOverride !== false) return this.collections.allIds();
    return this.collections.idsWithEntries(principalsOf(user));
  }

  /**
   * The caller's role on the collection when it allows `needed`. Throws
   * `collection_not_found` (404) when the caller cannot read it (or it does
   * not exist, or `collectionId` is no collection id), and
   * `collection_forbidden` (403) when the caller reads it but its role does
   * not allow `needed`.
   */
  async require(user: AuthUser, collectionId: string, needed: CollectionRole): Promise<{ id: string; role: CollectionRole }> {
    const id = collectionIdOf(collectionId);
    const role = id ? await this.roleOf(user, id) : null;
    if (!id || !role) throw new CollectionNotFoundError(collectionId);
    if (!roleAllows(role, needed)) {
      const who = id === DEFAULT_COLLECTION_ID ? `administrators and its ${needed}s` : `its ${needed}s`;
      throw new RequestError('collection_forbidden', `Only ${who} may ${ALLOWED[needed]}: your role on this collection is ${role}`);
    }
    return { id, role };
  }

  /**
   * The named collections, each once, when the caller may read every one;
   * `collection_not_found` (404) for the first it cannot read. For a turn or
   * search that names its collections.
   */
  async requireReadable(user: AuthUser, collectionIds: readonly string[]): Promise<string[]> {
    const ids: string[] = [];
    for (const raw of collectionIds) {
      const { id } = await this.require(user, raw, 'viewer');
      if (!ids.includes(id)) ids.push(id);
    }
    return ids;
  }

  /**
   * The collections a search of the caller reads: those `named` (each checked
   * readable: `collection_not_found` for the first that is not), else every
   * collection the caller's own entries (or `everyone`) let it read. An
   * administrator's default is the same as anyone's, not every collection:
   * one user's private documents stay out of an administrator's everyday
   * answers; an administrator who names a collection searches it.
   */
  async retrievalScope(user: AuthUser, named?: readonly string[] | null): Promise<RetrievalScope> {
    if (named) return RetrievalScope.of(await this.requireReadable(user, named));
    return RetrievalScope.of(await this.readableCollectionIds(user, { adminOverride: false }));
  }
}

/** The collection id a client's `:id` names (`default` is the default collection's), lower case; null when it names none. */
export function collectionIdOf(raw: string): string | null {
  if (raw === DEFAULT_COLLECTION_ALIAS) return DEFAULT_COLLECTION_ID;
  return UUID.test(raw) ? raw.toLowerCase() : null;
}

export class CollectionNotFoundError extends RequestError {
  constructor(id: string) {
    super('collection_not_found', `Collection ${JSON.stringify(id.slice(0, 80))} not found`);
  }
}
