import { WHOLE_TURN_ERRORS } from '../../chat/turn-route-errors.js';
import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBearerAuth, ApiBody, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AIMessage, BaseMessage, HumanMessage, SystemMessage } from '@langchain/core/messages';
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { AuthUser } from '../../auth/auth-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import { lastFinishReason, turnUsage } from '../../agent/turn-usage.js';
import { TurnContext } from '../../agent/turn-context.js';
import { ChatService, Emit } from '../../chat/chat.service.js';
import { TurnFailedError } from '../../chat/chat.errors.js';
import { RunEventsService } from '../../chat/run-events.service.js';
import { StartsTurn, TurnDrain } from '../../chat/turn-drain.service.js';
import { TurnScopes } from '../../chat/turn-scopes.service.js';
import type { RetrievalScope } from '../../knowledge/public-api.js';
import { ApiErrorResponsesOf } from '../../common/api-error.responses.js';
import { nonJsonBodyProblem } from '../../common/json-body.js';
import { CodedError } from '../../common/coded-error.js';
import { SseWriter } from '../../common/sse-stream.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { RateLimit } from '../../rate-limit/rate-limit.guard.js';
import type { PendingHitlState, RagTrace } from '../../trace/trace.protocol.js';
import { ChatCompletionDoc, ChatCompletionRequestDoc, ModelDoc, ModelListDoc, OpenAiErrorBodyDoc } from './openai.dto.js';
import { CompletionChunks, CompletionExtras, CompletionIdentity, completionTransport, finishReasonOf, hitlContent, streamError, usageObject } from './completion-stream.js';
import { OpenAiError } from './openai-errors.js';
import { CompletionRequest, parseCompletionRequest } from './openai-request.js';

const SERVICE_STARTED = Math.floor(Date.now() / 1000);

function toLangChain(conversation: CompletionRequest['conversation']): BaseMessage[] {
  return conversation.map(({ role, content }) => (role === 'system' ? new SystemMessage(content) : role === 'user' ? new HumanMessage(content) : new AIMessage(content)));
}

/** The code of the 415 below, in the OpenAI error's vocabulary, and its meaning for the OpenAPI document. */
const UNSUPPORTED_MEDIA_TYPE = { status: 415, code: 'unsupported_media_type', meaning: 'The request body is not JSON: send it with Content-Type: application/json' } as const;

/**
 * A body of another media type than JSON (text/plain, a form) is a 415:
 * the JSON parser leaves it unread, so it would otherwise be refused as a
 * body without its fields. Express's `req.is` (type-is) reads the
 * Content-Type; a request without a body is left to the request's checks.
 */
function refuseNonJsonBody(req: Request): void {
  const problem = nonJsonBodyProblem(req);
  if (!problem) return;
  throw new OpenAiError(415, problem, {
    type: 'invalid_request_error',
    code: UNSUPPORTED_MEDIA_TYPE.code,
    param: null,
  });
}

/**
 * The OpenAI Chat Completions API over the agent, for the clients that
 * speak it (the openai SDKs, Open WebUI, LibreChat, the AI SDK's
 * openai-compatible provider). With a session (`X-Session-Id` or
 * `metadata.session_id`) a request is a normal turn of that session; without
 * one its messages are the whole conversation and nothing is stored.
 */
