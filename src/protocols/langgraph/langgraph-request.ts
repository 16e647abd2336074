import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { ChatRequest } from '../../chat/chat.dto.js';
import { collectionIdsProblem } from '../../common/collection-ids.js';
import { storableTextProblem } from '../../common/storable-text.js';
import { OPENAI_MAX_MESSAGES, OPENAI_MESSAGE_MAX_LENGTH } from '../openai/openai-request.js';
import { RequestError } from '../../common/coded-error.js';
import type { ModelSampling } from '../../models/sampling.js';
import { CLARIFY_ACTION } from './langgraph-messages.js';
import { isRecord, metadataOf } from './langgraph-params.js';
import { ASSISTANT_ID, GRAPH_ID } from './langgraph-state.js';

export const MULTITASK_STRATEGIES = ['reject', 'interrupt', 'rollback', 'enqueue'] as const;
export type MultitaskStrategy = (typeof MULTITASK_STRATEGIES)[number];

/** A message of a run's `input.messages` that the turn uses: its role and text. */
export interface InputMessage {
  role: 'human' | 'ai' | 'system';
  text: string;
}

/** A run request of the LangGraph Server API, as far as this service uses it; other fields are accepted and ignored. */
export interface LgRunRequest {
  /** The text the turn answers: the last human message of `input.messages`, or the answer `command.resume` gives. */
  message: string | null;
  /** `command.resume` was given: the message answers the thread's interrupt. */
  resume: boolean;
  /** Every text message of the input, in order (a thread-less run's conversation). */
  conversation: InputMessage[];
  modes: Set<string>;
  onDisconnect: 'cancel' | 'continue';
  strategy: MultitaskStrategy;
  ifNotExists: 'reject' | 'create';
  metadata: Record<string, unknown>;
  collectionIds: string[] | undefined;
  sampling: ModelSampling | undefined;
  checkpointId: string | null;
}

const MAX_STREAM_MODES = 16;

function fail(message: string): never {
  throw new RequestError('invalid_request', message);
}

/** `assistant_id`: the graph id `agent` or its assistant's id. */
export function checkAssistant(value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'string') fail('assistant_id must be a string');
  if (value !== GRAPH_ID && value.toLowerCase() !== ASSISTANT_ID) {
    throw new RequestError('assistant_not_found', `No assistant found for "${value.slice(0, 100)}": this service serves "${GRAPH_ID}" (${ASSISTANT_ID})`);
  }
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], name: string, fallback: T): T {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string' || !allowed.includes(value as T)) fail(`${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** `stream_mode`: one mode or a list; unknown modes are accepted (and produce nothing). */
export function parseStreamModes(value: unknown, fallback: readonly string[] = ['values']): Set<string> {
  if (value === undefined || value === null) return new Set(fallback);
  const list = Array.isArray(value) ? value : [value];
  if (list.length > MAX_STREAM_MODES || list.some((mode) => typeof mode !== 'string' || mode.length > 64)) {
    fail(`stream_mode must be a mode name or a list of at most ${MAX_STREAM_MODES}`);
  }
  return list.length === 0 ? new Set(fallback) : new Set(list as string[]);
}

/** The text of a LangChain message's content: a string, or the text of its text blocks. */
function textOf(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .filter((block): block is Record<string, unknown> => isRecord(block) && block.type === 'text')
      .map((block) => {
        if (typeof block.text !== 'string') fail(`${at}: a text block's text must be a string`);
        return block.text;
      })
      .join('\n');
  }
  return fail(`${at}: content must be a string or a list of content blocks`);
}

const ROLES: Record<string, InputMessage['role'] | 'skip'> = {
  human: 'human',
  user: 'human',
  ai: 'ai',
  assistant: 'ai',
  system: 'system',
  tool: 'skip',
  function: 'skip',
  remove: 'skip',
};

