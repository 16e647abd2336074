import { randomUUID } from 'node:crypto';
import { createRedisKeyv } from '../../src/cache/cache.module.js';
import { loadConfig } from '../../src/config/app-config.js';
import { TEST_REDIS_URL } from '../support/test-env.js';

describe('The cache store on Redis', () => {
  it('answers calls made together before its connection is ready: the later ones wait for it instead of failing', async () => {
    // The client's connect timeout follows CACHE_COMMAND_TIMEOUT_MS: at its default (200 ms) a test worker's event loop
    // held by other work can run the timer before the connection's event, and every call then fails for that reason.
    const config = loadConfig({ NODE_ENV: 'test', REDIS_URL: TEST_REDIS_URL, CACHE_COMMAND_TIMEOUT_MS: '5000' });
    const keyv = createRedisKeyv(config, TEST_REDIS_URL);
    const key = `cache-store-test:${randomUUID()}`;
    try {
      // The first call opens the connection; the others come while it is not ready yet.
      const results = await Promise.allSettled([keyv.set(key, { a: 1 }), keyv.get(`${key}:absent`), keyv.set(`${key}:2`, 'two'), keyv.get(`${key}:absent`)]);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
      expect(await keyv.get(key)).toEqual({ a: 1 });
      expect(await keyv.get(`${key}:2`)).toBe('two');
    } finally {
      await keyv.delete([key, `${key}:2`]).catch(() => undefined);
      await keyv.disconnect();
    }
  });
});
