import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Repository } from 'typeorm';
import { CodedError, RequestError } from '../../common/coded-error.js';
import { isDatabaseUnavailable } from '../../common/database-unavailable.js';
import type { AuthUser } from '../auth-user.js';
import { ApiKey, ApiKeyRole } from './api-key.entity.js';
import { ApiKeysRepository, KeyCheck, KeyRow } from './api-keys.repository.js';
import type { ApiKeyCreatedResponse, ApiKeyInfo } from './api-key.dto.js';

/** Every API key starts with this; the bearer guard sends such tokens here. */
export const API_KEY_PREFIX = 'rk-';
/** 32 random bytes, base64url without padding. */
const SECRET_BYTES = 32;
const KEY_PATTERN = /^rk-[A-Za-z0-9_-]{43}$/;
export const API_KEY_PREFIX_LENGTH = 8;
export const MAX_LIVE_API_KEYS = 50;
const LIST_LIMIT = 100;
/** last_used_at is written at most once per key and minute. */
const USAGE_WRITE_INTERVAL_MS = 60_000;
const USAGE_MEMORY_LIMIT = 10_000;

export class ApiKeyStorageUnavailable extends CodedError {
  readonly code = 'storage_unavailable' as const;

  constructor() {
    super('Database unavailable: the API key could not be checked; retry shortly (signed tokens are not affected)');
  }
}

/**
 * A key carries 256 random bits, so a plain SHA-256 of the whole key is
 * enough to store it: nothing can be guessed or precomputed, and a slow
 * password hash would only add latency to every request.
 */
function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function toInfo(row: KeyRow): ApiKeyInfo {
  const iso = (value: Date | null) => (value ? value.toISOString() : null);
  return {
    id: row.id,
    name: row.name,
    prefix: row.prefix,
    role: row.role,
    created_at: row.created_at.toISOString(),
    expires_at: iso(row.expires_at),
    last_used_at: iso(row.last_used_at),
    revoked_at: iso(row.revoked_at),
  };
}

/**
 * API keys for service-to-service clients. Every request with a key looks it
 * up in PostgreSQL (by its hash) and nothing is cached, so a revocation or an
 * expiry holds on every instance from the next request on.
 */
