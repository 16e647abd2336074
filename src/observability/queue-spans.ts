import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { recordFailure, TRACER_NAME } from './spans.js';

/**
 * Spans of a job queue, in the OpenTelemetry messaging conventions: `send
 * {queue}` (PRODUCER) where a job is queued, `process {queue}` (CONSUMER)
 * around each attempt at it. The producer's context travels with the job
 * (a W3C `traceparent` carrier in its data), so an attempt, on whichever
 * instance and however much later, continues the trace of the request that
 * queued it, and its PostgreSQL and Redis spans nest under it. With tracing
 * off the carrier stays empty and both wrappers cost a function call.
 */

export const ATTR_MESSAGING_SYSTEM = 'messaging.system';
export const ATTR_MESSAGING_OPERATION_TYPE = 'messaging.operation.type';
export const ATTR_MESSAGING_OPERATION_NAME = 'messaging.operation.name';
export const ATTR_MESSAGING_DESTINATION_NAME = 'messaging.destination.name';
export const ATTR_MESSAGING_MESSAGE_ID = 'messaging.message.id';
export const ATTR_JOB_ATTEMPT = 'rag.job.attempt';

/** The trace context a job carries (`traceparent`, `tracestate`), as text fields. */
export type TraceCarrier = Record<string, string>;

export interface QueueJob {
  /** The queue's implementation: `bullmq`, or `in_process` (one instance without Redis). */
  system: string;
  queue: string;
  jobId: string;
}

/** Queues a job in a `send {queue}` span; `work` gets the carrier to store with the job. */
export function traceJobSend<T>(job: QueueJob, work: (carrier: TraceCarrier) => Promise<T>): Promise<T> {
  return trace.getTracer(TRACER_NAME).startActiveSpan(`send ${job.queue}`, { kind: SpanKind.PRODUCER }, async (span) => {
    const carrier: TraceCarrier = {};
    if (span.isRecording()) {
      span.setAttributes(messagingAttributes(job, 'send'));
      propagation.inject(context.active(), carrier);
    }
    try {
      return await work(carrier);
    } catch (error) {
      if (span.isRecording()) recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * An attempt at a job: `process {queue}`, a child of the span that queued it
 * when the job carries one, else the root of a trace of its own (not a child
 * of whatever happened to be active when the queue started it).
 */
export function traceJobProcess<T>(job: QueueJob & { attempt: number; carrier?: TraceCarrier }, work: () => Promise<T>): Promise<T> {
  const parent = job.carrier && Object.keys(job.carrier).length > 0 ? propagation.extract(ROOT_CONTEXT, job.carrier) : ROOT_CONTEXT;
  return trace.getTracer(TRACER_NAME).startActiveSpan(`process ${job.queue}`, { kind: SpanKind.CONSUMER }, parent, async (span) => {
    if (span.isRecording()) span.setAttributes({ ...messagingAttributes(job, 'process'), [ATTR_JOB_ATTEMPT]: job.attempt });
    try {
      return await work();
    } catch (error) {
      if (span.isRecording()) recordFailure(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

function messagingAttributes(job: QueueJob, operation: 'send' | 'process') {
  return {
    [ATTR_MESSAGING_SYSTEM]: job.system,
    [ATTR_MESSAGING_OPERATION_TYPE]: operation,
    [ATTR_MESSAGING_OPERATION_NAME]: operation,
    [ATTR_MESSAGING_DESTINATION_NAME]: job.queue,
    [ATTR_MESSAGING_MESSAGE_ID]: job.jobId,
  };
}

/** A carrier read back from a job's stored data: text fields only, anything else dropped. */
export function traceCarrierOf(value: unknown): TraceCarrier | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const carrier: TraceCarrier = {};
  for (const [key, field] of Object.entries(value)) if (typeof field === 'string' && field.length <= 512) carrier[key] = field;
  return carrier;
}
