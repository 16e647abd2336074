import { jest } from '@jest/globals';
import { loadConfig } from '../config/app-config.js';
import type { RunEvent } from './run-event.js';
import { RunEventsGoneError, RunEventsService } from './run-events.service.js';

/** Every event of a followed stream, to its end. */
async function drain(stream: AsyncIterable<RunEvent>): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

describe('RunEventsService without Redis (REDIS_URL=none)', () => {
  const config = loadConfig({ REDIS_URL: 'none' });
  let service: RunEventsService;
  beforeEach(() => {
    service = new RunEventsService(config);
    service.onModuleInit();
  });
  afterEach(() => service.onApplicationShutdown());

  it('keeps a finished run’s events in memory: a rejoin after the end gets them all, and from any id', async () => {
    service.open('run-1');
    service.publish('run-1', 'token', { text: 'Hel' });
    service.publish('run-1', 'token', { text: 'lo' });
    service.publish('run-1', 'done', { response: 'Hello', session_id: '6d7f7c4e-0000-4000-8000-000000000001' });
    await service.flushed('run-1');
    const status = jest.fn(async () => 'running' as const);
    expect((await drain(await service.follow('run-1', 0, { status }))).map((event) => event.id)).toEqual([1, 2, 3]);
    expect((await drain(await service.follow('run-1', 2, { status }))).map((event) => event.event)).toEqual(['done']);
    expect(status).not.toHaveBeenCalled();
  });

  it('keeps them for RUN_EVENTS_TTL_SECONDS, as Redis would, not only for the minute a run is kept beside Redis', async () => {
    jest.useFakeTimers();
    try {
      service.open('run-3');
      service.publish('run-3', 'done', { response: 'ok', session_id: '6d7f7c4e-0000-4000-8000-000000000001' });
      jest.advanceTimersByTime(config.chat.runEventsTtlSeconds * 1000 - 1000);
      const status = async () => 'done' as const;
      expect((await drain(await service.follow('run-3', 0, { status }))).map((event) => event.event)).toEqual(['done']);
      jest.advanceTimersByTime(2000);
      await expect(service.follow('run-3', 0, { status })).rejects.toBeInstanceOf(RunEventsGoneError);
    } finally {
      jest.useRealTimers();
    }
  });

  it('streams a live run to a follower that joins midway', async () => {
    service.open('run-2');
    service.publish('run-2', 'token', { text: 'a' });
    const following = drain(await service.follow('run-2', 0, { status: async () => 'running' }));
    service.publish('run-2', 'token', { text: 'b' });
    service.publish('run-2', 'done', { response: 'ab', session_id: '6d7f7c4e-0000-4000-8000-000000000001' });
    expect((await following).map((event) => event.id)).toEqual([1, 2, 3]);
  });

  it('answers a run this process never held (an earlier process ran it): lost when it never ended, gone when it did', async () => {
    const lost = await drain(await service.follow('run-earlier', 4, { status: async () => 'running' }));
    expect(lost).toEqual([{ id: 5, event: 'error', data: expect.objectContaining({ code: 'run_lost' }) }]);
    const abandoned = await drain(await service.follow('run-earlier', 0, { status: async () => 'abandoned' }));
    expect(abandoned[0]).toMatchObject({ event: 'error', data: { code: 'run_lost' } });
    await expect(service.follow('run-earlier', 0, { status: async () => 'done' })).rejects.toBeInstanceOf(RunEventsGoneError);
  });
});
