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

describe('a Redis Cluster client', () => {
  it('keeps discovering a cluster whose nodes are all down, is neither open nor ready meanwhile, and stops when closed', async () => {
    let reported = 0;
    let secondError!: () => void;
    const twice = new Promise<void>((resolve) => (secondError = resolve));
    const client = createRedisClient(loadConfig({ NODE_ENV: 'test', REDIS_CLUSTER_NODES: '127.0.0.1:1' }), () => {
      reported += 1;
      if (reported === 2) secondError();
    })!;
    const connecting = client.connect();
    // A second concurrent connect shares the first discovery instead of failing with "already open".
    expect(client.connect()).toBe(connecting);
    await twice;
    expect(client.isOpen).toBe(false);
    expect(client.isReady).toBe(false);
    await closeRedisClient(client, 100);
    await expect(connecting).rejects.toThrow();
  });
});