function inputMessages(input: unknown): InputMessage[] {
  if (input === undefined || input === null) return [];
  if (!isRecord(input)) fail('input must be an object');
  const raw = input.messages;
  if (raw === undefined) return [];
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length > OPENAI_MAX_MESSAGES) fail(`input.messages must hold at most ${OPENAI_MAX_MESSAGES} messages`);
  const messages: InputMessage[] = [];
  list.forEach((item, index) => {
    const at = `input.messages[${index}]`;
    if (typeof item === 'string') return messages.push({ role: 'human', text: item });
    // A [role, content] pair, as LangChain accepts.
    const [role, content] = Array.isArray(item) && item.length === 2 ? item : isRecord(item) ? [item.type ?? item.role, item.content] : [undefined, undefined];
    const kind = typeof role === 'string' && Object.hasOwn(ROLES, role) ? ROLES[role] : undefined;
    if (!kind) fail(`${at}: a message needs a type (human, ai, system or tool) and content`);
    if (kind === 'skip') return;
    const text = textOf(content, at);
    const problem = storableTextProblem(text);
    if (problem) fail(`${at}: its text ${problem}`);
    if (text.length > OPENAI_MESSAGE_MAX_LENGTH) fail(`${at}: its text must be at most ${OPENAI_MESSAGE_MAX_LENGTH} characters`);
    messages.push({ role: kind, text });
  });
  return messages;
}

/**
 * The answer a `command.resume` gives to a paused question: text, an option,
 * or agent-chat-ui's `{decisions: [...]}` (approve: the suggested answer;
 * edit: `edited_action.args.answer`; reject: its message), or a map of
 * interrupt id to any of these.
 */
export function resumeText(resume: unknown, suggested: string | null): string {
  if (typeof resume === 'string') return resume;
  if (typeof resume === 'number' || typeof resume === 'boolean') return String(resume);
  if (Array.isArray(resume) && resume.length > 0) return resumeText(resume[0], suggested);
  if (!isRecord(resume)) return fail('command.resume must be text, {answer}, or {decisions: [...]}');
  if (typeof resume.answer === 'string') return resume.answer;
  // The older HumanResponse ({type: "response", args: text} | {type: "accept"} | {type: "edit", args: {args: {answer}}}).
  if (resume.type === 'response' && typeof resume.args === 'string') return resume.args;
  if (resume.type === 'accept' && suggested) return suggested;
  if (resume.type === 'edit' && isRecord(resume.args) && isRecord(resume.args.args) && typeof resume.args.args.answer === 'string') return resume.args.args.answer;
  if (Array.isArray(resume.decisions) && resume.decisions.length > 0) {
    const decision = resume.decisions[0] as Record<string, unknown>;
    if (!isRecord(decision)) return fail('command.resume.decisions[0] must be an object');
    if (decision.type === 'approve' || decision.type === 'accept') {
      if (!suggested) fail('Nothing to approve: this question has no suggested answer; send an edit with args.answer, or a reject with a message');
      return suggested;
    }
    if (decision.type === 'edit') {
      const action = decision.edited_action ?? decision.editedAction;
      const args = isRecord(action) ? action.args : undefined;
      if (isRecord(args) && typeof args.answer === 'string') return args.answer;
      return fail(`command.resume.decisions[0].edited_action.args.answer must be text (the action is "${CLARIFY_ACTION}")`);
    }
    if ((decision.type === 'reject' || decision.type === 'response') && typeof (decision.message ?? decision.args) === 'string')
      return (decision.message ?? decision.args) as string;
    return fail('command.resume.decisions[0] must be approve, edit (edited_action.args.answer) or reject (message)');
  }
  // A map of interrupt id to its answer: this service pauses on one question at a time.
  const values = Object.values(resume);
  if (values.length === 1) return resumeText(values[0], suggested);
  return fail('command.resume must be text, {answer}, or {decisions: [...]}');
}

