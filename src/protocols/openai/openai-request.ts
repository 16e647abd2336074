import { z } from 'zod';
import { CHAT_MESSAGE_MAX_LENGTH } from '../../chat/chat.dto.js';
import { collectionIdsProblem } from '../../common/collection-ids.js';
import { hasVisibleCharacter, storableTextProblem } from '../../common/storable-text.js';
import type { ModelSampling } from '../../models/sampling.js';
import { OpenAiError } from './openai-errors.js';

/** Longest text of any one earlier message of a stateless conversation. */
export const OPENAI_MESSAGE_MAX_LENGTH = 32000;
export const OPENAI_MAX_MESSAGES = 500;
/** Longest stateless conversation, all messages' text together (the agent sends all of it to the model at every step). */
export const OPENAI_CONVERSATION_MAX_LENGTH = 100_000;

const storableText = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .superRefine((value, context) => {
      const problem = storableTextProblem(value);
      if (problem) context.addIssue({ code: 'custom', message: problem });
    });

const textPart = z.object({ type: z.literal('text'), text: storableText(OPENAI_MESSAGE_MAX_LENGTH) });
const contentPart = z.discriminatedUnion('type', [
  textPart,
  z.object({ type: z.literal('image_url') }).loose(),
  z.object({ type: z.literal('input_audio') }).loose(),
  z.object({ type: z.literal('file') }).loose(),
  z.object({ type: z.literal('refusal'), refusal: storableText(OPENAI_MESSAGE_MAX_LENGTH) }),
]);

const message = z
  .object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
    content: z.union([storableText(OPENAI_MESSAGE_MAX_LENGTH), z.array(contentPart).max(100), z.null()]).optional(),
    name: z.string().max(256).optional(),
    tool_calls: z.array(z.unknown()).optional(),
    function_call: z.unknown().optional(),
    tool_call_id: z.string().optional(),
  })
  .loose();

const sessionIdSchema = z.uuid('must be a session id (a UUID)').transform((id) => id.toLowerCase());

/**
 * The Chat Completions request (the public API's shape). Fields the agent
 * does not use and that do not change the answer (`user`, `store`,
 * `parallel_tool_calls`, `service_tier`…) are accepted and ignored, as
 * clients send them by default; see `refuseUnsupported` for the rest.
 */
const requestSchema = z
  .object({
    model: z.string().min(1).max(200),
    messages: z.array(message).min(1, 'must hold at least one message').max(OPENAI_MAX_MESSAGES),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().optional() }).loose().nullable().optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_tokens: z.number().int().min(1).max(1_000_000).nullable().optional(),
    max_completion_tokens: z.number().int().min(1).max(1_000_000).nullable().optional(),
    stop: z
      .union([z.string().min(1).max(200), z.array(z.string().min(1).max(200)).max(4, 'must hold at most 4 sequences')])
      .nullable()
      .optional(),
    n: z.number().int().nullable().optional(),
    logprobs: z.boolean().nullable().optional(),
    top_logprobs: z.number().int().nullable().optional(),
    tools: z.array(z.unknown()).nullable().optional(),
    functions: z.array(z.unknown()).nullable().optional(),
    tool_choice: z.unknown().optional(),
    function_call: z.unknown().optional(),
    response_format: z.object({ type: z.string() }).loose().nullable().optional(),
    frequency_penalty: z.number().nullable().optional(),
    presence_penalty: z.number().nullable().optional(),
    logit_bias: z.record(z.string(), z.number()).nullable().optional(),
    seed: z.number().int().nullable().optional(),
    modalities: z.array(z.string()).nullable().optional(),
    audio: z.unknown().optional(),
    prediction: z.unknown().optional(),
    metadata: z.record(z.string(), z.string().max(512)).nullable().optional(),
  })
  .loose();

type RawRequest = z.infer<typeof requestSchema>;

