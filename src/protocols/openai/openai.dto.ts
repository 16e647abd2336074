import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PendingHitlState, RagTrace } from '../../trace/trace.protocol.js';

/*
 * The OpenAI shapes for the OpenAPI document. The request is validated by
 * openai-request.ts (the public API's rules and error bodies), not by these
 * classes: they only describe it.
 */

export class OpenAiErrorObjectDoc {
  @ApiProperty()
  message: string;

  @ApiProperty({ example: 'invalid_request_error', description: '`invalid_request_error`, `permission_error`, `requests` (429) or `server_error`' })
  type: string;

  @ApiProperty({ type: String, nullable: true, description: 'The parameter at fault (`n`, `messages[0].content`, `X-Session-Id`…)' })
  param: string | null;

  @ApiProperty({
    type: String,
    nullable: true,
    description: "`model_not_found`, `invalid_api_key`, `rate_limit_exceeded`, `unsupported_parameter`, `unsupported_media_type`, or this service's ErrorCode",
  })
  code: string | null;

  @ApiPropertyOptional({
    type: Boolean,
    nullable: true,
    description: "A failed chat turn's only: whether the user's message was kept (null: not known yet; always false without a session)",
  })
  message_saved?: boolean | null;
}

/** The OpenAI API's error body. */
export class OpenAiErrorBodyDoc {
  @ApiProperty({ type: () => OpenAiErrorObjectDoc })
  error: OpenAiErrorObjectDoc;
}

export class ModelDoc {
  @ApiProperty({ example: 'rag-agent' })
  id: string;

  @ApiProperty({ enum: ['model'] })
  object: 'model';

  @ApiProperty({ description: 'Unix seconds (when this instance started)' })
  created: number;

  @ApiProperty({ example: 'agentic-rag-chat' })
  owned_by: string;
}

export class ModelListDoc {
  @ApiProperty({ enum: ['list'] })
  object: 'list';

  @ApiProperty({ type: () => [ModelDoc] })
  data: ModelDoc[];
}

export class ChatCompletionMessageDoc {
  @ApiProperty({ enum: ['system', 'developer', 'user', 'assistant'], description: '`tool` and `function` messages are refused (400)' })
  role: string;

  @ApiProperty({
    description: 'Text, or an array of `{type: "text", text}` parts (other part types are refused)',
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', properties: { type: { type: 'string' }, text: { type: 'string' } } } }],
  })
  content: string | Array<{ type: string; text?: string }>;
}

export class ChatCompletionRequestDoc {
  @ApiProperty({ example: 'rag-agent', description: 'OPENAI_COMPAT_MODEL; any other id is a 404 `model_not_found`' })
  model: string;

  @ApiProperty({
    type: () => [ChatCompletionMessageDoc],
    description: "The conversation, the user's message last. With a session only the last message is used (the session holds the rest).",
    example: [{ role: 'user', content: 'What is the warranty period?' }],
  })
  messages: ChatCompletionMessageDoc[];

  @ApiPropertyOptional({ description: 'true: an SSE stream of `chat.completion.chunk`, ending `data: [DONE]`' })
  stream?: boolean;

  @ApiPropertyOptional({ description: '`{include_usage: true}`: a last chunk with `usage` and no choices' })
  stream_options?: { include_usage?: boolean };

  @ApiPropertyOptional({ minimum: 0, maximum: 2, description: 'Passed to the model (the local model ignores it)' })
  temperature?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1, description: 'Passed to the model (the local model ignores it)' })
  top_p?: number;

  @ApiPropertyOptional({ minimum: 1, description: 'Token limit of the answer, passed to the model (`max_completion_tokens` too)' })
  max_tokens?: number;

  @ApiPropertyOptional({ description: 'Up to 4 stop sequences, passed to the model', oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] })
  stop?: string | string[];

  @ApiPropertyOptional({
    description:
      '`session_id`: the session the turn belongs to (as X-Session-Id). `collection_ids`: the knowledge collections to search, ids (or `default`) separated by commas; ' +
      'absent: those saved on the session, else every collection the caller can read; one the caller cannot read answers 404 `collection_not_found`',
    example: {},
  })
  metadata?: Record<string, string>;
}

export class CompletionMessageDoc {
  @ApiProperty({ enum: ['assistant'] })
  role: 'assistant';

  @ApiProperty({ description: 'The answer; for a paused turn its question and numbered options' })
  content: string;

  @ApiProperty({ type: String, nullable: true })
  refusal: null;
}

export class CompletionChoiceDoc {
  @ApiProperty()
  index: number;

  @ApiProperty({ type: () => CompletionMessageDoc })
  message: CompletionMessageDoc;

  @ApiProperty({ type: Object, nullable: true })
  logprobs: null;

  @ApiProperty({ enum: ['stop', 'length', 'content_filter'] })
  finish_reason: string;
}

export class CompletionUsageDoc {
  @ApiProperty()
  prompt_tokens: number;

  @ApiProperty()
  completion_tokens: number;

  @ApiProperty()
  total_tokens: number;

  @ApiPropertyOptional({ description: 'true when the model did not report its counts and they were estimated (o200k_base tokenizer)' })
  estimated?: boolean;
}

export class ChatCompletionDoc {
  @ApiProperty({ example: 'chatcmpl-…' })
  id: string;

  @ApiProperty({ enum: ['chat.completion'] })
  object: 'chat.completion';

  @ApiProperty()
  created: number;

  @ApiProperty()
  model: string;

  @ApiProperty({ type: String, nullable: true })
  system_fingerprint: null;

  @ApiProperty({ type: () => [CompletionChoiceDoc] })
  choices: CompletionChoiceDoc[];

  @ApiProperty({ type: () => CompletionUsageDoc })
  usage: CompletionUsageDoc;

  @ApiProperty({ type: () => RagTrace, nullable: true, description: "This service's RAG trace of the turn (an extra field)" })
  rag_trace: RagTrace | null;

  @ApiProperty({ type: () => PendingHitlState, nullable: true, description: 'The question the turn paused on (an extra field); answer it in the same session' })
  pending_hitl: PendingHitlState | null;

  @ApiPropertyOptional({ format: 'uuid', description: 'The session of a session turn (an extra field)' })
  session_id?: string;
}
