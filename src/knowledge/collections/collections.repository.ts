import { DataSource, EntityManager } from 'typeorm';
import { sqlRows } from '../../database/sql.js';
import type { KeysetCursor } from '../../common/keyset-cursor.js';
import type { AccessEntry, CollectionRole } from './collection.js';

/** A collection as stored, with its number of documents. */
export interface CollectionRow {
  id: string;
  name: string;
  description: string;
  owner: string | null;
  created_at: string;
  updated_at: string;
  document_count: number;
}

/** A row of a listing: the collection, the caller's highest role from its entries (null: none), its keyset position. */
export interface ListedCollectionRow extends CollectionRow {
  entry_role: CollectionRole | null;
  created_micros: string;
}

const iso = (column: string) => `to_char(c.${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`;
const COLUMNS = `c.id, c.name, c.description, c.owner, ${iso('created_at')}, ${iso('updated_at')},
  (SELECT count(*)::int FROM knowledge_documents d WHERE d.collection_id = c.id) AS document_count`;
/** The highest role among the entries of `principals` ($1) for the collection `c`. */
const ENTRY_ROLE = `(SELECT a.role FROM knowledge_collection_access a WHERE a.collection_id = c.id AND a.principal = ANY($1::text[])
    ORDER BY CASE a.role WHEN 'owner' THEN 3 WHEN 'editor' THEN 2 ELSE 1 END DESC LIMIT 1)`;
const CREATE_LOCK_CLASS = 7_241_861;
/** The versions a collection list depends on: the knowledge base's (document counts) and the catalog's (collections and access lists). */
const LIST_VERSIONS = `(SELECT version::text FROM knowledge_index_state WHERE id = 1) AS index_version,
  (SELECT version::text FROM knowledge_catalog_version WHERE id = 1) AS catalog_version`;

/**
 * Knowledge collections (`knowledge_collections`) and their access lists
 * (`knowledge_collection_access`). Nothing here is cached: every access
 * decision reads PostgreSQL, so a revoked entry holds on every instance
 * from the next request on.
 */
