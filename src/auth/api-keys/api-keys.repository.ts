import { EntityManager, Repository } from 'typeorm';
import { ApiKey, ApiKeyRole } from './api-key.entity.js';

export interface KeyRow {
  id: string;
  user_id: string;
  name: string;
  prefix: string;
  role: ApiKeyRole;
  created_at: Date;
  expires_at: Date | null;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/** What authenticating a key reads of it. */
export interface KeyCheck {
  id: string;
  user_id: string;
  role: ApiKeyRole;
  groups: string[];
  revoked: boolean;
  expired: boolean;
  last_used_at: Date | null;
  expires_at: Date | null;
}

export interface NewKey {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  keyHash: Buffer;
  role: ApiKeyRole;
  /** The groups of the token creating the key: every request with the key carries them. */
  groups: string[];
  expiresInDays: number | null;
}

const ROW_COLUMNS = 'id, user_id, name, prefix, role, created_at, expires_at, last_used_at, revoked_at';
const CREATE_LOCK_CLASS = 7_241_860;

/** The API keys (`api_keys`). Methods that take an EntityManager run in the caller's transaction. */
export class ApiKeysRepository {
  constructor(private readonly keys: Repository<ApiKey>) {}

  /** Runs `work` in a transaction that holds the user's key-creation lock, so creations of one user take turns. */
  withCreateLock<T>(userId: string, work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.keys.manager.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [CREATE_LOCK_CLASS, userId]);
      return work(manager);
    });
  }

  /** The user's keys that are neither revoked nor expired. */
  async countLive(manager: EntityManager, userId: string): Promise<number> {
    const [{ live }] = await manager.query(
      `SELECT count(*)::int AS live FROM api_keys
          WHERE user_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
      [userId],
    );
    return live;
  }

  async insert(manager: EntityManager, key: NewKey): Promise<KeyRow> {
    const [inserted] = await manager.query(
      `INSERT INTO api_keys (id, user_id, name, prefix, key_hash, role, expires_at, groups)
         VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(days => $7::int) END, $8::text[])
         RETURNING ${ROW_COLUMNS}`,
      [key.id, key.userId, key.name, key.prefix, key.keyHash, key.role, key.expiresInDays, key.groups],
    );
    return inserted as KeyRow;
  }

  /** The user's keys, live ones first, newest first. */
  list(userId: string, limit: number): Promise<KeyRow[]> {
    return this.keys.query(
      `SELECT ${ROW_COLUMNS} FROM api_keys WHERE user_id = $1
        ORDER BY (revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())) DESC, created_at DESC, id
        LIMIT ${limit}`,
      [userId],
    );
  }

  /** Revokes the user's key `id` (a revoked one keeps its time); undefined when the user has no such key. */
  async revoke(id: string, userId: string): Promise<KeyRow | undefined> {
    const [rows] = await this.keys.query(`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 AND user_id = $2 RETURNING ${ROW_COLUMNS}`, [id, userId]);
    return (rows as KeyRow[])[0];
  }

  async findByHash(keyHash: Buffer): Promise<KeyCheck | undefined> {
    const rows: KeyCheck[] = await this.keys.query(
      `SELECT id, user_id, role, groups, last_used_at, expires_at, revoked_at IS NOT NULL AS revoked,
                (expires_at IS NOT NULL AND expires_at <= now()) AS expired
           FROM api_keys WHERE key_hash = $1`,
      [keyHash],
    );
    return rows[0];
  }

  async isLive(id: string, userId: string): Promise<boolean> {
    const rows: unknown[] = await this.keys.query(
      `SELECT 1 FROM api_keys
          WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`,
      [id, userId],
    );
    return rows.length > 0;
  }

  /** Sets last_used_at unless it was set within `intervalSeconds` (by any instance). */
  async recordUse(id: string, intervalSeconds: number): Promise<void> {
    await this.keys.query(
      `UPDATE api_keys SET last_used_at = now()
          WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - make_interval(secs => $2))`,
      [id, intervalSeconds],
    );
  }
}
