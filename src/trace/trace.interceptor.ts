import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { map, Observable } from 'rxjs';
import { normalizePendingHitl, normalizeRagTrace } from './trace.normalizer.js';

const MAX_DEPTH = 6;

/** Bodies built from normalized parts and not changed since (frozen): passed through as they are. */
const normalizedBodies = new WeakSet<object>();

/** Marks a frozen body whose traces the normalizers built: the interceptor sends it without walking it again. */
export function markTracesNormalized<T extends object>(body: T): T {
  if (Object.isFrozen(body)) normalizedBodies.add(body);
  return body;
}

/** Normalizes every `rag_trace` and `pending_hitl` found in a response body. */
export function normalizeTracesIn(body: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH || body === null || typeof body !== 'object' || normalizedBodies.has(body)) return body;
  if (Array.isArray(body)) return body.map((item) => normalizeTracesIn(item, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    if (key === 'rag_trace') out[key] = normalizeRagTrace(value);
    else if (key === 'pending_hitl') out[key] = normalizePendingHitl(value);
    else out[key] = normalizeTracesIn(value, depth + 1);
  }
  return out;
}

/** Applied to the chat and session controllers: no trace leaves the service un-normalized. */
@Injectable()
export class TraceNormalizationInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(map((body) => normalizeTracesIn(body)));
  }
}
