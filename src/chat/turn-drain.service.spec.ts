import { EventEmitter } from 'node:events';
import type { Response } from 'express';
import { DrainState } from '../common/drain-state.js';
import { loadConfig } from '../config/app-config.js';
import type { ChatService } from './chat.service.js';
import type { RunCancellation } from './run-cancellation.service.js';
import { ShuttingDownError, TurnDrain } from './turn-drain.service.js';

/** A response as far as the drain sees it: headers and its `close` event. */
function response(): Response & { headers: Record<string, string>; close(): void } {
  const emitter = new EventEmitter();
  const headers: Record<string, string> = {};
  return Object.assign(emitter, {
    headers,
    setHeader: (name: string, value: string) => (headers[name] = value),
    close: () => emitter.emit('close'),
  }) as unknown as Response & { headers: Record<string, string>; close(): void };
}

function drainWith(drainMs: number, aborted: Error[] = [], onAbort: () => void = () => undefined) {
  const config = loadConfig({ SHUTDOWN_DRAIN_MS: String(drainMs), SHUTDOWN_TIMEOUT_MS: String(drainMs + 1000) });
  const chat = { drain: async () => undefined } as unknown as ChatService;
  const abortAll = (reason: Error) => {
    aborted.push(reason);
    onAbort();
    return 1;
  };
  const cancellation = { abortAll } as unknown as RunCancellation;
  return new TurnDrain(new DrainState(), chat, cancellation, config);
}

describe('TurnDrain', () => {
  it('admits turns until the drain starts, then refuses them with shutting_down and Retry-After', async () => {
    const drain = drainWith(0);
    expect(() => drain.admit(response())).not.toThrow();
    void drain.shutdown();
    const refused = response();
    expect(() => drain.admit(refused)).toThrow(ShuttingDownError);
    expect(refused.headers['Retry-After']).toMatch(/^\d+$/);
  });

  it('waits for the turn requests it admitted, and ends nothing when they finish in time', async () => {
    const aborted: Error[] = [];
    const drain = drainWith(60_000, aborted);
    const res = response();
    drain.admit(res);
    let drained = false;
    const shutdown = drain.shutdown().then(() => (drained = true));
    await new Promise(setImmediate);
    expect(drained).toBe(false);
    res.close();
    await shutdown;
    expect(aborted).toEqual([]);
    expect(drain.signal.aborted).toBe(false);
  });

  it('past the drain time ends the turns still running with shutting_down', async () => {
    const aborted: Error[] = [];
    let abortCame: () => void = () => undefined;
    const abortedOnce = new Promise<void>((resolve) => (abortCame = resolve));
    const drain = drainWith(0, aborted, () => abortCame());
    const res = response();
    drain.admit(res);
    const shutdown = drain.shutdown();
    await abortedOnce;
    expect(aborted).toEqual([expect.objectContaining({ code: 'shutting_down' })]);
    expect(drain.signal.reason).toMatchObject({ code: 'shutting_down' });
    // The aborted turn ends, and with it its request.
    res.close();
    await shutdown;
  });

  it('stops the streams still open once drained, and a stream opened later at once', async () => {
    const drain = drainWith(0);
    const stopped: string[] = [];
    drain.openStream(() => stopped.push('open'));
    const unregister = drain.openStream(() => stopped.push('ended before'));
    unregister();
    await drain.shutdown();
    expect(stopped).toEqual(['open']);
    drain.openStream(() => stopped.push('late'));
    await new Promise(setImmediate);
    expect(stopped).toEqual(['open', 'late']);
  });

  it('gives the streams their terminal event before the shutdown timeout even when an ended turn never settles', async () => {
    // SHUTDOWN_TIMEOUT_MS is the drain plus 1 s (drainWith), all of it the stream-stop margin: settling gets no time.
    const drain = drainWith(0);
    const stopped: string[] = [];
    drain.openStream(() => stopped.push('stream'));
    drain.admit(response()); // a client that never reads its response: its request never closes
    await drain.shutdown();
    expect(stopped).toEqual(['stream']);
  });
});
