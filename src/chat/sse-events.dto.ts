import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { ERROR_CODE_STATUS, type ErrorCode } from '../common/coded-error.js';
import { clip } from '../common/text.js';
import { PendingHitlState, RagTrace } from '../trace/trace.protocol.js';

/*
 * The `data` of each SSE event of a chat run, as OpenAPI schemas, so that a
 * generator gives clients one type per event (see `STREAM_EVENT_SCHEMA`).
 */

/** Longest string value of a tool call's argument in a `tool` start event. */
export const TOOL_ARG_SUMMARY_MAX_LENGTH = 200;
/** Longest tool output in a `tool` end event. */
export const TOOL_OUTPUT_SUMMARY_MAX_LENGTH = 500;

export class MetadataEvent {
  @ApiProperty({ format: 'uuid', description: 'The run: rejoin, cancel or look it up with this id' })
  run_id: string;

  @ApiProperty({ format: 'uuid', description: 'The session the turn belongs to (new when the request named none)' })
  session_id: string;

  @ApiPropertyOptional({
    pattern: '^[0-9a-f]{32}$',
    description: "The OpenTelemetry trace id of the turn (32 hex digits), when tracing is on: find the turn's spans with it",
  })
  trace_id?: string;
}

export const STEP_STAGES = [
  'query_truncated',
  'complexity',
  'sub_agent',
  'recall',
  'recall_degraded',
  'auto_merge',
  'rerank',
  'retrieved',
  'grade',
  'rewrite',
  'merge',
  'hitl',
] as const;

export class StepEvent {
  @ApiProperty({
    description: `The retrieval stage: ${STEP_STAGES.map((stage) => `\`${stage}\``).join(', ')} (more may come)`,
    example: 'recall',
  })
  stage: string;

  @ApiProperty({ description: 'What the stage does, for people', example: 'Hybrid recall: full-text and dense rankings, fused' })
  label: string;

  @ApiProperty({ type: 'integer', description: 'Milliseconds since the previous step' })
  elapsed_ms: number;

  @ApiProperty({ type: 'integer', description: 'Milliseconds since the turn began' })
  total_ms: number;

  @ApiPropertyOptional({ type: 'integer', description: '`query_truncated`: length of the question as asked' })
  original_length?: number;

  @ApiPropertyOptional({ type: 'integer', description: '`query_truncated`: length searched' })
  length?: number;

  @ApiPropertyOptional({ enum: ['simple', 'complex'], description: '`complexity`: whether the question is split' })
  complexity?: 'simple' | 'complex';

  @ApiPropertyOptional({ type: 'integer', description: '`sub_agent`: zero-based index of the sub-question' })
  index?: number;

  @ApiPropertyOptional({ type: 'integer', description: '`recall`: how many candidates are recalled' })
  recall_k?: number;

  @ApiPropertyOptional({ description: '`recall_degraded`: what failed' })
  error?: string;

  @ApiPropertyOptional({ type: 'integer', description: '`auto_merge`: candidates considered' })
  candidates?: number;

  @ApiPropertyOptional({ description: '`rerank`: the reranking model' })
  model?: string;

  @ApiPropertyOptional({ type: 'integer', description: '`retrieved`: passages kept' })
  count?: number;

  @ApiPropertyOptional({ enum: ['answer', 'clarify'], description: '`grade`: the route the grade chose' })
  route?: 'answer' | 'clarify';

  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: "`grade`: the grader's confidence" })
  confidence?: number;

  @ApiPropertyOptional({ enum: ['step_back', 'hyde'], description: '`rewrite`: how the query is rewritten' })
  mode?: 'step_back' | 'hyde';

  @ApiPropertyOptional({ type: 'integer', description: "`merge`: passages after merging the sub-questions' evidence" })
  merged?: number;

  @ApiPropertyOptional({ type: 'integer', description: '`hitl`: how many answers of the user are searched with' })
  round?: number;
}

export class TokenEvent {
  @ApiProperty({ description: 'The next piece of the answer; concatenate them' })
  text: string;
}

export class ToolSummary {
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description: `\`start\`: the call's arguments, each string value cut to ${TOOL_ARG_SUMMARY_MAX_LENGTH} characters`,
  })
  args?: Record<string, unknown>;

  @ApiPropertyOptional({ description: `\`end\`: the tool's output, cut to ${TOOL_OUTPUT_SUMMARY_MAX_LENGTH} characters` })
  output?: string;

  @ApiPropertyOptional({ description: '`end`: whether `output` was cut' })
  truncated?: boolean;

  @ApiPropertyOptional({ enum: [true], description: '`end` of a call that failed (no output is given)' })
  failed?: true;

  @ApiPropertyOptional({
    enum: ['tool_failed', 'tool_timeout'],
    description: '`end` of a failed call, when the tool gave a reason: `tool_timeout` (no answer in time) or `tool_failed`',
  })
  code?: string;
}

