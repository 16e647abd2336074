import { Attributes, AttributeValue, context, Context, createContextKey, Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { suppressTracing } from '@opentelemetry/core';
import { BaseMessage, isAIMessage, isToolMessage } from '@langchain/core/messages';
import { boundedContent, capturesContent } from './content-capture.js';
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_DATA_SOURCE_ID,
  ATTR_GEN_AI_EMBEDDINGS_DIMENSION_COUNT,
  ATTR_GEN_AI_INPUT_MESSAGES,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_MESSAGES,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_REQUEST_TOP_K,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_RETRIEVAL_DOCUMENTS,
  ATTR_GEN_AI_RETRIEVAL_QUERY_TEXT,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_CALL_RESULT,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  GEN_AI_OPERATION_NAME_VALUE_CHAT,
  GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS,
  GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
  GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
  GEN_AI_OPERATION_NAME_VALUE_RETRIEVAL,
  GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
} from './genai-semconv.js';

/**
 * The service's own spans (GenAI semantic conventions), one wrapper call at
 * each place: a turn, a model call, a tool call, a retrieval and its stages,
 * an embedding. Each span is the active one while its work runs, so the
 * spans (and pg, Redis and HTTP client spans) started inside nest under it.
 * With tracing off the tracer is the API's no-op: a wrapper then costs a
 * function call, and nothing is computed for attributes (they are only
 * filled in when the span records).
 */
export const TRACER_NAME = 'agentic-rag-chat';

/** Attribute names of this service's own fields (not GenAI conventions). */
export const ATTR_RUN_ID = 'rag.run.id';
export const ATTR_STAGE_NAME = 'rag.stage.name';
export const ATTR_CANDIDATES_IN = 'rag.stage.candidates_in';
export const ATTR_CANDIDATES_OUT = 'rag.stage.candidates_out';
/** Prefix of a retrieval stage's trace fields (RagTrace names: `rag.trace.recalled_count`). */
export const TRACE_FIELD_PREFIX = 'rag.trace.';

/** What a failure is called in `error.type`: its code when it has one (our coded errors), else its class. */
export function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code) return code;
  return error instanceof Error ? error.constructor.name || error.name : 'unknown';
}

/** Marks the span failed (status ERROR, `error.type`, the exception as an event). */
export function recordFailure(span: Span, error: unknown, type = errorType(error)): void {
  span.setAttribute(ATTR_ERROR_TYPE, type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : type });
  if (error instanceof Error) span.recordException(error);
}

/**
 * Runs `work` in a new active span named `name`: ended when the work
 * settles, marked failed when it throws. `describe` adds attributes from the
 * result, only when the span records; when it must wait for something (a
 * token count), the result is returned at once and the span ends once the
 * attributes are in, with the time the work ended.
 */
export async function inSpan<T>(
  name: string,
  kind: SpanKind,
  attributes: () => Attributes,
  work: () => Promise<T>,
  describe?: (result: T, span: Span) => Attributes | Promise<Attributes> | void,
): Promise<T> {
  // Asked of the global provider each time: it is registered after this module loads (tests register and drop theirs).
  return trace.getTracer(TRACER_NAME).startActiveSpan(name, { kind }, async (span) => {
    const recording = span.isRecording();
    if (recording) span.setAttributes(attributes());
    let result: T;
    try {
      result = await work();
    } catch (error) {
      if (recording) recordFailure(span, error);
      span.end();
      throw error;
    }
    const more = recording && describe ? describe(result, span) : undefined;
    if (more instanceof Promise) {
      const endTime = performance.timeOrigin + performance.now();
      void more
        .then(
          (added) => span.setAttributes(added),
          () => undefined,
        )
        .finally(() => span.end(endTime));
    } else {
      if (more) span.setAttributes(more);
      span.end();
    }
    return result;
  });
}

/** `attributes` with the content ones kept only when content may be captured (OTEL_GENAI_CAPTURE_CONTENT). */
function withContent(attributes: Attributes, content: () => Attributes): Attributes {
  return capturesContent() ? { ...attributes, ...content() } : attributes;
}

export interface AgentTurn {
  agentName: string;
  /** The session (gen_ai.conversation.id); none for a turn without one (the OpenAI-compatible route's stateless turns). */
  conversationId?: string;
  runId: string;
}