@ApiTags('openai')
@ApiBearerAuth()
@Controller('v1')
export class OpenAiCompatController {
  constructor(
    private readonly chat: ChatService,
    private readonly events: RunEventsService,
    private readonly drain: TurnDrain,
    private readonly scopes: TurnScopes,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get modelId(): string {
    return this.config.chat.openAiModelId;
  }

  private model() {
    return { id: this.modelId, object: 'model' as const, created: SERVICE_STARTED, owned_by: 'agentic-rag-chat' };
  }

  @Get('models')
  @ApiOperation({ summary: 'The models this service answers as (OpenAI-compatible): the agent, OPENAI_COMPAT_MODEL' })
  @ApiOkResponse({ type: ModelListDoc })
  @ApiErrorResponsesOf(OpenAiErrorBodyDoc, 401)
  models(): ModelListDoc {
    return { object: 'list', data: [this.model()] };
  }

  @Get('models/:model')
  @ApiOperation({ summary: 'One model (OpenAI-compatible); 404 `model_not_found` for any other id' })
  @ApiOkResponse({ type: ModelDoc })
  @ApiErrorResponsesOf(OpenAiErrorBodyDoc, 401, 404)
  modelById(@Param('model') id: string): ModelDoc {
    this.checkModel(id);
    return this.model();
  }

  @Post('chat/completions')
  @HttpCode(200)
  @RateLimit('chat')
  @StartsTurn()
  @ApiOperation({
    summary: 'A chat turn in the OpenAI Chat Completions shape (stream: true → chat.completion.chunk SSE ending data: [DONE])',
    description:
      'Errors answer `{error: {message, type, param, code}}`. The answer carries the RAG trace as a top-level `rag_trace` ' +
      '(on the final chunk when streaming) and a paused turn as `pending_hitl`, with its question and options as the content. ' +
      "`usage` counts the agent's model calls as the model reported them, else estimated (`usage.estimated: true`).",
  })
  @ApiHeader({ name: 'X-Session-Id', required: false, description: 'A session of the caller (UUID): the turn is stored in it; absent: stateless' })
  @ApiBody({ type: ChatCompletionRequestDoc })
  @ApiOkResponse({ type: ChatCompletionDoc, description: '`chat.completion`, or with `stream: true` an SSE stream of `chat.completion.chunk`' })
  @ApiErrorResponsesOf(OpenAiErrorBodyDoc, ...WHOLE_TURN_ERRORS, 415, UNSUPPORTED_MEDIA_TYPE)
  async complete(@CurrentUser() user: AuthUser, @Req() req: Request, @Body() body: unknown, @Headers('x-session-id') sessionHeader: unknown, @Res() res: Response): Promise<void> {
    refuseNonJsonBody(req);
    const request = parseCompletionRequest(body, sessionHeader);
    this.checkModel(request.model);
    const identity: CompletionIdentity = { id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000), model: this.modelId };
    const scope = await this.scopes.forTurn(user, request.collectionIds, request.sessionId);
    if (request.sessionId !== undefined) await this.sessionTurn(user, request, scope, identity, res);
    else await this.statelessTurn(user, request, scope, identity, res);
  }

  private checkModel(id: string): void {
    if (id !== this.modelId) {
      throw new OpenAiError(404, `The model '${id}' does not exist; this service answers as '${this.modelId}'`, {
        type: 'invalid_request_error',
        code: 'model_not_found',
        param: 'model',
      });
    }
  }

  /** A turn of a stored session: one run at a time, stored, cached, resumable when it pauses. */
  private async sessionTurn(user: AuthUser, request: CompletionRequest, scope: RetrievalScope, identity: CompletionIdentity, res: Response): Promise<void> {
    const turn = await this.chat.prepare(user.userId, request.question, request.sessionId);
    res.setHeader('X-Session-Id', turn.sessionId);
    if (!request.stream) {
      const context = this.turnContext(turn, 'sync', request, scope);
      const result = await this.chat.runSync(turn, context);
      res.status(200).json(await this.completion(identity, context, result, turn.sessionId));
      return;
    }
    const context = this.turnContext(turn, 'stream', request, scope);
    const writer = new SseWriter(res, completionTransport(this.config.chat.sseHeartbeatMs));
    const chunks = new CompletionChunks(identity, request.includeUsage);
    void writer.write(chunks.role());
    this.chat.startStreaming(turn, context);
    writer.startHeartbeat();
    try {
      // The run goes on when the client leaves, as on POST /api/chat/stream.
      for await (const event of await this.events.follow(turn.runId, 0, { status: async () => 'running', signal: writer.signal })) {
        const extras = { rag_trace: chunks.trace, pending_hitl: chunks.pending, session_id: turn.sessionId };
        await writer.write(event.event === 'done' ? await this.finishChunks(chunks, context, extras) : chunks.map(event));
      }
    } finally {
      writer.end();
    }
  }

