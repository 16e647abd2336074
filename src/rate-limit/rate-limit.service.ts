import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, RLWrapperTimeouts } from 'rate-limiter-flexible';
import { closeRedisClient, createRedisClient, RedisClient } from '../common/redis-client.js';
import { userHashTag } from '../common/redis-keys.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics } from '../observability/metrics.js';

/** The routes that cost the most: chat turns, knowledge searches and document uploads, limited per user. */
export type RateLimitBucket = 'chat' | 'search' | 'upload' | 'run_control';

export type RateLimitVerdict = { allowed: true } | { allowed: false; retryAfterSeconds: number; spentBy: 'user' | 'api_key' };

/**
 * Per-user request budgets shared by every instance (a counter per user and
 * minute in Redis, rate-limiter-flexible, `rate_limit:<bucket>:{u<user>}`
 * with the user's hash tag, see userHashTag). A Redis that is down or does not
 * answer within the cache command timeout falls back to a per-instance
 * counter of the same budget, so limiting degrades instead of failing requests.
 */
/** A budget's counter: shared in Redis with a per-instance insurance, or per-instance only (no Redis). */
type Limiter = RLWrapperTimeouts | RateLimiterMemory;

@Injectable()
export class RateLimitService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(RateLimitService.name);
  /** Null without Redis (one instance): each budget is counted in this process only. */
  private readonly redis: RedisClient | null;
  private readonly limiters = new Map<RateLimitBucket, Limiter>();
  /** The same budgets per API key, under their own prefix so no user id can name a key's counter. */
  private readonly keyLimiters = new Map<RateLimitBucket, Limiter>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.redis = createRedisClient(config, () => undefined); // the per-instance counter answers meanwhile
    const perMinute: Record<RateLimitBucket, number> = {
      chat: config.rateLimit.chatPerMinute,
      search: config.rateLimit.searchPerMinute,
      upload: config.rateLimit.uploadPerMinute,
      run_control: config.rateLimit.runControlPerMinute,
    };
    for (const bucket of Object.keys(perMinute) as RateLimitBucket[]) {
      const points = perMinute[bucket];
      if (points === 0) continue;
      this.limiters.set(bucket, this.limiter(`rate_limit:${bucket}`, `rl_${bucket}_local`, points));
      this.keyLimiters.set(bucket, this.limiter(`rate_limit_api_key:${bucket}`, `rl_api_key_${bucket}_local`, points));
    }
  }

  private limiter(sharedPrefix: string, localPrefix: string, points: number): Limiter {
    const insurance = new RateLimiterMemory({ keyPrefix: localPrefix, points, duration: 60 });
    if (!this.redis) return insurance;
    const shared = new RateLimiterRedis({
      storeClient: this.redis,
      useRedisPackage: true,
      rejectIfRedisNotReady: true,
      keyPrefix: sharedPrefix,
      points,
      duration: 60,
    });
    return new RLWrapperTimeouts({ limiter: shared, insuranceLimiter: insurance, timeoutMs: this.config.redis.commandTimeoutMs });
  }

  onModuleInit(): void {
    if (this.limiters.size > 0) this.redis?.connect().catch(() => undefined);
  }

  async onApplicationShutdown(): Promise<void> {
    await closeRedisClient(this.redis, Math.max(this.config.redis.commandTimeoutMs * 5, 1000));
  }

  /**
   * Spends one request of the user's budget for the bucket and, for a request
   * authenticated by an API key, of the key's own budget first: a key cannot
   * go past its budget, and all of a user's keys together still spend (and
   * stop at) the user's one.
   */
  async consume(bucket: RateLimitBucket, userId: string, apiKeyId?: string): Promise<RateLimitVerdict> {
    let verdict: RateLimitVerdict = { allowed: true };
    if (apiKeyId !== undefined) verdict = await this.spend(this.keyLimiters.get(bucket), apiKeyId, 'api_key');
    if (verdict.allowed) verdict = await this.spend(this.limiters.get(bucket), userHashTag(userId), 'user');
    if (!verdict.allowed) this.metrics.rateLimitRefused(bucket, verdict.spentBy);
    return verdict;
  }

  /**
   * Gives back the request `consume` counted, to the key's budget and the
   * user's: for a request refused before it did any work. Best effort: a
   * budget that cannot be reached stays spent until its minute ends.
   */
  async refund(bucket: RateLimitBucket, userId: string, apiKeyId?: string): Promise<void> {
    const refunds = [this.limiters.get(bucket)?.reward(userHashTag(userId), 1)];
    if (apiKeyId !== undefined) refunds.push(this.keyLimiters.get(bucket)?.reward(apiKeyId, 1));
    for (const refund of await Promise.allSettled(refunds)) {
      if (refund.status === 'rejected') this.logger.warn(`rate limit not refunded: ${(refund.reason as Error).message}`);
    }
  }

  private async spend(limiter: Limiter | undefined, key: string, spentBy: 'user' | 'api_key'): Promise<RateLimitVerdict> {
    if (!limiter) return { allowed: true };
    try {
      await limiter.consume(key);
      return { allowed: true };
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)), spentBy };
      }
      // Neither Redis nor the insurance counter answered: let the request through rather than fail it.
      this.logger.warn(`rate limit not checked: ${(rejection as Error).message}`);
      return { allowed: true };
    }
  }
}
