import { AIMessage, BaseMessage } from '@langchain/core/messages';
import { estimateTokens } from '../models/token-estimate.js';

/** A turn's tokens in OpenAI's `usage` shape; `estimated` when a model call did not report its own counts. */
export interface TurnUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  estimated: boolean;
}

/** Each message's estimate, kept while the message lives: a turn's prompts repeat the earlier messages at every model call. */
const estimates = new WeakMap<BaseMessage, number>();

/**
 * The estimates of the texts counted last, by text: the system prompt and a
 * session's recent messages come back in new message objects at every call
 * and every turn (read from the checkpoint or the session).
 */
const byText = new Map<string, number>();
const TEXTS_KEPT = 512;
/** Longer texts are not kept by text (a tool's passages, a pasted document): counted again if they come back. */
const KEPT_TEXT_MAX_LENGTH = 4000;

async function estimateMessage(message: BaseMessage): Promise<number> {
  let tokens = estimates.get(message);
  if (tokens === undefined) {
    const text = messageText(message);
    tokens = byText.get(text);
    if (tokens === undefined) {
      tokens = await estimateTokens(text);
      if (text.length <= KEPT_TEXT_MAX_LENGTH) {
        if (byText.size >= TEXTS_KEPT) byText.delete(byText.keys().next().value!);
        byText.set(text, tokens);
      }
    }
    estimates.set(message, tokens);
  }
  return tokens;
}

function messageText(message: BaseMessage): string {
  const content =
    typeof message.content === 'string' ? message.content : message.content.map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
  const calls = message instanceof AIMessage && message.tool_calls?.length ? JSON.stringify(message.tool_calls.map((c) => [c.name, c.args])) : '';
  return content + calls;
}

/**
 * The tokens of the agent's model calls in a turn: the counts a model
 * reported (`usage_metadata`), else the o200k_base tokenizer's count of what
 * it was sent and what it answered. Calls the fast model makes inside tools
 * (grading, rewriting) are not included.
 */
export async function turnUsage(calls: ReadonlyArray<{ prompt: BaseMessage[]; response: BaseMessage }>): Promise<TurnUsage> {
  let prompt = 0;
  let completion = 0;
  let estimated = calls.length === 0;
  for (const call of calls) {
    const reported = call.response instanceof AIMessage ? call.response.usage_metadata : undefined;
    if (reported && Number.isFinite(reported.input_tokens) && Number.isFinite(reported.output_tokens)) {
      prompt += reported.input_tokens;
      completion += reported.output_tokens;
      continue;
    }
    estimated = true;
    for (const message of call.prompt) prompt += await estimateMessage(message);
    completion += await estimateMessage(call.response);
  }
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, estimated };
}

/** The last model answer's `finish_reason` (`stop`, `length`…), when the model said. */
export function lastFinishReason(calls: ReadonlyArray<{ response: BaseMessage }>): string | undefined {
  const metadata = calls.at(-1)?.response.response_metadata as { finish_reason?: unknown } | undefined;
  return typeof metadata?.finish_reason === 'string' ? metadata.finish_reason : undefined;
}