/** The turn a Chat Completions request asks for. */
export interface CompletionRequest {
  model: string;
  stream: boolean;
  includeUsage: boolean;
  sampling?: ModelSampling;
  /** The conversation in order, the user's message last. */
  conversation: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  /** The text of the last (user) message. */
  question: string;
  /** The stored session the turn belongs to (X-Session-Id or metadata.session_id); absent: stateless. */
  sessionId?: string;
  /** The knowledge collections the turn names (metadata.collection_ids); absent: none named. */
  collectionIds?: string[];
}

/** `messages[0].content` from a zod path. */
function paramOf(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((param, key) => (typeof key === 'number' ? `${param}[${key}]` : param ? `${param}.${String(key)}` : String(key)), '');
}

function invalid(param: string, message: string, code = 'invalid_value'): OpenAiError {
  return new OpenAiError(400, `Invalid '${param}': ${message}`, { type: 'invalid_request_error', code, param });
}

function unsupported(param: string, why: string): OpenAiError {
  return new OpenAiError(400, `'${param}' is not supported by this agent: ${why}`, { type: 'invalid_request_error', code: 'unsupported_parameter', param });
}

/** Parameters the agent cannot honour: a 400 naming each, rather than an answer that silently ignores it. */
function refuseUnsupported(body: RawRequest): void {
  if (body.n != null && body.n !== 1) throw unsupported('n', 'the agent gives one answer per request (n must be 1)');
  if (body.logprobs) throw unsupported('logprobs', 'the agent does not return token log probabilities');
  if (body.top_logprobs != null) throw unsupported('top_logprobs', 'the agent does not return token log probabilities');
  if (body.tools?.length) throw unsupported('tools', 'the agent calls its own tools; client-side tools are not accepted');
  if (body.functions?.length) throw unsupported('functions', 'the agent calls its own tools; client-side functions are not accepted');
  if (body.tool_choice != null && body.tool_choice !== 'none' && body.tool_choice !== 'auto') {
    throw unsupported('tool_choice', 'the agent chooses its own tools');
  }
  if (body.function_call != null && body.function_call !== 'none' && body.function_call !== 'auto') {
    throw unsupported('function_call', 'the agent chooses its own tools');
  }
  if (body.response_format && body.response_format.type !== 'text') {
    throw unsupported('response_format', 'the agent answers in text (with its RAG trace beside it)');
  }
  if (body.frequency_penalty) throw unsupported('frequency_penalty', 'not passed to the model (only 0 is accepted)');
  if (body.presence_penalty) throw unsupported('presence_penalty', 'not passed to the model (only 0 is accepted)');
  if (body.logit_bias && Object.keys(body.logit_bias).length > 0) throw unsupported('logit_bias', 'not passed to the model');
  if (body.seed != null) throw unsupported('seed', 'the agent cannot make its retrieval and tool calls reproducible by seed');
  if (body.modalities?.some((modality) => modality !== 'text')) throw unsupported('modalities', 'the agent answers in text only');
  if (body.audio != null) throw unsupported('audio', 'the agent answers in text only');
  if (body.prediction != null) throw unsupported('prediction', 'predicted outputs are not supported');
}

function textOf(content: RawRequest['messages'][number]['content'], index: number, role: string): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  const text = content
    .map((part, partIndex) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'refusal') {
        if (role !== 'assistant') throw unsupported(`messages[${index}].content[${partIndex}].type`, 'only an assistant message may hold a refusal');
        return part.refusal;
      }
      throw unsupported(`messages[${index}].content[${partIndex}].type`, `${part.type} parts are not accepted (text only)`);
    })
    .join('');
  if (text.length > OPENAI_MESSAGE_MAX_LENGTH) throw invalid(`messages[${index}].content`, `must be at most ${OPENAI_MESSAGE_MAX_LENGTH} characters`);
  return text;
}

