import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { SpecClass } from './field-spec.js';
import { normalizeBySpec } from './normalize-by-spec.js';
import {
  HitlResumeState,
  PendingHitlState,
  RagSubTrace,
  RagTrace,
  RagTraceFields,
  RetrievedChunk,
  TRACE_PROTOCOL_VERSION,
} from './trace.protocol.js';

/**
 * The seed's F01–F04 and their HITL siblings. Pure and total: any value in,
 * a valid protocol object or null out, never a throw.
 */

function isValid(cls: SpecClass, value: object): boolean {
  return validateSync(plainToInstance(cls, value) as object, { forbidUnknownValues: false }).length === 0;
}

function safely<T>(fn: () => T | null): T | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

/** F01: keeps the RetrievedChunk fields of each chunk; drops non-objects and chunks with no source. */
export function normalizeChunks(value: unknown): RetrievedChunk[] {
  return (
    safely(() => {
      if (!Array.isArray(value)) return [];
      const out: RetrievedChunk[] = [];
      for (const item of value) {
        const chunk = normalizeBySpec(RetrievedChunk, item);
        if (chunk) out.push(chunk as RetrievedChunk);
      }
      return out;
    }) ?? []
  );
}

/** F02: keeps only declared trace fields, each chunk list normalized. */
export function normalizeTraceFields(value: unknown): RagTraceFields | null {
  return safely(() => normalizeBySpec(RagTraceFields, value) as RagTraceFields | null);
}

/** F03: a sub-trace is the shared fields, validated. */
export function normalizeRagSubTrace(value: unknown): RagSubTrace | null {
  return safely(() => {
    const sub = normalizeBySpec(RagSubTrace, value);
    return sub && isValid(RagSubTrace, sub) ? (sub as RagSubTrace) : null;
  });
}

/** F04: main fields, then each sub-trace, then validation of the whole; stamped with the protocol version. */
export function normalizeRagTrace(value: unknown): RagTrace | null {
  return safely(() => {
    const trace = normalizeBySpec(RagTrace, value);
    if (!trace) return null;
    trace.protocol_version = TRACE_PROTOCOL_VERSION;
    return isValid(RagTrace, trace) ? (trace as RagTrace) : null;
  });
}

export function normalizeHitlResumeState(value: unknown): HitlResumeState | null {
  return safely(() => {
    const state = normalizeBySpec(HitlResumeState, value);
    return state && isValid(HitlResumeState, state) ? (state as HitlResumeState) : null;
  });
}

export function normalizePendingHitl(value: unknown): PendingHitlState | null {
  return safely(() => {
    const state = normalizeBySpec(PendingHitlState, value);
    return state && isValid(PendingHitlState, state) ? (state as PendingHitlState) : null;
  });
}
