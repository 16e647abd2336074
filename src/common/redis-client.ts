import { createClient, createCluster, createSentinel } from '@keyv/redis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
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
  /** The connections' CLIENT SETNAME, so CLIENT LIST tells what they are for. */
  name?: string;
}

/**
 * A node-redis client of the configured Redis: one server (REDIS_URL), or
 * the master a set of sentinels names (REDIS_SENTINELS), followed through
 * failovers. The Sentinel client has the same command API; it is typed as
 * the plain client, which is what callers use.
 */
function createBareClient(redis: RedisConfig, url: string, options: ClientOptions): RedisClient {
  const { reconnect, failWhileDisconnected: disableOfflineQueue } = options;
  const named = options.name ? { name: options.name } : {};
  let { connectTimeout } = options;
  if (redis.sentinel) {
    // Finding the master takes a round trip to a sentinel before the first to the master: a busy start-up must not time it out.
    connectTimeout = Math.max(connectTimeout, redis.commandTimeoutMs * 5, 2000);
    const sentinel = createSentinel({
      name: redis.sentinel.master,
      sentinelRootNodes: redis.sentinel.nodes,
      nodeClientOptions: { ...login(url), ...named, disableOfflineQueue, socket: socketOptions(connectTimeout, reconnect) },
      sentinelClientOptions: { ...(redis.sentinel.password ? { password: redis.sentinel.password } : {}), socket: socketOptions(connectTimeout, reconnect) },
      masterPoolSize: 1,
      // The topology is asked again this often besides the sentinels' own notices: a failover is followed within it.
      scanInterval: 1000,
      passthroughClientErrorEvents: true,
    });
    return sentinel as unknown as RedisClient;
  }
  if (redis.cluster) return createClusterClient(redis.cluster.nodes, url, { ...options, connectTimeout });
  return createClient({ url, ...named, disableOfflineQueue, socket: socketOptions(connectTimeout, reconnect) });
}

/** The cluster clients made here: closing one that is still discovering must stop its discovery. */
const clusters = new WeakSet<object>();

/** Emitted by a cluster client after it read the topology again (a failover, a node that left): sharded subscriptions are renewed on it. */
export const CLUSTER_REDISCOVERED = 'rag:cluster-rediscovered';

/** How long after a node's error the topology is read again (at most once per interval while errors go on). */
const REDISCOVER_AFTER_MS = 1000;
/** How often the topology is read again regardless (each reading opens a connection of its own for CLUSTER SLOTS). */
const TOPOLOGY_REFRESH_MS = 30_000;
/** How many of the masters seen lately are asked besides the configured nodes. */
const SEEN_MASTERS_KEPT = 16;

/**
 * The cluster clients of this process that are open: when one finds the
 * masters changed, the others read the topology too, so a client that never
 * used the failed master (a cancel's publisher) learns of a failover as soon
 * as any client does.
 */
const topologyWatchers = new Set<() => void>();

/**
 * Every master a cluster client of this process has seen, by address: a
 * client that discovers the cluster later (the cache connects on its first
 * use) asks them too, so a failover of the only configured node does not
 * leave it without a node to ask.
 */
const seenMasters = new Map<string, { host: string; port: number }>();

/** The part of node-redis's cluster internals that reads the topology again from a given node. */
interface ClusterSlots {
  rediscover(startWith: { options: { socket: { host: string; port: number } } }): Promise<void>;
}

/**
 * A node-redis cluster client, shaped as the plain client the callers use.
 * `isOpen` and `isReady` say whether the topology is known: node-redis calls
 * a cluster open from the start of its discovery, when a command (or a
 * Keyv call that found it open) would find no slot map. `connect()` is
 * shared by concurrent callers and resolves once the topology is known; with
 * `reconnect`, it keeps trying with backoff until a node answers or the
 * client is closed (node-redis gives up after one pass over the nodes).
 * Nodes are connected when first used (a master that is down neither holds
 * the discovery nor costs connections it would not serve), and reconnect
 * with backoff; a command to a node that is away fails at once. node-redis
 * reads the topology again only on a MOVED reply, which a dead master never
 * sends: here a node's error reads it again (through another master), as
 * does another client of the process that found the masters changed, and a
 * slow regular refresh; so a failover's promoted replica takes over its
 * slots, and CLUSTER_REDISCOVERED tells the sharded subscribers to renew
 * theirs.
 */
