import type { components, paths } from './schema.js';
import { parseSse } from './sse-parser.js';

/** One event of a run's stream: `{id, event, data}`, typed by `event`. */
export type StreamEvent = paths['/api/chat/stream']['post']['responses'][200]['content']['text/event-stream'];
export type StreamEventName = StreamEvent['event'];
/** The `data` of the event named `Name`, e.g. `EventData<'token'>` is `TokenEvent`. */
export type EventData<Name extends StreamEventName> = Extract<StreamEvent, { event: Name }>['data'];

export type ChatRequest = components['schemas']['ChatRequest'];
export type RunInfo = components['schemas']['RunInfo'];
export type ApiErrorBody = components['schemas']['ApiErrorBody'];

/** A bearer token, or a function that gives the current one (called for every request). */
export type TokenSource = string | (() => string | Promise<string>);

export interface ChatStreamOptions {
  /** Where the API is, e.g. `http://localhost:3000` (no trailing `/api`). */
  baseUrl: string;
  token: TokenSource;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
}

/** A refused request: the HTTP status and the API's error body (`code`, `message`, `run_id` of a 409…). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody | undefined,
  ) {
    super(body?.message ?? `HTTP ${status}`);
    this.name = 'ApiError';
  }
}

const TERMINAL_EVENTS: ReadonlySet<StreamEventName> = new Set(['done', 'error']);

/**
 * The events of one run, as they arrive: iterate it once with `for await`.
 * It remembers the run id (from `metadata`) and the id of the last event,
 * so that after a dropped connection `resume()` follows the same run from
 * where it stopped.
 */
export class ChatStream implements AsyncIterable<StreamEvent> {
  private started = false;
  private finished = false;
  /** The run's id: known once its `metadata` event came (or given, for a rejoin). */
  runId: string | undefined;
  /** The id of the last event received; sent as `Last-Event-ID` by `resume()`. */
  lastEventId: number | undefined;

  constructor(
    private readonly client: ChatStreamClient,
    private readonly open: (signal: AbortSignal) => Promise<Response>,
    options: { runId?: string; lastEventId?: number; signal?: AbortSignal } = {},
  ) {
    this.runId = options.runId;
    this.lastEventId = options.lastEventId;
    this.signal = options.signal;
  }

  private readonly signal: AbortSignal | undefined;

  /** True once `done` or `error` came: the run ended and there is nothing to resume. */
  get ended(): boolean {
    return this.finished;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<StreamEvent> {
    if (this.started) throw new Error('A ChatStream is read once; use resume() to read the rest of the run');
    this.started = true;
    const abort = new AbortController();
    const onAbort = () => abort.abort(this.signal?.reason);
    if (this.signal?.aborted) onAbort();
    this.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.open(abort.signal);
      if (!response.ok) throw new ApiError(response.status, await errorBody(response));
      if (!response.body) throw new Error('The stream response has no body');
      for await (const raw of parseSse(response.body)) {
        const event = { id: Number(raw.id), event: raw.event, data: JSON.parse(raw.data) } as StreamEvent;
        this.lastEventId = event.id;
        if (event.event === 'metadata') this.runId = event.data.run_id;
        if (TERMINAL_EVENTS.has(event.event)) this.finished = true;
        yield event;
        if (this.finished) return;
      }
    } finally {
      this.signal?.removeEventListener('abort', onAbort);
      abort.abort();
    }
  }

  /** The rest of this run's events, after the last one received (for a connection that dropped). */
  resume(options: { signal?: AbortSignal } = {}): ChatStream {
    if (!this.runId) throw new Error('The run id is not known yet: no metadata event was received');
    return this.client.rejoin(this.runId, { lastEventId: this.lastEventId, signal: options.signal });
  }

  /** Cancels the run (its stream then ends with an `error` event of code `cancelled`). */
  cancel(): Promise<RunInfo> {
    if (!this.runId) throw new Error('The run id is not known yet: no metadata event was received');
    return this.client.cancel(this.runId);
  }
}

/** Streamed chat turns over `fetch` (browsers and Node ≥ 20): start, rejoin, cancel. */
export class ChatStreamClient {
  private readonly fetch: typeof fetch;
  private readonly baseUrl: string;

  constructor(private readonly options: ChatStreamOptions) {
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** Runs a chat turn (`POST /api/chat/stream`); the request is sent when the stream is first read. */
  stream(body: ChatRequest, options: { signal?: AbortSignal } = {}): ChatStream {
    return new ChatStream(
      this,
      async (signal) =>
        this.fetch(`${this.baseUrl}/api/chat/stream`, {
          method: 'POST',
          headers: { ...(await this.headers()), 'Content-Type': 'application/json', Accept: 'text/event-stream' },
          body: JSON.stringify(body),
          signal,
        }),
      options,
    );
  }

  /** Follows a run from any instance (`GET /api/chat/runs/{run_id}/stream`), after `lastEventId` if given. */
  rejoin(runId: string, options: { lastEventId?: number; signal?: AbortSignal } = {}): ChatStream {
    return new ChatStream(
      this,
      async (signal) => {
        const headers: Record<string, string> = { ...(await this.headers()), Accept: 'text/event-stream' };
        if (options.lastEventId !== undefined) headers['Last-Event-ID'] = String(options.lastEventId);
        return this.fetch(`${this.baseUrl}/api/chat/runs/${encodeURIComponent(runId)}/stream`, { headers, signal });
      },
      { runId, lastEventId: options.lastEventId, signal: options.signal },
    );
  }

  /** Cancels a run (`POST /api/chat/runs/{run_id}/cancel`); answers the run as it ended. */
  async cancel(runId: string): Promise<RunInfo> {
    const response = await this.fetch(`${this.baseUrl}/api/chat/runs/${encodeURIComponent(runId)}/cancel`, {
      method: 'POST',
      headers: await this.headers(),
    });
    if (!response.ok) throw new ApiError(response.status, await errorBody(response));
    return (await response.json()) as RunInfo;
  }

  private async headers(): Promise<Record<string, string>> {
    const token = typeof this.options.token === 'function' ? await this.options.token() : this.options.token;
    return { Authorization: `Bearer ${token}` };
  }
}

async function errorBody(response: Response): Promise<ApiErrorBody | undefined> {
  try {
    return (await response.json()) as ApiErrorBody;
  } catch {
    return undefined;
  }
}
