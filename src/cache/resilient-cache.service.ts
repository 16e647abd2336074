import { CACHE_MANAGER } from '@nestjs/cache-manager';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Cache } from 'cache-manager';
import { withTimeout } from '../common/with-timeout.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';

export class CacheTimeoutError extends Error {
  constructor(operation: string, ms: number) {
    super(`cache ${operation} took longer than ${ms} ms`);
  }
}

/** After a failure the cache is skipped for this long, so an outage costs one timeout, not one per call. */
export const CACHE_RETRY_AFTER_MS = 1000;

/**
 * The Redis cache as the rest of the service sees it: every call answers
 * within the command timeout and never throws. A failing or stalled Redis
 * degrades to "no cache" with a warning. Deletes are best effort: a delete
 * lost to an outage is not remembered here, because that memory would be one
 * instance's; callers store versioned values and check the version against
 * the database on read (see SessionReads), which holds across instances.
 */
@Injectable()
export class ResilientCache {
  private readonly logger = new Logger(ResilientCache.name);
  private readonly timeoutMs: number;
  /** Without Redis: the cache is this process's memory (one instance). */
  readonly inProcess: boolean;
  private readonly ttlMs: number;
  private unavailableUntil = 0;
  private degraded = false;
  private failureCount = 0;

  constructor(
    @Inject(CACHE_MANAGER) private readonly cache: Cache,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.inProcess = config.redis.url === null;
    this.timeoutMs = config.redis.commandTimeoutMs;
    this.ttlMs = config.redis.ttlSeconds * 1000;
    // cache-manager swallows read errors and only reports them as events.
    this.cache.on('get', (event: { error?: unknown }) => {
      if (event.error) this.markFailed('get', event.error);
    });
  }

  /** True while the last cache call failed and the retry window has not passed. */
  get isDegraded(): boolean {
    return this.degraded;
  }

  async get<T>(key: string): Promise<T | undefined> {
    const value = await this.run('get', () => this.cache.get<T>(key));
    return value ?? undefined;
  }

  async set(key: string, value: unknown, ttlMs = this.ttlMs): Promise<void> {
    await this.run('set', () => this.cache.set(key, value, ttlMs));
  }

  /** Deletes keys, best effort (see the class comment). */
  async del(...keys: string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.run('del', () => this.cache.mdel(keys));
  }

  /** Round trip to Redis for health checks; bypasses the retry window and, when it succeeds, ends it. */
  async ping(): Promise<boolean> {
    const key = `health:ping:${process.pid}`;
    try {
      await this.withTimeout('ping', async () => {
        await this.cache.set(key, 1, 1000);
        if ((await this.cache.get(key)) !== 1) throw new Error('ping value not read back');
      });
      this.unavailableUntil = 0;
      this.markHealthy();
      return true;
    } catch (error) {
      this.markFailed('ping', error);
      return false;
    }
  }

  private async run<T>(operation: string, fn: () => Promise<T>, fallback?: T): Promise<T | undefined> {
    if (Date.now() < this.unavailableUntil) return fallback;
    const failuresBefore = this.failureCount;
    try {
      const result = await this.withTimeout(operation, fn);
      if (this.failureCount === failuresBefore) this.markHealthy();
      return result;
    } catch (error) {
      this.markFailed(operation, error);
      return fallback;
    }
  }

  private withTimeout<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    return withTimeout(fn(), this.timeoutMs, () => new CacheTimeoutError(operation, this.timeoutMs));
  }

  private markHealthy(): void {
    if (this.degraded) {
      this.logger.log('cache recovered: Redis answers again');
      this.degraded = false;
    }
  }

  private markFailed(operation: string, error: unknown): void {
    this.failureCount += 1;
    this.unavailableUntil = Date.now() + CACHE_RETRY_AFTER_MS;
    if (!this.degraded) {
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.warn(`cache unavailable (${operation}: ${reason}); serving from PostgreSQL`);
      this.degraded = true;
    }
  }
}