/** Attribute names of a turn's tally (TurnTally) on its `invoke_agent` span. */
export const ATTR_CHECKPOINT_OPERATIONS = 'rag.checkpoint.operations';
export const ATTR_CHECKPOINT_DURATION_MS = 'rag.checkpoint.duration_ms';
export const ATTR_RUN_EVENTS_BATCHES = 'rag.run_events.batches';
export const ATTR_RUN_EVENTS_COUNT = 'rag.run_events.count';
export const ATTR_RUN_EVENTS_DURATION_MS = 'rag.run_events.duration_ms';

/**
 * What a turn does many times over and is not traced one by one while the
 * turn runs: the LangGraph checkpointer's operations (a `put` and
 * `put_writes` per graph step) and the batches of the run's events written
 * to Redis. Each was a span of its own, a fifth of a turn's spans and a
 * measured share of tracing's cost per turn (docs/benchmarks.md); they are
 * counted and timed here instead and put on the turn's `invoke_agent` span.
 */
class TurnTally {
  /** Until the turn's work settles; what comes after (its last events, say) is a span of its own again. */
  open = true;
  checkpointOperations = 0;
  checkpointMs = 0;
  eventBatches = 0;
  events = 0;
  eventMs = 0;
  /** Operations begun while the turn ran that have not ended yet (a batch of its last events, say). */
  private inFlight = 0;
  private drained: (() => void) | undefined;

  begin(): void {
    this.inFlight += 1;
  }

  checkpoint(ms: number): void {
    this.checkpointOperations += 1;
    this.checkpointMs += ms;
    this.ended();
  }

  eventBatch(events: number, ms: number): void {
    this.eventBatches += 1;
    this.events += events;
    this.eventMs += ms;
    this.ended();
  }

  /**
   * The tally, once every operation begun while the turn ran has ended (the
   * turn's span then ends with the time its work ended), or after
   * TALLY_WAIT_MS with what has ended by then.
   */
  settled(): Attributes | Promise<Attributes> {
    if (this.inFlight === 0) return this.attributes();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.drained = undefined;
        resolve(this.attributes());
      };
      const timer = setTimeout(done, TALLY_WAIT_MS).unref();
      this.drained = done;
    });
  }

  private ended(): void {
    this.inFlight -= 1;
    if (this.inFlight === 0) this.drained?.();
  }

  private attributes(): Attributes {
    return {
      [ATTR_CHECKPOINT_OPERATIONS]: this.checkpointOperations,
      [ATTR_CHECKPOINT_DURATION_MS]: Math.round(this.checkpointMs * 1000) / 1000,
      [ATTR_RUN_EVENTS_BATCHES]: this.eventBatches,
      [ATTR_RUN_EVENTS_COUNT]: this.events,
      [ATTR_RUN_EVENTS_DURATION_MS]: Math.round(this.eventMs * 1000) / 1000,
    };
  }
}

/** The longest a turn's span waits for the operations its tally still counts (their own timeouts end them sooner). */
const TALLY_WAIT_MS = 30_000;

const TURN_TALLY = createContextKey('agentic-rag-chat turn tally');

/** A turn of the agent: `invoke_agent {agent}`; every span of the turn nests under it, and its tally (TurnTally) is added when it ends. */
export function traceAgentTurn<T>(turn: AgentTurn, work: () => Promise<T>): Promise<T> {
  const tally = new TurnTally();
  return inSpan(
    `${GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT} ${turn.agentName}`,
    SpanKind.INTERNAL,
    () => agentTurnAttributes(turn),
    () =>
      context.with(context.active().setValue(TURN_TALLY, tally), work).finally(() => {
        tally.open = false;
      }),
    () => tally.settled(),
  );
}

