import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { SpecClass } from './field-spec.js';
import { normalizeBySpec } from './normalize-by-spec.js';
import { HitlResumeState, PendingHitlState, RagSubTrace, RagTrace, RagTraceFields, RetrievedChunk, TRACE_PROTOCOL_VERSION } from './trace.protocol.js';

/**
 * Normalizers of retrieved chunks, trace fields, sub-traces, whole traces and
 * their HITL siblings. Pure and total: any value in,
 * a valid protocol object or null out, never a throw.
 *
 * Output is valid by construction (each field is coerced to its declared
 * kind or dropped); a property test checks that against the class-validator
 * rules. Running class-validator costs about ten times the normalization
 * itself, so read paths (cache, transcripts, responses) normalize only, and
 * the write path (`normalizeAndValidateRagTrace`) also validates.
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

/** Keeps the RetrievedChunk fields of each chunk; drops non-objects and chunks with no source. */
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

/** Keeps only declared trace fields, each chunk list normalized. */
export function normalizeTraceFields(value: unknown): RagTraceFields | null {
  return safely(() => normalizeBySpec(RagTraceFields, value) as RagTraceFields | null);
}

/** A sub-trace is the shared fields, validated. */
export function normalizeRagSubTrace(value: unknown): RagSubTrace | null {
  return safely(() => {
    const sub = normalizeBySpec(RagSubTrace, value);
    return sub && isValid(RagSubTrace, sub) ? (sub as RagSubTrace) : null;
  });
}

/** A whole trace: main fields, then each sub-trace; stamped with the protocol version. */
export function normalizeRagTrace(value: unknown): RagTrace | null {
  return safely(() => {
    const trace = normalizeBySpec(RagTrace, value);
    if (!trace) return null;
    trace.protocol_version = TRACE_PROTOCOL_VERSION;
    return trace as RagTrace;
  });
}

/** normalizeRagTrace, then validation of the whole: for traces about to be stored. */
export function normalizeAndValidateRagTrace(value: unknown): RagTrace | null {
  const trace = normalizeRagTrace(value);
  return trace && isValid(RagTrace, trace) ? trace : null;
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
