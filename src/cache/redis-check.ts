import { Redis, type RedisOptions } from 'ioredis';
import { describeRedis, ioredisTarget } from '../common/redis-client.js';
import type { AppConfig } from '../config/app-config.js';
import { hostPort, networkFailure } from '../common/network-failure.js';
import { EXIT_CONFIG, StartupFailure } from '../common/startup-failure.js';

/** How long the start-up check waits for Redis. */
export const REDIS_CHECK_TIMEOUT_MS = 3000;

/**
 * The start-up check of REDIS_URL: one connection, its database selected.
 * A server that is down (refused, timed out, not found) is not fatal: the
 * service runs without Redis until it answers (the cache falls back to
 * PostgreSQL; see docs/operations.md), and the answer is that one warning
 * line. A server that answers but refuses the settings (password, database
 * index) will not get better by itself: that stops the service
 * (StartupFailure).
 */
export async function checkRedis(redis: AppConfig['redis'], url: string): Promise<{ warning?: string }> {
  const where = describeRedis(redis, url, hostPort);
  const variable = redis.sentinel ? 'REDIS_SENTINELS' : 'REDIS_URL';
  const target = ioredisTarget(redis, url);
  const settings: RedisOptions = {
    ...target.options,
    lazyConnect: true,
    connectTimeout: REDIS_CHECK_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    sentinelRetryStrategy: () => null,
    enableOfflineQueue: false,
  };
  const client = target.url === undefined ? new Redis(settings) : new Redis(target.url, settings);
  // ioredis rejects with "Connection is closed."; what happened arrives as 'error' events.
  const errors: Error[] = [];
  client.on('error', (error: Error) => errors.push(error));
  try {
    await client.connect();
    await client.ping();
    return {};
  } catch (error) {
    const cause = errors.at(-1) ?? error;
    const reply = cause instanceof Error && cause.name === 'ReplyError' ? cause.message : undefined;
    if (reply && /^(WRONGPASS|NOAUTH|ERR AUTH|NOPERM)/.test(reply)) throw new StartupFailure(variable, `${where}: authentication failed: ${reply}`, EXIT_CONFIG);
    if (reply) throw new StartupFailure(variable, `${where}: ${reply}`, EXIT_CONFIG);
    const network = networkFailure(cause);
    if (network?.kind === 'tls') throw new StartupFailure(variable, `${where}: ${network.words}`, EXIT_CONFIG);
    const problem = network?.words ?? (cause instanceof Error ? cause.message : String(cause));
    return {
      warning: `${variable}: ${where}: ${problem}; starting without it (the cache falls back to PostgreSQL; rejoining runs from other instances, remote cancels and the ingest queue wait for it)`,
    };
  } finally {
    client.disconnect();
  }
}
