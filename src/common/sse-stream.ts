import type { Response } from 'express';

/** Starts a text/event-stream response (status 200, no caching or proxy buffering). */
export function openSse(res: Response): void {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
  res.setHeader('Cache-Control', 'no-cache, no-transform');
  // The socket closes with the stream, so a stream that ends during shutdown leaves no idle socket holding the server open.
  res.setHeader('Connection', 'close');
  res.setHeader('X-Accel-Buffering', 'no');
  res.flushHeaders();
  res.write(': stream open\n\n');
}

/** Sends a comment line every `intervalMs` so proxies and clients keep the connection; returns the stopper. */
export function startHeartbeat(res: Response, intervalMs: number): () => void {
  const timer = setInterval(() => res.write(': heartbeat\n\n'), intervalMs);
  return () => clearInterval(timer);
}
