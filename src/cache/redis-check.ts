import { Redis, type RedisOptions } from 'ioredis';
import { describeRedis, ioredisTarget } from '../common/redis-client.js';
import type { AppConfig } from '../config/app-config.js';
import { hostPort, networkFailure } from '../common/network-failure.js';
import { EXIT_CONFIG, StartupFailure } from '../common/startup-failure.js';

/** How long the start-up check waits for Redis. */
export const REDIS_CHECK_TIMEOUT_MS = 3000;

/** What one connection found: Redis answered, refused the settings (its reply), or was not reached (why). */
type Probe = { ok: true } | { ok: false; reply?: string; cause: unknown };

/** One connection, no retries: PING, or on a cluster node CLUSTER INFO (a node without cluster support refuses it). */
async function probe(url: string | undefined, options: RedisOptions, command: 'ping' | 'cluster-info'): Promise<Probe> {
  const settings: RedisOptions = {
    ...options,
    lazyConnect: true,
    connectTimeout: REDIS_CHECK_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    sentinelRetryStrategy: () => null,
    enableOfflineQueue: false,
  };
  const client = url === undefined ? new Redis(settings) : new Redis(url, settings);
  // ioredis rejects with "Connection is closed."; what happened arrives as 'error' events.
  const errors: Error[] = [];
  client.on('error', (error: Error) => errors.push(error));
  try {
    await client.connect();
    if (command === 'ping') await client.ping();
    else await client.call('CLUSTER', 'INFO');
    return { ok: true };
  } catch (error) {
    const cause = errors.at(-1) ?? error;
    return { ok: false, cause, ...(cause instanceof Error && cause.name === 'ReplyError' ? { reply: cause.message } : {}) };
  } finally {
    client.disconnect();
  }
}

/**
 * The start-up check of REDIS_URL (the sentinels' master, or the cluster's
 * nodes): one connection, its database selected; on a cluster, each node in
 * turn until one answers. A server that is down (refused, timed out, not
 * found) is not fatal: the service runs without Redis until it answers (the
 * cache falls back to PostgreSQL; see docs/operations.md), and the answer is
 * that one warning line. A server that answers but refuses the settings
 * (password, database index, a node without cluster support) will not get
 * better by itself: that stops the service (StartupFailure).
 */
export async function checkRedis(redis: AppConfig['redis'], url: string): Promise<{ warning?: string }> {
  const where = describeRedis(redis, url, hostPort);
  const variable = redis.cluster ? 'REDIS_CLUSTER_NODES' : redis.sentinel ? 'REDIS_SENTINELS' : 'REDIS_URL';
  const target = ioredisTarget(redis, url);
  let result: Probe = { ok: false, cause: new Error('no node to ask') };
  if (target.cluster) {
    for (const node of target.cluster.nodes) {
      result = await probe(undefined, { ...target.options, host: node.host, port: node.port }, 'cluster-info');
      if (result.ok || result.reply) break;
    }
  } else {
    result = await probe(target.url, target.options, 'ping');
  }
  if (result.ok) return {};
  const { reply, cause } = result;
  if (reply && /^(WRONGPASS|NOAUTH|ERR AUTH|NOPERM)/.test(reply)) throw new StartupFailure(variable, `${where}: authentication failed: ${reply}`, EXIT_CONFIG);
  if (reply) throw new StartupFailure(variable, `${where}: ${reply}`, EXIT_CONFIG);
  const network = networkFailure(cause);
  if (network?.kind === 'tls') throw new StartupFailure(variable, `${where}: ${network.words}`, EXIT_CONFIG);
  const problem = network?.words ?? (cause instanceof Error ? cause.message : String(cause));
  return {
    warning: `${variable}: ${where}: ${problem}; starting without it (the cache falls back to PostgreSQL; rejoining runs from other instances, remote cancels and the ingest queue wait for it)`,
  };
}