@Injectable()
export class ApiKeyService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(ApiKeyService.name);
  /** When this instance last wrote each key's last_used_at. */
  private readonly usageWrittenAt = new Map<string, number>();
  private readonly pendingUsageWrites = new Set<Promise<void>>();

  private readonly keys: ApiKeysRepository;

  constructor(@InjectRepository(ApiKey) keys: Repository<ApiKey>) {
    this.keys = new ApiKeysRepository(keys);
  }

  async create(user: AuthUser, name: string, expiresInDays?: number): Promise<ApiKeyCreatedResponse> {
    if (user.apiKeyId) {
      throw new RequestError('forbidden', 'An API key cannot create API keys (a leaked key must not mint successors): use a signed user token');
    }
    const key = API_KEY_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');
    const prefix = key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + API_KEY_PREFIX_LENGTH);
    const role: ApiKeyRole = user.isAdmin ? 'admin' : 'user';
    const row = await this.keys.withCreateLock(user.userId, async (manager) => {
      // Under the user's lock: concurrent requests cannot pass the limit together.
      if ((await this.keys.countLive(manager, user.userId)) >= MAX_LIVE_API_KEYS) {
        throw new RequestError('api_key_limit', `At most ${MAX_LIVE_API_KEYS} live API keys per user: revoke one (DELETE /api/keys/:id) first`);
      }
      return this.keys.insert(manager, {
        id: randomUUID(),
        userId: user.userId,
        name,
        prefix,
        keyHash: hashKey(key),
        role,
        groups: user.groups,
        expiresInDays: expiresInDays ?? null,
      });
    });
    return { ...toInfo(row), key };
  }

  async list(userId: string): Promise<ApiKeyInfo[]> {
    return (await this.keys.list(userId, LIST_LIMIT)).map(toInfo);
  }

  /** Revokes one of the user's keys; revoking a revoked key changes nothing. A key may revoke only itself. */
  async revoke(user: AuthUser, id: string): Promise<ApiKeyInfo> {
    if (user.apiKeyId && user.apiKeyId !== id.toLowerCase()) {
      throw new RequestError('forbidden', "An API key can revoke only itself (a leaked key must not lock out its owner's other keys): use a signed user token");
    }
    const row = await this.keys.revoke(id, user.userId);
    if (!row) throw new RequestError('api_key_not_found', `API key ${id} not found`);
    return toInfo(row);
  }

  /** The key's owner, role and groups (those of the token that created it); 401 for a malformed, unknown, revoked or expired key, 503 when PostgreSQL cannot answer. */
  async authenticate(key: string): Promise<AuthUser> {
    if (!KEY_PATTERN.test(key)) {
      throw new RequestError('unauthorized', `Malformed API key: expected "${API_KEY_PREFIX}" followed by 43 base64url characters`);
    }
    let row: KeyCheck | undefined;
    try {
      row = await this.keys.findByHash(hashKey(key));
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw new ApiKeyStorageUnavailable();
      throw error;
    }
    // Unknown and revoked answer alike: the answer must not tell which keys once existed.
    if (!row || row.revoked) throw new RequestError('unauthorized', 'Invalid API key: unknown or revoked');
    if (row.expired) throw new RequestError('unauthorized', 'API key expired: create a new one (POST /api/keys with a user token)');
    this.recordUse(row.id, row.last_used_at);
    const user: AuthUser = { userId: row.user_id, isAdmin: row.role === 'admin', groups: row.groups ?? [], apiKeyId: row.id };
    if (row.expires_at) user.credentialExpiresAt = Math.floor(row.expires_at.getTime() / 1000);
    return user;
  }

  /**
   * Whether the key `id` of `userId` still exists and is neither revoked nor
   * expired: what a stream ticket the key issued is checked against on every
   * use. 503 when PostgreSQL cannot answer.
   */
  async isLive(id: string, userId: string): Promise<boolean> {
    try {
      return await this.keys.isLive(id, userId);
    } catch (error) {
      if (isDatabaseUnavailable(error)) throw new ApiKeyStorageUnavailable();
      throw error;
    }
  }

  /** Resolves when the last_used_at writes started so far have finished (tests, shutdown). */
  async flushUsage(): Promise<void> {
    await Promise.allSettled([...this.pendingUsageWrites]);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.flushUsage();
  }

  /**
   * Writes last_used_at off the request's path, at most once a minute per key:
   * this instance skips keys it wrote within the minute, and the statement's
   * condition skips keys another instance wrote.
   */
  private recordUse(id: string, lastUsedAt: Date | null): void {
    const now = Date.now();
    if (lastUsedAt && now - lastUsedAt.getTime() < USAGE_WRITE_INTERVAL_MS) return;
    const written = this.usageWrittenAt.get(id);
    if (written !== undefined && now - written < USAGE_WRITE_INTERVAL_MS) return;
    if (this.usageWrittenAt.size >= USAGE_MEMORY_LIMIT) {
      for (const [key, at] of this.usageWrittenAt) if (now - at >= USAGE_WRITE_INTERVAL_MS) this.usageWrittenAt.delete(key);
      if (this.usageWrittenAt.size >= USAGE_MEMORY_LIMIT) this.usageWrittenAt.clear();
    }
    this.usageWrittenAt.set(id, now);
    const write = this.keys.recordUse(id, USAGE_WRITE_INTERVAL_MS / 1000).then(
      () => undefined,
      (error: unknown) => {
        this.usageWrittenAt.delete(id); // the next request tries again
        this.logger.warn({ err: error, api_key_id: id }, 'could not record the API key last use');
      },
    );
    this.pendingUsageWrites.add(write);
    void write.finally(() => this.pendingUsageWrites.delete(write));
  }
}