export class ToolEvent {
  @ApiProperty({ description: 'The tool', example: 'knowledge_search' })
  name: string;

  @ApiProperty({ enum: ['start', 'end'] })
  phase: 'start' | 'end';

  @ApiProperty({
    type: () => ToolSummary,
    description: '`start`: `{args}`; `end`: `{output, truncated}`, or `{failed: true}` for a failed call',
  })
  summary: ToolSummary;
}

/** The question put to the user: the turn pauses until the next turn answers it. */
export class HitlEvent extends PendingHitlState {}

/** The turn's RAG trace, as `ChatResponse.rag_trace`. */
export class TraceEvent extends RagTrace {}

export class DoneEvent {
  @ApiProperty({ description: 'The whole answer (for a paused turn: the question put to the user)' })
  response: string;

  @ApiProperty({ format: 'uuid' })
  session_id: string;
}

export const ERROR_EVENT_CODES = Object.keys(ERROR_CODE_STATUS) as ErrorCode[];

export class ErrorEvent {
  @ApiProperty({ enum: ERROR_EVENT_CODES, enumName: 'ErrorCode', description: 'Why the run ended without an answer' })
  code: ErrorCode;

  @ApiProperty({ description: 'What happened and what to do, for people' })
  message: string;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    description: 'Whether the human message was kept in the session; null when not known yet (reload the session)',
  })
  message_saved?: boolean | null;
}

export const SSE_EVENT_MODELS = {
  metadata: MetadataEvent,
  step: StepEvent,
  token: TokenEvent,
  tool: ToolEvent,
  hitl: HitlEvent,
  trace: TraceEvent,
  done: DoneEvent,
  error: ErrorEvent,
} as const;

/** Every model the stream schema names, for `@ApiExtraModels`. */
export const SSE_SCHEMA_MODELS = [...Object.values(SSE_EVENT_MODELS), ToolSummary];

/**
 * The schema of one event of a `text/event-stream` response: a union of
 * `{id, event, data}` objects, one per event name, so a generator derives a
 * union discriminated by `event`.
 */
export const STREAM_EVENT_SCHEMA = {
  oneOf: Object.entries(SSE_EVENT_MODELS).map(([event, model]) => ({
    type: 'object',
    required: ['id', 'event', 'data'],
    properties: {
      id: { type: 'integer', minimum: 1, description: 'Monotonic within the run, from 1: send the last one back as `Last-Event-ID` to resume' },
      event: { type: 'string', enum: [event] },
      data: { $ref: getSchemaPath(model) },
    },
  })),
};

/** Each string in a tool call's arguments (at any depth) cut to `max` characters. */
function clipStrings(value: unknown, max: number): unknown {
  if (typeof value === 'string') return clip(value, max);
  if (Array.isArray(value)) return value.map((item) => clipStrings(item, max));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, clipStrings(item, max)]));
  }
  return value;
}

/** The `summary` of a `tool` start event. */
export function toolStartSummary(args: Record<string, unknown>): ToolSummary {
  return { args: clipStrings(args, TOOL_ARG_SUMMARY_MAX_LENGTH) as Record<string, unknown> };
}

/** The `summary` of a `tool` end event. */
export function toolEndSummary(output: string): ToolSummary {
  return { output: clip(output, TOOL_OUTPUT_SUMMARY_MAX_LENGTH), truncated: Array.from(output).length > TOOL_OUTPUT_SUMMARY_MAX_LENGTH };
}

/** The `summary` of a `tool` end event of a call that failed: its text is for the model, never the client. */
export function toolFailedSummary(code?: string): ToolSummary {
  return code ? { failed: true, code } : { failed: true };
}