/** Checks the turn's text as POST /api/chat checks its `message`. */
async function checkedText(text: string, at: string): Promise<string> {
  const turn = plainToInstance(ChatRequest, { message: text });
  const errors = await validate(turn);
  if (errors.length > 0) {
    fail(Object.values(errors[0].constraints ?? {}).map((problem) => `${at}${problem.startsWith('message') ? problem.slice('message'.length) : `: ${problem}`}`)[0]);
  }
  return turn.message;
}

function samplingOf(configurable: Record<string, unknown>): ModelSampling | undefined {
  const sampling: ModelSampling = {};
  const number = (name: string, min: number, max: number): number | undefined => {
    const value = configurable[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) fail(`${name} must be a number from ${min} to ${max}`);
    return value;
  };
  sampling.temperature = number('temperature', 0, 2);
  sampling.topP = number('top_p', 0, 1);
  const maxTokens = number('max_tokens', 1, 1_000_000);
  if (maxTokens !== undefined) sampling.maxTokens = Math.floor(maxTokens);
  const defined = Object.fromEntries(Object.entries(sampling).filter(([, value]) => value !== undefined));
  return Object.keys(defined).length > 0 ? defined : undefined;
}

/**
 * A run's body (runs.stream, runs.create, runs.wait). `input.messages`
 * gives the question (its last human message); `command.resume` answers a
 * paused one (`suggested` is what an approve takes). `config.configurable`
 * and `context` may carry `collection_ids`, `temperature`, `top_p` and
 * `max_tokens`.
 */
export async function parseRunRequest(raw: unknown, suggested: () => Promise<string | null>): Promise<LgRunRequest> {
  if (!isRecord(raw)) fail('The body must be a JSON object');
  checkAssistant(raw.assistant_id);
  const command = raw.command;
  if (command !== undefined && command !== null && !isRecord(command)) fail('command must be an object');
  if (isRecord(command) && (command.goto !== undefined || command.update !== undefined) && command.resume === undefined) {
    throw new RequestError('not_supported', 'command.goto and command.update are not supported: answer an interrupt with command.resume');
  }
  const conversation = inputMessages(raw.input);
  const resume = isRecord(command) && command.resume !== undefined;
  let message: string | null = null;
  if (resume) {
    message = await checkedText(resumeText(command.resume, await suggested()), 'command.resume');
  } else {
    const last = conversation.at(-1);
    if (last) {
      if (last.role !== 'human') fail("input.messages: the last message must be the user's");
      message = await checkedText(last.text, `input.messages[${conversation.length - 1}]`);
    }
  }
  const config = isRecord(raw.config) ? raw.config : {};
  const configurable = { ...(isRecord(config.configurable) ? config.configurable : {}), ...(isRecord(raw.context) ? raw.context : {}) };
  let collectionIds: string[] | undefined;
  if (configurable.collection_ids !== undefined && configurable.collection_ids !== null) {
    const problem = collectionIdsProblem(configurable.collection_ids);
    if (problem) fail(`collection_ids ${problem}`);
    collectionIds = configurable.collection_ids as string[];
  }
  const metadata = metadataOf(raw.metadata);
  const checkpoint = isRecord(raw.checkpoint) ? raw.checkpoint.checkpoint_id : raw.checkpoint_id;
  if (checkpoint !== undefined && checkpoint !== null && (typeof checkpoint !== 'string' || checkpoint.length > 64)) fail('checkpoint_id must be a checkpoint id of the thread');
  return {
    message,
    resume,
    conversation,
    modes: parseStreamModes(raw.stream_mode),
    onDisconnect: oneOf(raw.on_disconnect, ['cancel', 'continue'], 'on_disconnect', 'continue'),
    strategy: oneOf(raw.multitask_strategy, MULTITASK_STRATEGIES, 'multitask_strategy', 'reject'),
    ifNotExists: oneOf(raw.if_not_exists, ['reject', 'create'], 'if_not_exists', 'reject'),
    metadata,
    collectionIds,
    sampling: samplingOf(configurable),
    checkpointId: typeof checkpoint === 'string' ? checkpoint : null,
  };
}
