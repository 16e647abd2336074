import type { MessageInfo } from '../../session/session.dto.js';
import type { PendingHitlState, RagTrace } from '../../trace/trace.protocol.js';

/** A LangChain message as the LangGraph Server API carries it (`BaseMessage.toDict()` data plus `type`). */
export interface LcMessage {
  type: 'human' | 'ai' | 'system' | 'tool';
  id: string;
  content: string;
  additional_kwargs: Record<string, unknown>;
  response_metadata: Record<string, unknown>;
  name?: string;
  tool_calls?: LcToolCall[];
  invalid_tool_calls?: unknown[];
  tool_call_id?: string;
  status?: 'success' | 'error';
}

export interface LcToolCall {
  name: string;
  args: Record<string, unknown>;
  id: string;
  type: 'tool_call';
}

/** An interrupt as the clients read it: `{value, id}`. */
export interface LgInterrupt {
  value: Record<string, unknown>;
  id: string;
}

/**
 * The message ids a run's messages have on this API: derived from the run, so
 * the answer's id in `messages-tuple` chunks, while it streams, is the id it
 * has in `values` and in the history once it is stored.
 */
export function answerMessageId(runId: string): string {
  return `run-${runId}`;
}

export function questionMessageId(runId: string): string {
  return `run-${runId}-input`;
}

function messageIdOf(message: MessageInfo): string {
  if (!message.run_id) return message.id;
  return message.type === 'ai' ? answerMessageId(message.run_id) : message.type === 'human' ? questionMessageId(message.run_id) : message.id;
}

/**
 * A stored message as a LangChain message dict; an answer carries its status, tools and (unless `withTrace` is false:
 * the history and thread lists, which repeat every message) its trace in `additional_kwargs`.
 */
export function toLcMessage(message: MessageInfo, withTrace = true): LcMessage {
  const id = messageIdOf(message);
  const kwargs: Record<string, unknown> = { seq: message.seq, status: message.status, timestamp: message.timestamp };
  if (message.type === 'ai') {
    return {
      type: 'ai',
      id,
      content: message.content,
      additional_kwargs: { ...kwargs, tools: message.tools, ...(withTrace && message.rag_trace ? { rag_trace: message.rag_trace } : {}) },
      response_metadata: {},
      tool_calls: [],
      invalid_tool_calls: [],
    };
  }
  return { type: message.type, id, content: message.content, additional_kwargs: kwargs, response_metadata: {} };
}

export function humanMessage(id: string, content: string): LcMessage {
  return { type: 'human', id, content, additional_kwargs: {}, response_metadata: {} };
}

export function answerMessage(runId: string, content: string, trace: RagTrace | null): LcMessage {
  return {
    type: 'ai',
    id: answerMessageId(runId),
    content,
    additional_kwargs: trace ? { rag_trace: trace } : {},
    response_metadata: {},
    tool_calls: [],
    invalid_tool_calls: [],
  };
}

/** The name of the interrupt's single action in agent-chat-ui's `{action_requests, review_configs}` shape. */
export const CLARIFY_ACTION = 'clarify';

/**
 * A paused question as an interrupt. `value` is our PendingHitlState, plus
 * the HITL middleware's `action_requests`/`review_configs` so agent-chat-ui
 * shows it as a review: approve takes the first option, edit sends
 * `args.answer`, reject sends its message as the answer.
 */
export function interruptOf(pending: PendingHitlState): LgInterrupt {
  const question = pending.clarification_prompt || pending.original_question;
  const options = pending.options ?? [];
  const description = options.length > 0 ? `${question}\n\n${options.map((option, i) => `${i + 1}. ${option}`).join('\n')}` : question;
  return {
    id: pending.task_id ?? 'pending',
    value: {
      ...pending,
      action_requests: [{ name: CLARIFY_ACTION, args: { answer: options[0] ?? '' }, description }],
      review_configs: [{ action_name: CLARIFY_ACTION, allowed_decisions: options.length > 0 ? ['approve', 'edit', 'reject'] : ['edit', 'reject'] }],
    },
  };
}
