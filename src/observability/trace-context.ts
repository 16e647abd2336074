import { context, isSpanContextValid, propagation, trace } from '@opentelemetry/api';
import type { NextFunction, Request, Response } from 'express';

/** The active trace's id (32 hex digits), or undefined when tracing is off or nothing is traced. */
export function currentTraceId(): string | undefined {
  const spanContext = trace.getSpan(context.active())?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

export const TRACEPARENT_HEADER = 'traceparent';

/**
 * Express middleware: every response of a traced request carries the W3C
 * `traceparent` of the request's span, so a client (or a support ticket)
 * can name the trace. Nothing is added when tracing is off.
 */
export function traceparentHeader(_req: Request, res: Response, next: NextFunction): void {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  const traceparent = carrier[TRACEPARENT_HEADER];
  if (traceparent) res.setHeader(TRACEPARENT_HEADER, traceparent);
  next();
}