function createClusterClient(nodes: Array<{ host: string; port: number }>, url: string, options: ClientOptions): RedisClient {
  const { username, password } = login(url);
  const tls = new URL(url).protocol === 'rediss:';
  // node-redis keeps this array and walks it at each discovery: the masters seen since are added to it.
  const rootNodes = nodes.map((node) => ({ socket: { host: node.host, port: node.port } }));
  const learn = () => {
    for (const master of cluster.masters) {
      const address = `${master.host}:${master.port}`;
      // The most recently seen last; the oldest go first (addresses that left do not pile up).
      seenMasters.delete(address);
      seenMasters.set(address, { host: master.host, port: master.port });
      if (seenMasters.size > SEEN_MASTERS_KEPT) seenMasters.delete(seenMasters.keys().next().value!);
    }
  };
  const askSeenMasters = () => {
    rootNodes.length = nodes.length;
    for (const [address, node] of seenMasters) {
      if (!rootNodes.some((root) => `${root.socket.host}:${root.socket.port}` === address)) rootNodes.push({ socket: { host: node.host, port: node.port } });
    }
  };
  const cluster = createCluster({
    rootNodes,
    defaults: {
      ...(username ? { username } : {}),
      ...(password ? { password } : {}),
      ...(options.name ? { name: options.name } : {}),
      disableOfflineQueue: true,
      socket: { ...socketOptions(options.connectTimeout, backoff), ...(tls ? { tls: true as const } : {}) },
    },
    // Read and write on the masters: a replica's copy may lag behind what the user just wrote.
    useReplicas: false,
    minimizeConnections: true,
  });
  // The nodes' own errors (a node restarting) come as node-error; the caller's error handler hears them too.
  const report = (error: unknown) => {
    if (cluster.listenerCount('error') > 0) cluster.emit('error', error);
  };

  let open = false;
  let closed = false;
  let pending: Promise<typeof cluster> | null = null;
  let rediscovery: NodeJS.Timeout | undefined;
  const connectOnce = cluster.connect.bind(cluster);
  const closeCluster = cluster.close.bind(cluster);
  const destroyCluster = cluster.destroy.bind(cluster);
  const destroyQuietly = () => {
    try {
      destroyCluster();
    } catch {
      // Never connected: nothing to destroy.
    }
  };
  const retry = options.reconnect;
  const discover = async () => {
    for (let attempt = 0; ; attempt += 1) {
      try {
        askSeenMasters();
        await connectOnce();
        if (closed) throw new Error('the Redis Cluster client was closed');
        learn();
        open = true;
        topologyWatchers.add(readSoon);
        rediscoverIn(TOPOLOGY_REFRESH_MS);
        return cluster;
      } catch (error) {
        // Closed while discovering: node-redis may have made node clients after its own close emptied its maps.
        if (closed) destroyQuietly();
        if (closed || retry === false) throw error;
        report(error);
        await new Promise((resolve) => setTimeout(resolve, retry(attempt)).unref());
        if (closed) throw error;
      }
    }
  };
  /** Nodes whose connection failed since the topology was last read: not asked for it. */
  const failing = new Set<string>();
  const mastersNow = () =>
    cluster.masters
      .map((master) => `${master.host}:${master.port}`)
      .sort()
      .join(',');
  const rediscover = async () => {
    const slots = (cluster as unknown as { _self: { _slots: ClusterSlots } })._self._slots;
    // Asked of another master (the failing one may be gone for good), else of a configured node.
    const others = cluster.masters.filter((master) => !failing.has(`${master.host}:${master.port}`));
    const candidates = others.length > 0 ? others : nodes;
    const from = candidates[Math.floor(Math.random() * candidates.length)];
    const before = mastersNow();
    askSeenMasters();
    await slots.rediscover({ options: { socket: { host: from.host, port: from.port } } });
    failing.clear();
    learn();
    if (open && !closed && mastersNow() !== before) {
      cluster.emit(CLUSTER_REDISCOVERED);
      for (const watcher of topologyWatchers) if (watcher !== readSoon) watcher();
    }
  };
  /** Another client of the process found the masters changed. */
  const readSoon = () => rediscoverIn(0);
  let dueAt = Infinity;
  let rediscovering = false;
  /** Reads the topology again in `ms`, or sooner when it is due sooner already; one read at a time. */
  const rediscoverIn = (ms: number) => {
    if (!open || closed || performance.now() + ms >= dueAt) return;
    clearTimeout(rediscovery);
    dueAt = performance.now() + ms;
    rediscovery = setTimeout(() => {
      rediscovery = undefined;
      dueAt = Infinity;
      if (rediscovering) return;
      rediscovering = true;
      void rediscover()
        .catch(report)
        .finally(() => {
          rediscovering = false;
          rediscoverIn(TOPOLOGY_REFRESH_MS);
        });
    }, ms).unref();
  };
  cluster.on('node-error', (error: unknown, node?: { host: string; port: number }) => {
    report(error);
    if (node) failing.add(`${node.host}:${node.port}`);
    // Sooner than the regular refresh.
    rediscoverIn(REDISCOVER_AFTER_MS);
  });
  Object.defineProperty(cluster, 'isOpen', { get: () => open });
  Object.defineProperty(cluster, 'isReady', { get: () => open });
  cluster.connect = () => {
    if (open) return Promise.resolve(cluster);
    if (!pending) {
      closed = false;
      pending = discover().finally(() => (pending = null));
    }
    return pending;
  };
  const stop = () => {
    closed = true;
    open = false;
    topologyWatchers.delete(readSoon);
    clearTimeout(rediscovery);
    rediscovery = undefined;
    dueAt = Infinity;
  };
  cluster.close = () => {
    const wasOpen = open;
    stop();
    return wasOpen ? closeCluster() : Promise.resolve(destroyQuietly());
  };
  cluster.destroy = () => {
    stop();
    destroyQuietly();
  };
  clusters.add(cluster);
  return cluster as unknown as RedisClient;
}

