import { createClient } from '@keyv/redis';
import type { AppConfig } from '../config/app-config.js';
import { withTimeout } from './with-timeout.js';

function connectOptions(config: AppConfig, url: string) {
  return {
    url,
    // Commands fail at once while disconnected instead of queueing for as long as the outage lasts.
    disableOfflineQueue: true,
    socket: {
      connectTimeout: Math.max(config.redis.commandTimeoutMs, 500),
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000),
    },
  };
}

export type RedisClient = ReturnType<typeof createBareClient>;

function createBareClient(config: AppConfig, url: string) {
  return createClient(connectOptions(config, url));
}

/**
 * A node-redis client that reconnects in the background with capped backoff; errors go to `onError`.
 * Null without Redis (REDIS_URL=none): the caller runs its in-process path.
 */
export function createRedisClient(config: AppConfig, onError: (error: Error) => void): RedisClient | null {
  if (config.redis.url === null) return null;
  const client = createBareClient(config, config.redis.url);
  client.on('error', onError);
  return client;
}

/**
 * Closes gracefully (pending replies first) when Redis answers, and drops the
 * connection when it does not: a stalled Redis must not hold shutdown.
 */
export async function closeRedisClient(client: RedisClient | null, timeoutMs: number): Promise<void> {
  if (!client?.isOpen) {
    // Never connected (a limit switched off never opens its client) or already gone: nothing to close.
    return;
  }
  await withTimeout(client.close(), timeoutMs, () => new Error('Redis did not close in time')).catch(() => {
    if (client.isOpen) client.destroy();
  });
}
