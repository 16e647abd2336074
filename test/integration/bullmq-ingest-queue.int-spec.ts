import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { BullmqIngestQueue } from '../../src/knowledge/ingest/jobs/bullmq-ingest-queue.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { TEST_REDIS_URL, testRedisUrlThrough } from '../support/test-env.js';

describe('The ingest queue on Redis (BullMQ)', () => {
  it('sets its queue up again when Redis went away while BullMQ was setting it up, so that jobs are added once Redis is back', async () => {
    const redis = new URL(TEST_REDIS_URL);
    const proxyTo = (port?: number) => new TcpProxy(redis.hostname, Number(redis.port || 6379)).start(port);
    let proxy = await proxyTo();
    const queue = new BullmqIngestQueue(
      {
        redis: { url: testRedisUrlThrough(proxy.port), options: {} },
        prefix: 'rag',
        name: `ingest-test-${randomUUID()}`,
        commandTimeoutMs: 1000,
        lockMs: 1000,
        maxStalledCount: 1,
      },
      { moved: () => undefined, progress: () => undefined },
    );
    try {
      // The connection jobs are added on gives up on a command after one reconnection (adding fails at once while Redis
      // is away). Its first INFO is the client's ready check, the second BullMQ's version read: that one is never answered.
      const adding = (queue as unknown as { queueConnection: Redis }).queueConnection;
      await proxy.loseReplyTo('info', { after: 'info', deliver: true, only: (client) => client.remotePort === adding.stream?.localPort });
      // Redis goes away while the read waits: the connection is cut, and its reconnection refused, which fails the read.
      const refused = new Promise<void>((resolve) => adding.on('error', (error: Error) => /ECONNREFUSED/.test(error.message) && resolve()));
      await proxy.stop();
      await refused;
      proxy = await proxyTo(proxy.port);
      const id = randomUUID();
      // Without a queue set up again, every call fails at once ("Reached the max retries per request limit"). With it, a
      // call fails only by waiting out its time limit (a loaded machine setting the new queue up): that paces the attempts.
      let lastError: unknown;
      for (let attempt = 0; attempt < 100; attempt += 1) {
        lastError = await queue.add(id, 1).then(
          () => undefined,
          (error: unknown) => error,
        );
        if (lastError === undefined) break;
      }
      expect(lastError).toBeUndefined();
      expect(await queue.hold(id)).toBe('held');
    } finally {
      await queue.close();
      await proxy.stop();
    }
  });
});