function agentTurnAttributes(turn: AgentTurn): Attributes {
  return {
    [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_INVOKE_AGENT,
    [ATTR_GEN_AI_AGENT_NAME]: turn.agentName,
    ...(turn.conversationId ? { [ATTR_GEN_AI_CONVERSATION_ID]: turn.conversationId } : {}),
    [ATTR_RUN_ID]: turn.runId,
  };
}

export interface ModelCall {
  /** gen_ai.provider.name: LLM_PROVIDER (`openai`, `local`). */
  provider: string;
  /** gen_ai.request.model. */
  model: string;
  /** The prompt, put in the span only when content may be captured. */
  messages?: readonly BaseMessage[];
}

export interface TokenCounts {
  input: number;
  output: number;
}

/**
 * A model call: `chat {model}` (CLIENT), with the tokens the model reported
 * (`usage_metadata`), else `estimate`'s; the response model and finish
 * reason when the reply names them.
 */
export function traceModelCall<T>(call: ModelCall, work: () => Promise<T>, estimate?: (response: BaseMessage) => Promise<TokenCounts>): Promise<T> {
  return inSpan(
    `${GEN_AI_OPERATION_NAME_VALUE_CHAT} ${call.model}`,
    SpanKind.CLIENT,
    () =>
      withContent({ [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_CHAT, [ATTR_GEN_AI_PROVIDER_NAME]: call.provider, [ATTR_GEN_AI_REQUEST_MODEL]: call.model }, () =>
        call.messages ? { [ATTR_GEN_AI_INPUT_MESSAGES]: boundedContent(JSON.stringify(call.messages.map(genAiMessage))) } : {},
      ),
    work,
    (response) => (response instanceof BaseMessage ? modelResponseAttributes(response, estimate) : undefined),
  );
}

async function modelResponseAttributes(response: BaseMessage, estimate?: (response: BaseMessage) => Promise<TokenCounts>): Promise<Attributes> {
  const attributes: Attributes = {};
  const metadata = response.response_metadata as { finish_reason?: unknown; model_name?: unknown; model?: unknown } | undefined;
  const responseModel = metadata?.model_name ?? metadata?.model;
  if (typeof responseModel === 'string') attributes[ATTR_GEN_AI_RESPONSE_MODEL] = responseModel;
  if (typeof metadata?.finish_reason === 'string') attributes[ATTR_GEN_AI_RESPONSE_FINISH_REASONS] = [metadata.finish_reason];
  const counts = reportedTokens(response) ?? (await estimate?.(response));
  if (counts) {
    attributes[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = counts.input;
    attributes[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = counts.output;
  }
  if (capturesContent()) attributes[ATTR_GEN_AI_OUTPUT_MESSAGES] = boundedContent(JSON.stringify([genAiMessage(response)]));
  return attributes;
}

/** The tokens a model reported for its reply (`usage_metadata`), if it did. */
export function reportedTokens(response: BaseMessage): TokenCounts | undefined {
  const reported = isAIMessage(response) ? response.usage_metadata : undefined;
  return reported && Number.isFinite(reported.input_tokens) && Number.isFinite(reported.output_tokens)
    ? { input: reported.input_tokens, output: reported.output_tokens }
    : undefined;
}

const ROLES: Record<string, string> = { human: 'user', ai: 'assistant', system: 'system', tool: 'tool', developer: 'system' };

/** A LangChain message in the conventions' message shape: `{role, parts: [{type: 'text', content} | tool_call | tool_call_response]}`. */
export function genAiMessage(message: BaseMessage): { role: string; parts: Record<string, unknown>[] } {
  const text = typeof message.content === 'string' ? message.content : message.content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
  const parts: Record<string, unknown>[] = [];
  if (isToolMessage(message)) {
    parts.push({ type: 'tool_call_response', id: message.tool_call_id, response: text });
  } else if (text) {
    parts.push({ type: 'text', content: text });
  }
  if (isAIMessage(message)) {
    for (const call of message.tool_calls ?? []) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.args });
  }
  return { role: ROLES[message.getType()] ?? message.getType(), parts };
}

export interface ToolCallSpan {
  name: string;
  callId?: string;
  args?: unknown;
}

/**
 * A tool call: `execute_tool {name}`. A call that ends as an error message
 * to the model (a ToolMessage with status `error`) is marked failed too
 * (`error.type` tool_error), though the turn goes on.
 */
export function traceToolCall<T>(call: ToolCallSpan, work: () => Promise<T>): Promise<T> {
  return inSpan(
    `${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${call.name}`,
    SpanKind.INTERNAL,
    () =>
      withContent(
        {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
          [ATTR_GEN_AI_TOOL_NAME]: call.name,
          [ATTR_GEN_AI_TOOL_TYPE]: GEN_AI_TOOL_TYPE_VALUE_FUNCTION,
          ...(call.callId ? { [ATTR_GEN_AI_TOOL_CALL_ID]: call.callId } : {}),
        },
        () => (call.args === undefined ? {} : { [ATTR_GEN_AI_TOOL_CALL_ARGUMENTS]: boundedContent(JSON.stringify(call.args)) }),
      ),
    work,
    (result, span) => {
      if (!isToolMessage(result)) return;
      if (result.status === 'error') {
        span.setAttribute(ATTR_ERROR_TYPE, 'tool_error');
        span.setStatus({ code: SpanStatusCode.ERROR, message: 'the tool call failed' });
      }
      if (capturesContent())
        return {
          [ATTR_GEN_AI_TOOL_CALL_RESULT]: boundedContent(
            genAiMessage(result)
              .parts.map((part) => String(part.response ?? ''))
              .join(''),
          ),
        };
    },
  );
}

export interface RetrievalSpan {
  /** The collections searched (gen_ai.data_source.id); null: every collection. */
  collectionIds: readonly string[] | null;
  query: string;
  topK: number;
}

/** What a retrieval found, for its span: the passages (content) and the counts and verdict. */
export interface RetrievalFindings {
  documents: ReadonlyArray<{ chunk_id: string; score: number; text?: string }>;
  attributes: Attributes;
}

/** A retrieval over the knowledge base: `retrieval {collection}`, its stages as child spans (traceStage). */
export function traceRetrieval<T>(search: RetrievalSpan, work: () => Promise<T>, findings: (result: T) => RetrievalFindings): Promise<T> {
  const ids = search.collectionIds;
  const dataSource = ids === null ? 'all' : ids.length === 1 ? ids[0] : ids.length === 0 ? 'none' : 'collections';
  return inSpan(
    `${GEN_AI_OPERATION_NAME_VALUE_RETRIEVAL} ${dataSource}`,
    SpanKind.INTERNAL,
    () =>
      withContent(
        {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_RETRIEVAL,
          [ATTR_GEN_AI_DATA_SOURCE_ID]: ids === null ? 'all' : ids.join(','),
          [ATTR_GEN_AI_REQUEST_TOP_K]: search.topK,
        },
        () => ({ [ATTR_GEN_AI_RETRIEVAL_QUERY_TEXT]: boundedContent(search.query) }),
      ),
    work,
    (result) => {
      const found = findings(result);
      return withContent({ ...found.attributes, 'rag.retrieval.documents_count': found.documents.length }, () => ({
        [ATTR_GEN_AI_RETRIEVAL_DOCUMENTS]: boundedContent(JSON.stringify(found.documents.map(({ chunk_id, score, text }) => ({ id: chunk_id, score, content: text })))),
      }));
    },
  );
}

/** Trace fields (RagTrace) that hold the user's or a model's words: in a span only when content may be captured. */
const CONTENT_TRACE_FIELDS = new Set([
  'query',
  'rewritten_query',
  'step_back_question',
  'hypothetical_doc',
  'grade_reason',
  'clarification_prompt',
  'user_supplement',
  'complexity_reason',
]);

/**
 * A stage's trace fields as span attributes (`rag.trace.<field>`): the
 * scalars and lists of scalars; lists of passages and nested objects stay in
 * the RAG trace. Fields with text of the user or a model only when content
 * may be captured.
 */
export function traceFieldAttributes(fields: Readonly<Record<string, unknown>>): Attributes {
  const attributes: Attributes = {};
  const content = capturesContent();
  for (const [key, value] of Object.entries(fields)) {
    if (value === null || value === undefined || (!content && CONTENT_TRACE_FIELDS.has(key))) continue;
    const attribute = attributeValue(value);
    if (attribute !== undefined) attributes[`${TRACE_FIELD_PREFIX}${key}`] = typeof attribute === 'string' ? boundedContent(attribute) : attribute;
  }
  return attributes;
}

function attributeValue(value: unknown): AttributeValue | undefined {
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string')) return value as string[];
  if (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'number' && Number.isFinite(item))) return value as number[];
  return undefined;
}

/**
 * One retrieval stage (recall and its full-text and dense legs, merge,
 * rerank, threshold, grading, rewrite): `retrieval_stage {name}`, with the
 * candidates it was given, and what `describe` reads from its result.
 */
export function traceStage<T>(name: string, candidatesIn: number | undefined, work: () => Promise<T>, describe?: (result: T) => Attributes): Promise<T> {
  return inSpan(
    `retrieval_stage ${name}`,
    SpanKind.INTERNAL,
    () => ({ [ATTR_STAGE_NAME]: name, ...(candidatesIn === undefined ? {} : { [ATTR_CANDIDATES_IN]: candidatesIn }) }),
    work,
    describe,
  );
}

export interface EmbeddingCall {
  provider: string;
  model: string;
  dimensions: number;
  inputs: number;
}

/** An embedding call: `embeddings {model}` (CLIENT). */
export function traceEmbeddings<T>(call: EmbeddingCall, work: () => Promise<T>): Promise<T> {
  return inSpan(
    `${GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS} ${call.model}`,
    SpanKind.CLIENT,
    () => ({
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EMBEDDINGS,
      [ATTR_GEN_AI_PROVIDER_NAME]: call.provider,
      [ATTR_GEN_AI_REQUEST_MODEL]: call.model,
      [ATTR_GEN_AI_EMBEDDINGS_DIMENSION_COUNT]: call.dimensions,
      'rag.embeddings.inputs': call.inputs,
    }),
    work,
  );
}

/**
 * A batch of a run's events written to Redis in one MULTI. While a turn
 * runs, counted and timed in its tally (TurnTally); elsewhere one span
 * (`run_events write`, with the number of events). Never the Redis
 * instrumentation's span per command: a streamed answer writes an event per
 * token.
 */
export function traceEventBatch<T>(events: number, work: () => Promise<T>): Promise<T> {
  const active = context.active();
  const tally = openTally(active);
  if (tally) return tallied(tally, untracedWithin(active), work, (ms) => tally.eventBatch(events, ms));
  return inSpan(
    'run_events write',
    SpanKind.INTERNAL,
    () => ({ [ATTR_RUN_EVENTS_COUNT]: events }),
    () => context.with(untracedWithin(), work),
  );
}

/**
 * A checkpointer operation (`put`, `put_writes`, `get`, `delete`), its SQL
 * statements not traced one by one: each LangGraph step writes its
 * checkpoint in several statements and transactions, which would otherwise
 * be half of every trace. While a turn runs, counted and timed in its tally
 * (TurnTally); elsewhere one span (`checkpoint {operation}`).
 */
export function traceCheckpoint<T>(operation: string, work: () => Promise<T>): Promise<T> {
  const active = context.active();
  const tally = openTally(active);
  if (tally) return tallied(tally, untracedWithin(active), work, (ms) => tally.checkpoint(ms));
  return inSpan(
    `checkpoint ${operation}`,
    SpanKind.CLIENT,
    () => ({ 'db.system.name': 'postgresql', 'db.operation.name': operation }),
    () => context.with(untracedWithin(), work),
  );
}

/** The tally of the turn running in `within`, while it runs. */
function openTally(within: Context): TurnTally | undefined {
  const tally = within.getValue(TURN_TALLY) as TurnTally | undefined;
  return tally?.open ? tally : undefined;
}

/** Runs `work` in `within`, then reports how long it took (ms), whether it succeeded or not. */
async function tallied<T>(tally: TurnTally, within: Context, work: () => Promise<T>, count: (ms: number) => void): Promise<T> {
  tally.begin();
  const started = performance.now();
  try {
    return await context.with(within, work);
  } finally {
    count(performance.now() - started);
  }
}

/**
 * The context for work whose calls are not traced one by one: tracing
 * suppressed, and no active span, so that the pg and Redis instrumentations
 * (`requireParentSpan`) pass the calls straight through rather than building
 * spans that would not record.
 */
function untracedWithin(from: Context = context.active()): Context {
  return trace.deleteSpan(suppressTracing(from));
}
