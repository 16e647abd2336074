import { createClient, createSentinel } from '@keyv/redis';
import type { RedisOptions } from 'ioredis';
import type { AppConfig } from '../config/app-config.js';
import { withTimeout } from './with-timeout.js';

type RedisConfig = AppConfig['redis'];

/** What REDIS_URL says about the data nodes' login, for a Sentinel deployment (its host is not used). */
function login(url: string): { username?: string; password?: string; database?: number } {
  const parsed = new URL(url);
  const database = Number(parsed.pathname.replace(/^\//, '') || 0);
  return {
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(database ? { database } : {}),
  };
}

type Reconnect = false | ((retries: number) => number);

function socketOptions(connectTimeout: number, reconnect: Reconnect) {
  return { connectTimeout, reconnectStrategy: reconnect };
}

const backoff = (retries: number) => Math.min(100 * 2 ** retries, 2000);

interface ClientOptions {
  reconnect: Reconnect;
  connectTimeout: number;
  /** Commands fail at once while disconnected instead of queueing for as long as the outage lasts. */
  failWhileDisconnected: boolean;
}

/**
 * A node-redis client of the configured Redis: one server (REDIS_URL), or
 * the master a set of sentinels names (REDIS_SENTINELS), followed through
 * failovers. The Sentinel client has the same command API; it is typed as
 * the plain client, which is what callers use.
 */
function createBareClient(redis: RedisConfig, url: string, options: ClientOptions): RedisClient {
  const { reconnect, failWhileDisconnected: disableOfflineQueue } = options;
  let { connectTimeout } = options;
  if (redis.sentinel) {
    // Finding the master takes a round trip to a sentinel before the first to the master: a busy start-up must not time it out.
    connectTimeout = Math.max(connectTimeout, redis.commandTimeoutMs * 5, 2000);
    const sentinel = createSentinel({
      name: redis.sentinel.master,
      sentinelRootNodes: redis.sentinel.nodes,
      nodeClientOptions: { ...login(url), disableOfflineQueue, socket: socketOptions(connectTimeout, reconnect) },
      sentinelClientOptions: { ...(redis.sentinel.password ? { password: redis.sentinel.password } : {}), socket: socketOptions(connectTimeout, reconnect) },
      masterPoolSize: 1,
      // The topology is asked again this often besides the sentinels' own notices: a failover is followed within it.
      scanInterval: 1000,
      passthroughClientErrorEvents: true,
    });
    return sentinel as unknown as RedisClient;
  }
  return createClient({ url, disableOfflineQueue, socket: socketOptions(connectTimeout, reconnect) });
}

/** The client the rest of the code talks to (a Sentinel client offers the same commands). */
export type RedisClient = ReturnType<typeof createClient>;

/**
 * A node-redis client that reconnects in the background with capped backoff; errors go to `onError`.
 * Null without Redis (REDIS_URL=none): the caller runs its in-process path.
 */
export function createRedisClient(config: AppConfig, onError: (error: Error) => void): RedisClient | null {
  if (config.redis.url === null) return null;
  const client = createBareClient(config.redis, config.redis.url, {
    reconnect: backoff,
    connectTimeout: Math.max(config.redis.commandTimeoutMs, 500),
    failWhileDisconnected: true,
  });
  client.on('error', onError);
  return client;
}

/**
 * A node-redis client for the cache's Keyv store: it never reconnects by
 * itself (the store's adapter reconnects when it needs to), and a command
 * sent while it connects waits for the connection (the adapter hands out a
 * client that is open but not ready yet to concurrent calls); ResilientCache
 * bounds each call's time.
 */
export function createCacheRedisClient(redis: RedisConfig, url: string): RedisClient {
  return createBareClient(redis, url, { reconnect: false, connectTimeout: Math.max(redis.commandTimeoutMs, 50), failWhileDisconnected: false });
}

/** ioredis options for the configured Redis (BullMQ, the start-up check): the URL's, or the sentinels' master. */
export function ioredisTarget(redis: RedisConfig, url: string): { url?: string; options: RedisOptions } {
  if (!redis.sentinel) return { url, options: {} };
  const { username, password, database } = login(url);
  return {
    options: {
      sentinels: redis.sentinel.nodes,
      name: redis.sentinel.master,
      ...(redis.sentinel.password ? { sentinelPassword: redis.sentinel.password } : {}),
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
      ...(database ? { db: database } : {}),
    },
  };
}

/** Where Redis is, for messages: host:port, or the sentinels and the master's name; never a password. */
export function describeRedis(redis: RedisConfig, url: string, hostPort: (url: string, port: number) => string): string {
  if (redis.sentinel) return `Redis Sentinel master ${redis.sentinel.master} (sentinels ${redis.sentinel.nodes.map((node) => `${node.host}:${node.port}`).join(', ')})`;
  return `Redis at ${hostPort(url, 6379)}`;
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
