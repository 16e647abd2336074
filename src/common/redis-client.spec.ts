import { loadConfig } from '../config/app-config.js';
import { closeRedisClient, createRedisClient } from './redis-client.js';

describe('closeRedisClient', () => {
  it('closes a client that was never connected without an error', async () => {
    const errors: Error[] = [];
    const client = createRedisClient(loadConfig({ NODE_ENV: 'test', REDIS_URL: 'redis://127.0.0.1:1' }), (error) => errors.push(error));
    await expect(closeRedisClient(client, 100)).resolves.toBeUndefined();
    expect(errors).toEqual([]);
  });
});