export class CollectionsRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The roles the entries of `principals` give on `collectionId`; `exists` false when there is no such collection. */
  async entryRoles(principals: string[], collectionId: string): Promise<{ exists: boolean; roles: CollectionRole[] }> {
    const rows = await sqlRows<{ role: CollectionRole | null }>(
      this.dataSource,
      `SELECT a.role FROM knowledge_collections c
         LEFT JOIN knowledge_collection_access a ON a.collection_id = c.id AND a.principal = ANY($1::text[])
        WHERE c.id = $2`,
      [principals, collectionId],
    );
    return { exists: rows.length > 0, roles: rows.flatMap((row) => (row.role ? [row.role] : [])) };
  }

  /** The collections an entry of `principals` gives any role on. */
  async idsWithEntries(principals: string[]): Promise<string[]> {
    const rows = await sqlRows<{ id: string }>(this.dataSource, 'SELECT DISTINCT collection_id AS id FROM knowledge_collection_access WHERE principal = ANY($1::text[])', [
      principals,
    ]);
    return rows.map((row) => row.id);
  }

  async allIds(): Promise<string[]> {
    const rows = await sqlRows<{ id: string }>(this.dataSource, 'SELECT id FROM knowledge_collections');
    return rows.map((row) => row.id);
  }

  async find(id: string): Promise<CollectionRow | null> {
    const [row] = await sqlRows<CollectionRow>(this.dataSource, `SELECT ${COLUMNS} FROM knowledge_collections c WHERE c.id = $1`, [id]);
    return row ?? null;
  }

  /**
   * Up to `limit` collections, oldest first, after `after`: those an entry of
   * `principals` gives a role on, or every one (`all`, for administrators).
   */
  async page(principals: string[], all: boolean, limit: number, after: KeysetCursor | null): Promise<ListedCollectionRow[]> {
    return (await this.pageOn(this.dataSource, principals, all, limit, after)).value;
  }

  /**
   * The same page read on `db` (the read replica, say), with the versions of
   * what it read as `db` holds them, in the same snapshot: the knowledge
   * base's (the document counts) and the catalog's (collections and access lists).
   */
  async pageOn(
    db: DataSource,
    principals: string[],
    all: boolean,
    limit: number,
    after: KeysetCursor | null,
  ): Promise<{ versions: [string | null, string | null]; value: ListedCollectionRow[] }> {
    const conditions = [
      ...(all ? [] : ['EXISTS (SELECT 1 FROM knowledge_collection_access a WHERE a.collection_id = c.id AND a.principal = ANY($1::text[]))']),
      ...(after ? [`(c.created_at, c.id) > (TIMESTAMPTZ 'epoch' + $3::bigint * INTERVAL '1 microsecond', $4::uuid)`] : []),
    ];
    // The page is joined to the one-row select of the versions: an empty page carries them too.
    const rows = await sqlRows<Partial<ListedCollectionRow> & { index_version: string | null; catalog_version: string | null }>(
      db,
      `SELECT v.index_version, v.catalog_version, p.*
         FROM (SELECT ${LIST_VERSIONS}) v
         LEFT JOIN LATERAL (
           SELECT ${COLUMNS}, ${ENTRY_ROLE} AS entry_role, (EXTRACT(EPOCH FROM c.created_at) * 1000000)::bigint::text AS created_micros
             FROM knowledge_collections c
            ${conditions.length ? `WHERE ${conditions.join(' AND ')}` : ''}
            ORDER BY c.created_at, c.id LIMIT $2
         ) p ON true
        ORDER BY p.created_micros::bigint, p.id`,
      after ? [principals, limit, after.micros, after.id] : [principals, limit],
    );
    return {
      versions: [rows[0]?.index_version ?? null, rows[0]?.catalog_version ?? null],
      value: rows.flatMap(({ index_version: _, catalog_version: __, ...row }) => (row.id == null ? [] : [row as ListedCollectionRow])),
    };
  }

  /** What the collection list depends on, as the primary holds it (see pageOn). */
  async listVersions(): Promise<[string, string]> {
    const [row] = await sqlRows<{ index_version: string; catalog_version: string }>(this.dataSource, `SELECT ${LIST_VERSIONS}`);
    return [row.index_version, row.catalog_version];
  }

  /** Runs `work` in a transaction holding the owner's creation lock, so one user's creations take turns (the owned limit holds). */
  withCreateLock<T>(owner: string, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CREATE_LOCK_CLASS, owner]);
      return work(manager);
    });
  }

  async countOwned(manager: EntityManager, owner: string): Promise<number> {
    const [row] = await sqlRows<{ owned: number }>(manager, 'SELECT count(*)::int AS owned FROM knowledge_collections WHERE owner = $1', [owner]);
    return row.owned;
  }

  async insert(manager: EntityManager, collection: { id: string; name: string; description: string; owner: string }, entries: AccessEntry[]): Promise<void> {
    await manager.query('INSERT INTO knowledge_collections (id, name, description, owner) VALUES ($1, $2, $3, $4)', [
      collection.id,
      collection.name,
      collection.description,
      collection.owner,
    ]);
    await this.insertEntries(manager, collection.id, entries);
  }

  /** Renames and (or) describes the collection; false when it does not exist. */
  async update(id: string, changes: { name?: string; description?: string }): Promise<boolean> {
    const rows = await sqlRows(
      this.dataSource,
      `UPDATE knowledge_collections SET name = COALESCE($2, name), description = COALESCE($3, description), updated_at = clock_timestamp()
        WHERE id = $1 RETURNING id`,
      [id, changes.name ?? null, changes.description ?? null],
    );
    return rows.length > 0;
  }

  /** The access list, owners first, then by principal. */
  entries(id: string): Promise<AccessEntry[]> {
    return sqlRows<AccessEntry>(
      this.dataSource,
      `SELECT principal, role FROM knowledge_collection_access WHERE collection_id = $1
        ORDER BY CASE role WHEN 'owner' THEN 1 WHEN 'editor' THEN 2 ELSE 3 END, principal`,
      [id],
    );
  }

  /** Replaces the access list in one transaction (the collection's row locked: concurrent replacements take turns); false when it does not exist. */
  async replaceEntries(id: string, entries: AccessEntry[]): Promise<boolean> {
    return this.dataSource.transaction(async (manager) => {
      const locked = await sqlRows(manager, 'UPDATE knowledge_collections SET updated_at = clock_timestamp() WHERE id = $1 RETURNING id', [id]);
      if (locked.length === 0) return false;
      await manager.query('DELETE FROM knowledge_collection_access WHERE collection_id = $1', [id]);
      await this.insertEntries(manager, id, entries);
      return true;
    });
  }

  /**
   * Deletes the collection with its documents (their chunks and vectors by
   * cascade), its ingest jobs and its access list, in the caller's
   * transaction; returns how many documents it held and the ids of the jobs
   * that had not ended (null: no such collection). The jobs' rows are locked first, the order an ingest
   * takes them in (its claim, then its collection at commit): a job that
   * claimed its document first commits before this goes on, and its document
   * is deleted here; one that claims after finds its row gone and stores
   * nothing.
   */
  async deleteCollection(manager: EntityManager, id: string): Promise<{ documents: number; unfinishedJobs: string[] } | null> {
    const jobs = await sqlRows<{ id: string; unfinished: boolean }>(
      manager,
      `SELECT id, status IN ('queued', 'active') AS unfinished FROM knowledge_ingest_jobs WHERE collection_id = $1 FOR UPDATE`,
      [id],
    );
    const [{ documents }] = await sqlRows<{ documents: number }>(
      manager,
      'WITH deleted AS (DELETE FROM knowledge_documents WHERE collection_id = $1 RETURNING 1) SELECT count(*)::int AS documents FROM deleted',
      [id],
    );
    const deleted = await sqlRows(manager, 'DELETE FROM knowledge_collections WHERE id = $1 RETURNING id', [id]);
    if (deleted.length === 0) return null;
    return { documents, unfinishedJobs: jobs.filter((job) => job.unfinished).map((job) => job.id) };
  }

  private async insertEntries(manager: EntityManager, id: string, entries: AccessEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await manager.query(
      `INSERT INTO knowledge_collection_access (collection_id, principal, role)
       SELECT $1, e.principal, e.role FROM unnest($2::text[], $3::text[]) AS e(principal, role)`,
      [id, entries.map((entry) => entry.principal), entries.map((entry) => entry.role)],
    );
  }
}