  /** The request's messages are the conversation; nothing is stored; the client leaving stops the turn. */
  private async statelessTurn(user: AuthUser, request: CompletionRequest, scope: RetrievalScope, identity: CompletionIdentity, res: Response): Promise<void> {
    const runId = randomUUID();
    const turn = { userId: user.userId, sessionId: runId, runId };
    const messages = toLangChain(request.conversation);
    const abort = new AbortController();
    // The instance's shutdown stops it too, once the drain time is over.
    const stopped = AbortSignal.any([abort.signal, this.drain.signal]);
    if (!request.stream) {
      const context = this.turnContext(turn, 'sync', request, scope);
      res.on('close', () => {
        if (!res.writableFinished) abort.abort();
      });
      const result = await this.chat.runStateless(messages, context, () => undefined, stopped);
      if (!res.writableEnded) res.status(200).json(await this.completion(identity, context, result));
      return;
    }
    const context = this.turnContext(turn, 'stream', request, scope);
    const writer = new SseWriter(res, completionTransport(this.config.chat.sseHeartbeatMs));
    const chunks = new CompletionChunks(identity, request.includeUsage);
    void writer.write(chunks.role());
    writer.startHeartbeat();
    res.on('close', () => {
      if (!writer.ended) abort.abort();
    });
    const emit: Emit = (...event) => {
      if (event[0] === 'token') void writer.write(chunks.content(event[1].text));
    };
    try {
      const result = await this.chat.runStateless(messages, context, emit, stopped);
      if (result.pending_hitl) await writer.write(chunks.paused(result.pending_hitl));
      await writer.write(await this.finishChunks(chunks, context, { rag_trace: result.rag_trace, pending_hitl: result.pending_hitl }));
    } catch (error) {
      const failure = error instanceof CodedError ? error : new TurnFailedError('internal_error', 'The turn failed on an internal error. Nothing was saved.', false);
      await writer.write(chunks.fail(streamError(failure.code, failure.message, failure instanceof TurnFailedError ? failure.messageSaved : undefined)));
    } finally {
      writer.end();
    }
  }

  private turnContext(turn: { userId: string; sessionId: string; runId: string }, mode: 'sync' | 'stream', request: CompletionRequest, scope: RetrievalScope): TurnContext {
    return TurnContext.of(turn, mode, { sampling: request.sampling, scope });
  }

  /** The end of a streamed completion: its final chunk (with the turn's finish reason), its usage, `[DONE]`. */
  private async finishChunks(chunks: CompletionChunks, context: TurnContext, extras: CompletionExtras): Promise<string> {
    const usage = await turnUsage(context.modelCalls);
    return chunks.finish(extras.pending_hitl ? 'stop' : finishReasonOf(lastFinishReason(context.modelCalls)), extras, usage);
  }

  private async completion(
    identity: CompletionIdentity,
    context: TurnContext,
    result: { response: string; rag_trace: RagTrace | null; pending_hitl: PendingHitlState | null },
    sessionId?: string,
  ): Promise<ChatCompletionDoc> {
    const usage = await turnUsage(context.modelCalls);
    return {
      id: identity.id,
      object: 'chat.completion',
      created: identity.created,
      model: identity.model,
      system_fingerprint: null,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: result.pending_hitl ? hitlContent(result.pending_hitl) : result.response, refusal: null },
          logprobs: null,
          finish_reason: result.pending_hitl ? 'stop' : finishReasonOf(lastFinishReason(context.modelCalls)),
        },
      ],
      usage: usageObject(usage) as unknown as ChatCompletionDoc['usage'],
      rag_trace: result.rag_trace,
      pending_hitl: result.pending_hitl,
      ...(sessionId ? { session_id: sessionId } : {}),
    };
  }
}
