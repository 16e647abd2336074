import KeyvRedis, { type RedisClientConnectionType } from '@keyv/redis';
import { CacheModule as NestCacheModule } from '@nestjs/cache-manager';
import { Global, Module } from '@nestjs/common';
import Keyv from 'keyv';
import { LRUCache } from 'lru-cache';
import { createCacheRedisClient } from '../common/redis-client.js';
import { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ResilientCache } from './resilient-cache.service.js';

/**
 * A Keyv store on Redis with no background reconnect loop: a lost connection
 * is re-opened by the next cache call, and ResilientCache bounds every call's time.
 */
export function createRedisKeyv(config: AppConfig, url: string): Keyv {
  const timeout = Math.max(config.redis.commandTimeoutMs, 50);
  const client = createCacheRedisClient(config.redis, url);
  const adapter = new KeyvRedis(client as RedisClientConnectionType, { connectionTimeout: timeout, throwOnConnectError: true, throwOnErrors: true });
  // Keys are stored exactly as named (chat_messages:..., chat_sessions:...), without a namespace prefix.
  adapter.namespace = undefined;
  const keyv = new Keyv({ store: adapter, useKeyPrefix: false, throwOnErrors: true });
  keyv.namespace = undefined;
  // Errors surface through the rejected promises ResilientCache handles; the emitter must not crash the process.
  keyv.on('error', () => undefined);
  adapter.on('error', () => undefined);
  return keyv;
}

/** Entries the in-process cache keeps (the least recently used go first). */
const IN_PROCESS_ENTRIES = 10_000;

/** Without Redis (one instance): the same versioned copies, in this process's memory. */
export function createInProcessKeyv(): Keyv {
  return new Keyv({ store: new LRUCache<string, NonNullable<unknown>>({ max: IN_PROCESS_ENTRIES }), useKeyPrefix: false });
}

@Global()
@Module({
  imports: [
    NestCacheModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        stores: [config.redis.url === null ? createInProcessKeyv() : createRedisKeyv(config, config.redis.url)],
        ttl: config.redis.ttlSeconds * 1000,
      }),
    }),
  ],
  providers: [ResilientCache],
  exports: [ResilientCache],
})
export class CacheModule {}