/** Validates a request body and the session header into the turn it asks for; throws OpenAiError (400) naming the parameter. */
export function parseCompletionRequest(body: unknown, sessionHeader: unknown): CompletionRequest {
  const parsed = requestSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const param = paramOf(issue.path) || 'body';
    throw invalid(param, issue.message, issue.code === 'invalid_type' ? 'invalid_type' : 'invalid_value');
  }
  const raw = parsed.data;
  refuseUnsupported(raw);
  const conversation = raw.messages.map((entry, index) => {
    if (entry.role === 'tool' || entry.role === 'function') {
      throw unsupported(`messages[${index}].role`, `${entry.role} messages answer client-side tools, which the agent does not take`);
    }
    if (entry.tool_calls?.length || entry.function_call != null) {
      throw unsupported(`messages[${index}].tool_calls`, 'the agent calls its own tools; client-side tool calls are not accepted');
    }
    const role = entry.role === 'developer' ? ('system' as const) : entry.role;
    return { role, content: textOf(entry.content, index, entry.role) };
  });
  const last = conversation.length - 1;
  if (conversation[last].role !== 'user') {
    throw invalid(`messages[${last}].role`, "the last message must be the user's (the agent answers it)");
  }
  const question = conversation[last].content;
  const total = conversation.reduce((sum, entry) => sum + entry.content.length, 0);
  if (question.length > CHAT_MESSAGE_MAX_LENGTH) throw invalid(`messages[${last}].content`, `must be at most ${CHAT_MESSAGE_MAX_LENGTH} characters`);
  if (!hasVisibleCharacter(question)) throw invalid(`messages[${last}].content`, 'must contain visible text');

  const fromHeader = sessionHeader === undefined || sessionHeader === '' ? undefined : sessionHeader;
  if (fromHeader !== undefined && typeof fromHeader !== 'string') throw invalid('X-Session-Id', 'send the header once');
  const fromMetadata = raw.metadata?.session_id;
  let sessionId: string | undefined;
  for (const [param, value] of [
    ['X-Session-Id', fromHeader],
    ['metadata.session_id', fromMetadata],
  ] as const) {
    if (value === undefined) continue;
    const checked = sessionIdSchema.safeParse(value.trim());
    if (!checked.success) throw invalid(param, 'must be a session id (a UUID)');
    if (sessionId !== undefined && sessionId !== checked.data) throw invalid(param, 'names another session than X-Session-Id');
    sessionId = checked.data;
  }

  if (sessionId === undefined && total > OPENAI_CONVERSATION_MAX_LENGTH) {
    throw invalid('messages', `the conversation must be at most ${OPENAI_CONVERSATION_MAX_LENGTH} characters in all; send X-Session-Id to keep a longer one here`);
  }

  const collectionIds = collectionIdsOf(raw.metadata?.collection_ids);

  const stop = raw.stop == null ? undefined : typeof raw.stop === 'string' ? [raw.stop] : raw.stop;
  const maxTokens = raw.max_completion_tokens ?? raw.max_tokens ?? undefined;
  const sampling: ModelSampling = {
    ...(raw.temperature != null ? { temperature: raw.temperature } : {}),
    ...(raw.top_p != null ? { topP: raw.top_p } : {}),
    ...(maxTokens != null ? { maxTokens } : {}),
    ...(stop?.length ? { stop } : {}),
  };
  return {
    model: raw.model,
    stream: raw.stream === true,
    includeUsage: raw.stream_options?.include_usage === true,
    sampling: Object.keys(sampling).length > 0 ? sampling : undefined,
    conversation,
    question,
    sessionId,
    collectionIds,
  };
}

/**
 * `metadata.collection_ids`: OpenAI's metadata values are strings, so the
 * collections are one string of ids separated by commas (spaces around them
 * are ignored); absent or blank: none named.
 */
function collectionIdsOf(value: string | undefined): string[] | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const ids = value.split(',').map((id) => id.trim());
  const problem = ids.includes('') ? 'holds an empty id' : collectionIdsProblem(ids);
  if (problem) throw invalid('metadata.collection_ids', `must be collection ids separated by commas: ${problem.replace(/^\[(\d+)\]/, 'item $1')}`);
  return ids;
}
