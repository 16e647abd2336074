import { TraceState } from '@opentelemetry/core';
import { resourceFromAttributes, Resource } from '@opentelemetry/resources';
import type { ReadableSpan } from '@opentelemetry/sdk-trace';
import type { Attributes, HrTime, Link, SpanContext, SpanKind, SpanStatus } from '@opentelemetry/api';
import type { TimedEvent } from '@opentelemetry/sdk-trace';

/**
 * An ended span as plain data, which a worker thread can be posted
 * (structured clone: no functions, no class instances), and made a
 * ReadableSpan again on the other side for the SDK's span processors and
 * exporters there.
 */
export interface PostedSpan {
  name: string;
  kind: SpanKind;
  context: PostedSpanContext;
  parent: PostedSpanContext | undefined;
  startTime: HrTime;
  endTime: HrTime;
  duration: HrTime;
  status: SpanStatus;
  attributes: Attributes;
  links: PostedLink[];
  events: TimedEvent[];
  /** Index into the batch's resources. */
  resource: number;
  scope: { name: string; version?: string; schemaUrl?: string };
  droppedAttributesCount: number;
  droppedEventsCount: number;
  droppedLinksCount: number;
}

export interface PostedLink {
  context: PostedSpanContext;
  attributes?: Attributes;
  droppedAttributesCount?: number;
}

export interface PostedSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote: boolean | undefined;
  traceState: string | undefined;
}

export interface PostedResource {
  attributes: Attributes;
  schemaUrl?: string;
}

/** A batch of ended spans, their resources listed once. */
export interface PostedBatch {
  resources: PostedResource[];
  spans: PostedSpan[];
}

// Written without object spreads: this runs for every span on the request thread.
function postedContext(context: SpanContext): PostedSpanContext {
  return {
    traceId: context.traceId,
    spanId: context.spanId,
    traceFlags: context.traceFlags,
    isRemote: context.isRemote,
    traceState: context.traceState?.serialize(),
  };
}

function spanContextOf(posted: PostedSpanContext): SpanContext {
  return {
    traceId: posted.traceId,
    spanId: posted.spanId,
    traceFlags: posted.traceFlags,
    isRemote: posted.isRemote,
    traceState: posted.traceState === undefined ? undefined : new TraceState(posted.traceState),
  };
}

function postedLink(link: Link): PostedLink {
  return { context: postedContext(link.context), attributes: link.attributes, droppedAttributesCount: link.droppedAttributesCount };
}

/** Collects ended spans as a PostedBatch; each distinct resource is listed once. */
export class BatchBuilder {
  private resources: Resource[] = [];
  private resourceIndex = new Map<Resource, number>();
  private spans: PostedSpan[] = [];

  get size(): number {
    return this.spans.length;
  }

  add(span: ReadableSpan): void {
    this.spans.push({
      name: span.name,
      kind: span.kind,
      context: postedContext(span.spanContext()),
      parent: span.parentSpanContext && postedContext(span.parentSpanContext),
      startTime: span.startTime,
      endTime: span.endTime,
      duration: span.duration,
      status: span.status,
      attributes: span.attributes,
      links: span.links.length === 0 ? [] : span.links.map(postedLink),
      events: span.events,
      resource: this.resourceOf(span.resource),
      // InstrumentationScope is plain data already.
      scope: span.instrumentationScope,
      droppedAttributesCount: span.droppedAttributesCount,
      droppedEventsCount: span.droppedEventsCount,
      droppedLinksCount: span.droppedLinksCount,
    });
  }

  /**
   * The batch so far (the builder starts empty again), once its resources'
   * attributes are all in: a resource detector may still be answering when
   * the first spans end.
   */
  async take(): Promise<PostedBatch> {
    const { resources, spans } = this;
    this.resources = [];
    this.resourceIndex = new Map();
    this.spans = [];
    for (const resource of resources) if (resource.asyncAttributesPending) await resource.waitForAsyncAttributes?.();
    return { resources: resources.map((resource) => ({ attributes: resource.attributes, ...(resource.schemaUrl ? { schemaUrl: resource.schemaUrl } : {}) })), spans };
  }

  private resourceOf(resource: Resource): number {
    let index = this.resourceIndex.get(resource);
    if (index === undefined) {
      index = this.resources.push(resource) - 1;
      this.resourceIndex.set(resource, index);
    }
    return index;
  }
}

/**
 * Resources made on this side, by their content: exporters group spans by
 * resource object (one ResourceSpans each), so the spans of every batch with
 * the same resource must share one. A process has one or two; the map is
 * bounded all the same.
 */
const madeResources = new Map<string, Resource>();
const MADE_RESOURCES_KEPT = 16;

function resourceOf(posted: PostedResource): Resource {
  const key = JSON.stringify([posted.schemaUrl ?? null, posted.attributes]);
  let resource = madeResources.get(key);
  if (!resource) {
    if (madeResources.size >= MADE_RESOURCES_KEPT) madeResources.clear();
    resource = resourceFromAttributes(posted.attributes, posted.schemaUrl ? { schemaUrl: posted.schemaUrl } : {});
    madeResources.set(key, resource);
  }
  return resource;
}

/** The spans of a posted batch as ReadableSpans; spans with the same resource, in this batch or an earlier one, share its object. */
export function readableSpans(batch: PostedBatch): ReadableSpan[] {
  const resources = batch.resources.map(resourceOf);
  return batch.spans.map((posted) => {
    const context = spanContextOf(posted.context);
    const links: Link[] = posted.links.map((link) => ({ context: spanContextOf(link.context), attributes: link.attributes, droppedAttributesCount: link.droppedAttributesCount }));
    return {
      name: posted.name,
      kind: posted.kind,
      spanContext: () => context,
      parentSpanContext: posted.parent && spanContextOf(posted.parent),
      startTime: posted.startTime,
      endTime: posted.endTime,
      duration: posted.duration,
      ended: true,
      status: posted.status,
      attributes: posted.attributes,
      links,
      events: posted.events,
      resource: resources[posted.resource],
      instrumentationScope: posted.scope,
      droppedAttributesCount: posted.droppedAttributesCount,
      droppedEventsCount: posted.droppedEventsCount,
      droppedLinksCount: posted.droppedLinksCount,
    };
  });
}
