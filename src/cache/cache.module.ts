import KeyvRedis from '@keyv/redis';
import { CacheModule as NestCacheModule } from '@nestjs/cache-manager';
import { Global, Module } from '@nestjs/common';
import Keyv from 'keyv';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { ResilientCache } from './resilient-cache.service';

/** A Keyv store on Redis that fails fast: no offline queue, no background reconnect loop. */
export function createRedisKeyv(config: AppConfig): Keyv {
  const timeout = Math.max(config.redis.commandTimeoutMs, 50);
  const adapter = new KeyvRedis(
    {
      url: config.redis.url,
      disableOfflineQueue: true,
      socket: { connectTimeout: timeout, reconnectStrategy: false },
    },
    { connectionTimeout: timeout, throwOnConnectError: true, throwOnErrors: true },
  );
  // Keys are stored exactly as named (chat_messages:..., chat_sessions:...), without a namespace prefix.
  adapter.namespace = undefined;
  const keyv = new Keyv({ store: adapter, useKeyPrefix: false, throwOnErrors: true });
  keyv.namespace = undefined;
  // Errors surface through the rejected promises ResilientCache handles; the emitter must not crash the process.
  keyv.on('error', () => undefined);
  adapter.on('error', () => undefined);
  return keyv;
}

@Global()
@Module({
  imports: [
    NestCacheModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({
        stores: [createRedisKeyv(config)],
        ttl: config.redis.ttlSeconds * 1000,
      }),
    }),
  ],
  providers: [ResilientCache],
  exports: [ResilientCache],
})
export class CacheModule {}
