import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake model does for one request. */
export type FakeReply =
  /** With `hangAfter`, a streamed reply sends that many pieces and then never finishes (a model cut off mid-answer). */
  | { content: string; hangAfter?: number; usage?: { prompt_tokens: number; completion_tokens: number } }
  /** `args` as a string is sent as it is (say, arguments that are not JSON). */
  | { toolCalls: Array<{ name: string; args: Record<string, unknown> | string }> }
  | { status: number; error: string }
  | { hang: true };

interface RecordedRequest {
  stream: boolean;
  model: string;
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown; name?: string }>;
  tools: Array<{ function: { name: string } }>;
  /** The function the request forces (`tool_choice`), as structured output by function calling does. */
  forcedFunction: string | null;
  /** The whole request body (sampling parameters and all). */
  body: Record<string, unknown>;
}

/**
 * An OpenAI-compatible chat completions endpoint that plays scripted
 * replies in order (streamed or whole, as the client asks), so the real
 * @langchain/openai client code runs against it. Replies queued with
 * `playFor(name, …)` answer the requests that force the function `name`
 * (structured output) before the ordered script does.
 */
export class FakeOpenAIServer {
  private server?: http.Server;
  private script: FakeReply[] = [];
  private readonly byFunction = new Map<string, FakeReply[]>();
  readonly requests: RecordedRequest[] = [];
  url = '';

  /**
   * The app's settings for a model behind this server: provider openai, a test key, models main-model and
   * fast-model (the fast one for judges and grading), no retries; `overrides` adds or replaces settings.
   * Call it after start().
   */
  appEnv(overrides: Record<string, string> = {}): Record<string, string> {
    if (!this.url) throw new Error('FakeOpenAIServer.appEnv() before start(): it has no URL yet');
    return {
      LLM_PROVIDER: 'openai',
      LLM_BASE_URL: this.url,
      LLM_API_KEY: 'test-key',
      LLM_MODEL: 'main-model',
      LLM_FAST_MODEL: 'fast-model',
      LLM_MAX_RETRIES: '0',
      ...overrides,
    };
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => this.handle(req, res, body));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}/v1`;
    return this;
  }

  /** Replies for the next requests, in order; when the script runs out, the fake answers "(no script)" (see nextScripted). */
  play(...replies: FakeReply[]): void {
    this.script.push(...replies);
  }

  /** Replies for the next requests that force the function `name` (`tool_choice`), in order; then the ordered script answers them. */
  playFor(name: string, ...replies: FakeReply[]): void {
    this.byFunction.set(name, [...(this.byFunction.get(name) ?? []), ...replies]);
  }

  reset(): void {
    this.script = [];
    this.byFunction.clear();
    this.requests.length = 0;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /**
   * The next reply of the ordered script. A scripted call of one function is never the answer to a request forcing
   * another (a real model calls the function it is made to call): that request gets "(no script)" and the call
   * stays for the request it was written for.
   */
  private nextScripted(forcedFunction: string | null): FakeReply {
    const next = this.script[0];
    // A request forcing a function takes from the ordered script only a call of that function (or a failure to play).
    if (forcedFunction && next && !('status' in next) && !('hang' in next) && !('toolCalls' in next && next.toolCalls.some((call) => call.name === forcedFunction))) {
      return { content: '(no script)' };
    }
    return this.script.shift() ?? { content: '(no script)' };
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, raw: string): void {
    if (!req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    const request = JSON.parse(raw) as RecordedRequest & { stream?: boolean; tool_choice?: { function?: { name?: string } } | string };
    const forcedFunction = typeof request.tool_choice === 'object' ? (request.tool_choice.function?.name ?? null) : null;
    this.requests.push({
      stream: !!request.stream,
      model: request.model,
      messages: request.messages,
      tools: request.tools ?? [],
      forcedFunction,
      body: JSON.parse(raw) as Record<string, unknown>,
    });
    const reply = (forcedFunction ? this.byFunction.get(forcedFunction)?.shift() : undefined) ?? this.nextScripted(forcedFunction);
    if ('hang' in reply) return; // never answers
    if ('status' in reply) {
      res.writeHead(reply.status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: reply.error, type: 'server_error' } }));
      return;
    }
    const id = `chatcmpl-${this.requests.length}`;
    const toolCalls =
      'toolCalls' in reply
        ? reply.toolCalls.map((call, index) => ({
            index,
            id: `call_${this.requests.length}_${index}`,
            type: 'function',
            function: { name: call.name, arguments: typeof call.args === 'string' ? call.args : JSON.stringify(call.args) },
          }))
        : undefined;
    const content = 'content' in reply ? reply.content : null;
    const reported = 'usage' in reply && reply.usage ? { ...reply.usage, total_tokens: reply.usage.prompt_tokens + reply.usage.completion_tokens } : undefined;
    if (!request.stream) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created: 0,
          model: request.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content, tool_calls: toolCalls?.map(({ index: _i, ...call }) => call) },
              finish_reason: toolCalls ? 'tool_calls' : 'stop',
            },
          ],
          ...(reported ? { usage: reported } : {}),
        }),
      );
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream' });
    const send = (delta: object, finish: string | null = null) =>
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: request.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    send({ role: 'assistant', content: '' });
    if (toolCalls) {
      for (const call of toolCalls) send({ tool_calls: [call] });
      send({}, 'tool_calls');
    } else {
      const pieces = (content ?? '').match(/\S+\s*/g) ?? [];
      const hangAfter = 'hangAfter' in reply ? reply.hangAfter : undefined;
      for (const piece of pieces.slice(0, hangAfter ?? pieces.length)) send({ content: piece });
      if (hangAfter !== undefined) return; // never finishes; the client's abort closes it
      send({}, 'stop');
    }
    const streamOptions = (request as { stream_options?: { include_usage?: boolean } }).stream_options;
    if (reported && streamOptions?.include_usage) {
      res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created: 0, model: request.model, choices: [], usage: reported })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  }
}

/** The fast model's structured verdict, as the fake answers the judge's function call. */
export const gradeVerdict = (overrides: Record<string, unknown> = {}): FakeReply => ({
  toolCalls: [
    {
      name: 'grade_evidence',
      args: {
        grade_route: 'answer',
        evidence_status: 'sufficient',
        evidence_relevance: 'strong',
        evidence_answerability: 'sufficient',
        evidence_ambiguity: null,
        grade_confidence: 0.9,
        grade_reason: 'The passages answer it.',
        options: [],
        ...overrides,
      },
    },
  ],
});