/** The client the rest of the code talks to (a Sentinel client offers the same commands). */
export type RedisClient = ReturnType<typeof createClient>;

/**
 * A node-redis client that reconnects in the background with capped backoff; errors go to `onError`.
 * Null without Redis (REDIS_URL=none): the caller runs its in-process path.
 */
export function createRedisClient(config: AppConfig, onError: (error: Error) => void, name?: string): RedisClient | null {
  if (config.redis.url === null) return null;
  const client = createBareClient(config.redis, config.redis.url, {
    reconnect: backoff,
    connectTimeout: Math.max(config.redis.commandTimeoutMs, 500),
    failWhileDisconnected: true,
    ...(name ? { name } : {}),
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

/** Where ioredis connects (BullMQ, the start-up check): a URL, the sentinels' master, or a cluster's nodes. */
export interface IoredisTarget {
  url?: string;
  /** The connection's options (for a cluster: each node's). */
  options: RedisOptions;
  /** Redis Cluster: the nodes to discover it from, and the cluster client's own options. */
  cluster?: { nodes: Array<{ host: string; port: number }>; options: ClusterOptions };
}

/** ioredis options for the configured Redis (BullMQ, the start-up check): the URL's, the sentinels' master, or the cluster. */
export function ioredisTarget(redis: RedisConfig, url: string): IoredisTarget {
  if (redis.cluster) {
    const { username, password } = login(url);
    const tls = new URL(url).protocol === 'rediss:';
    const options: RedisOptions = { ...(username ? { username } : {}), ...(password ? { password } : {}), ...(tls ? { tls: {} } : {}) };
    return { options, cluster: { nodes: redis.cluster.nodes, options: {} } };
  }
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
  if (redis.cluster) return `Redis Cluster (nodes ${redis.cluster.nodes.map((node) => `${node.host}:${node.port}`).join(', ')})`;
  if (redis.sentinel) return `Redis Sentinel master ${redis.sentinel.master} (sentinels ${redis.sentinel.nodes.map((node) => `${node.host}:${node.port}`).join(', ')})`;
  return `Redis at ${hostPort(url, 6379)}`;
}

/**
 * Closes gracefully (pending replies first) when Redis answers, and drops the
 * connection when it does not: a stalled Redis must not hold shutdown.
 */
export async function closeRedisClient(client: RedisClient | null, timeoutMs: number): Promise<void> {
  if (client && !client.isOpen && clusters.has(client)) {
    // A cluster still discovering its topology (or never started): stop it.
    client.destroy();
    return;
  }
  if (!client?.isOpen) {
    // Never connected (a limit switched off never opens its client) or already gone: nothing to close.
    return;
  }
  await withTimeout(client.close(), timeoutMs, () => new Error('Redis did not close in time')).catch(() => {
    try {
      client.destroy();
    } catch {
      // Closed meanwhile.
    }
  });
}
