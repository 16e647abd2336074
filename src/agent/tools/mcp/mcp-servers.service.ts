import { EventEmitter } from 'node:events';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { AppConfig, McpServerConfig } from '../../../config/app-config.js';
import { APP_CONFIG } from '../../../config/config.module.js';
import { clipText, isConnectionLost, isSessionGone, listServerTools, McpToolError, type McpToolInfo, resultText } from './mcp-wire.js';

export { McpToolError, type McpToolInfo } from './mcp-wire.js';

export type McpServerStatus = 'starting' | 'up' | 'down' | 'restarting';

export interface McpServerView {
  name: string;
  transport: 'stdio' | 'http';
  status: McpServerStatus;
  attempts: number;
  restarts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  tools: Array<{ name: string; description: string }>;
}

interface ServerState {
  config: McpServerConfig;
  status: McpServerStatus;
  /** Start attempts since the server was last up. */
  attempts: number;
  /** Start attempts since the server last stayed up for STABLE_AFTER_MS: the backoff's exponent, so a server that dies as soon as it is up is restarted ever more slowly. */
  strikes: number;
  /** Times the server stopped (died, or lost its connection) and was started again. */
  restarts: number;
  nextAttemptAt: number | null;
  lastError: string | null;
  tools: McpToolInfo[];
  client?: Client;
  pid?: number | null;
  retryTimer?: NodeJS.Timeout;
  stableTimer?: NodeJS.Timeout;
  /** The start under way, which callers that found the connection gone wait for. */
  starting?: Promise<void>;
  /** The client a start is connecting (closed by a shutdown that comes meanwhile). */
  connecting?: Client;
  /** A relisting of the tools is under way (one at a time), and whether another change was announced meanwhile. */
  relisting: boolean;
  listChanged: boolean;
}

const START_TIMEOUT_MS = 15000;
const RESTART_BASE_DELAY_MS = 200;
const RESTART_MAX_DELAY_MS = 30000;
/** How long a server must stay up before its backoff starts again from the beginning. */
const STABLE_AFTER_MS = 30000;
const STDERR_LINE_MAX = 2000;

/**
 * The MCP servers of MCP_SERVERS: started at start-up (a server that does not
 * start is listed as down and tried again later), restarted with exponential
 * backoff when it dies, closed on shutdown. A call always goes to the
 * server's current client, so tools built once keep working after a restart;
 * `toolsVersion` tells the agent when a server's tool list changed.
 */
@Injectable()
export class McpServers implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('McpServers');
  private readonly servers = new Map<string, ServerState>();
  private closing = false;
  private toolListVersion = 0;
  /** `started:<server>` after each start that ended, up or not (calls waiting for a new session listen). */
  private readonly starts = new EventEmitter().setMaxListeners(0);

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    for (const server of config.mcp.servers) {
      this.servers.set(server.name, {
        config: server,
        status: 'starting',
        attempts: 0,
        strikes: 0,
        restarts: 0,
        nextAttemptAt: null,
        lastError: null,
        tools: [],
        relisting: false,
        listChanged: false,
      });
    }
  }

  get maxResultChars(): number {
    return this.config.mcp.maxResultChars;
  }

  async onModuleInit(): Promise<void> {
    await Promise.all([...this.servers.values()].map((state) => this.start(state)));
  }

  async onApplicationShutdown(): Promise<void> {
    this.closing = true;
    await Promise.all(
      [...this.servers.values()].map(async (state) => {
        clearTimeout(state.retryTimer);
        clearTimeout(state.stableTimer);
        const client = state.client;
        state.client = undefined;
        state.status = 'down';
        // A start under way is stopped too: its client (a child process, a request timer) would hold the process.
        await Promise.all([client?.close(), state.connecting?.close()].map((closing) => closing?.catch(() => undefined)));
        await state.starting;
      }),
    );
  }

  list(): McpServerView[] {
    return [...this.servers.values()].map((state) => ({
      name: state.config.name,
      transport: state.config.transport,
      status: state.status,
      attempts: state.attempts,
      restarts: state.restarts,
      next_attempt_at: state.nextAttemptAt === null ? null : new Date(state.nextAttemptAt).toISOString(),
      last_error: state.lastError,
      tools: state.tools.map(({ name, description }) => ({ name, description })),
    }));
  }

  /** Moves whenever a server's tool list changes (a server that came up late, or restarted with other tools). */
  get toolsVersion(): number {
    return this.toolListVersion;
  }

  /** The tools of every server that was up, as listed (and allowed). */
  toolsByServer(): Array<{ server: string; tools: McpToolInfo[] }> {
    return [...this.servers.values()].map((state) => ({ server: state.config.name, tools: state.tools }));
  }

  /** The pid of a stdio server's current process (for tests and diagnostics). */
  pidOf(server: string): number | null {
    return this.servers.get(server)?.pid ?? null;
  }

  /** Calls a tool on the server's current client; every failure is a ToolReportedError with our code. */
  async call(server: string, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<{ text: string; isError: boolean }> {
    const state = this.servers.get(server);
    const timeout = state?.config.timeout_ms ?? 0;
    const deadline = performance.now() + timeout;
    for (let attempt = 1; ; attempt++) {
      const client = state?.client;
      if (!state || !client || state.status !== 'up') {
        throw new McpToolError('tool_failed', `the MCP server ${server} is ${state?.status ?? 'unknown'}`);
      }
      const left = Math.max(1, Math.round(deadline - performance.now()));
      try {
        const result = await this.tracked(state, client, () => client.callTool({ name: tool, arguments: args }, undefined, { timeout: left, signal }));
        return { text: resultText(result as { content?: unknown; structuredContent?: unknown }), isError: result.isError === true };
      } catch (error) {
        if (signal?.aborted) throw error;
        if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
          throw new McpToolError('tool_timeout', `the MCP tool ${tool} gave no answer within ${timeout} ms`);
        }
        if (isSessionGone(error)) {
          // The server restarted and forgot our session: the call never reached a tool, so it is sent once more over a new
          // session, if one comes up within the call's time (calls that met the same loss share one start).
          this.sessionGone(state, client);
          if (attempt === 1) {
            await this.waitForStart(state, tool, timeout, deadline, signal);
            continue;
          }
        } else if (isConnectionLost(error)) {
          this.restartAfter(state, client, `the connection failed: ${clipText((error as Error).message, 200)}`);
        }
        const reason = error instanceof McpError && error.code === ErrorCode.ConnectionClosed ? 'the MCP server closed the connection' : (error as Error).message;
        throw new McpToolError('tool_failed', `the MCP tool ${tool} failed: ${clipText(reason, 300)}`);
      }
    }
  }

  /** Runs a request on `client`, counted: a client dropped while requests are on it is closed once they settled. */
  private async tracked<T>(state: ServerState, client: Client, request: () => Promise<T>): Promise<T> {
    const counts = this.inFlight;
    counts.set(client, (counts.get(client) ?? 0) + 1);
    try {
      return await request();
    } finally {
      const left = (counts.get(client) ?? 1) - 1;
      if (left > 0) counts.set(client, left);
      else {
        counts.delete(client);
        if (state.client !== client && state.connecting !== client) void client.close().catch(() => undefined);
      }
    }
  }

  private readonly inFlight = new Map<Client, number>();

  /** Closes a client we stopped using, or leaves that to the last request still on it (which gets its own answer). */
  private retire(client: Client): void {
    if (!this.inFlight.has(client)) void client.close().catch(() => undefined);
  }

  /**
   * A remote server that no longer knows our session: a new one now, the
   * first time since the server was last stable; after the backoff when
   * sessions keep being lost (a server that forgets every session must not
   * cost a new session per call).
   */
  private sessionGone(state: ServerState, client: Client): void {
    if (state.client !== client || this.closing) return;
    this.dropClient(state, 'the server no longer knows our session');
    this.retire(client);
    if (state.strikes <= 1) {
      clearTimeout(state.retryTimer);
      state.status = 'restarting';
      void this.start(state);
    } else this.scheduleRestart(state);
  }

  /** A client whose connection failed (no `onclose` tells us for a remote server): started again after the backoff. */
  private restartAfter(state: ServerState, client: Client, reason: string): void {
    if (state.client !== client || this.closing) return;
    this.dropClient(state, reason);
    this.retire(client);
    this.scheduleRestart(state);
  }

  /** Waits for the next start to end (now, or after the backoff), within the call's deadline and signal: past the deadline the call is a tool_timeout. */
  private async waitForStart(state: ServerState, tool: string, timeout: number, deadline: number, signal?: AbortSignal): Promise<void> {
    if (state.status === 'up' || this.closing) return;
    let onStarted: (() => void) | undefined;
    const started = new Promise<'started'>((resolve) => {
      onStarted = () => resolve('started');
      this.starts.once(`started:${state.config.name}`, onStarted);
    });
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), Math.max(0, deadline - performance.now()))));
    const aborted = new Promise<'aborted'>((resolve) => {
      onAbort = () => resolve('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const outcome = await Promise.race([started, expired, aborted]);
      if (outcome === 'aborted') throw signal!.reason ?? new Error('aborted');
      if (outcome === 'expired') throw new McpToolError('tool_timeout', `the MCP tool ${tool} gave no answer within ${timeout} ms (its server was reconnecting)`);
    } finally {
      clearTimeout(timer);
      if (onAbort) signal?.removeEventListener('abort', onAbort);
      this.starts.off(`started:${state.config.name}`, onStarted!);
    }
  }

  private dropClient(state: ServerState, reason: string): void {
    clearTimeout(state.stableTimer);
    state.client = undefined;
    state.pid = null;
    state.restarts += 1;
    state.lastError = reason;
  }

  private start(state: ServerState): Promise<void> {
    const starting = this.connect(state).finally(() => {
      if (state.starting === starting) state.starting = undefined;
      this.starts.emit(`started:${state.config.name}`);
    });
    state.starting = starting;
    return starting;
  }

  private async connect(state: ServerState): Promise<void> {
    if (this.closing) return;
    state.nextAttemptAt = null;
    state.attempts += 1;
    state.strikes += 1;
    const { config } = state;
    const client = new Client({ name: 'rag-agent', version: '1.0.0' });
    const transport =
      config.transport === 'stdio'
        ? new StdioClientTransport({ command: config.command!, args: config.args ?? [], env: config.env, stderr: 'pipe' })
        : new StreamableHTTPClientTransport(new URL(config.url!), { requestInit: { headers: config.headers ?? {} } });
    if (transport instanceof StdioClientTransport) this.logStderr(config.name, transport);
    // Registered before the first listing: a change announced while it runs is listed again once the client is in place.
    state.listChanged = false;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.relistTools(state, client));
    state.connecting = client;
    try {
      await client.connect(transport, { timeout: START_TIMEOUT_MS });
      const tools = await listServerTools(config, client, this.logger);
      if (this.closing) {
        await client.close().catch(() => undefined);
        return;
      }
      state.connecting = undefined;
      state.client = client;
      state.pid = transport instanceof StdioClientTransport ? transport.pid : null;
      this.setTools(state, tools);
      state.status = 'up';
      state.attempts = 0;
      state.lastError = null;
      clearTimeout(state.stableTimer);
      state.stableTimer = setTimeout(() => (state.strikes = 0), STABLE_AFTER_MS);
      state.stableTimer.unref();
      this.logger.log(`MCP server ${config.name} is up with ${tools.length} tool(s)`);
      client.onclose = () => {
        if (state.client !== client || this.closing) return;
        this.dropClient(state, 'the server closed the connection');
        this.scheduleRestart(state);
      };
      if (state.listChanged) void this.relistTools(state, client);
    } catch (error) {
      state.connecting = undefined;
      await client.close().catch(() => undefined);
      state.lastError = clipText((error as Error).message ?? String(error), 500);
      this.logger.warn(`MCP server ${config.name} did not start (attempt ${state.attempts}): ${state.lastError}`);
      // Its tools are not offered while it is down: a call could only fail.
      this.setTools(state, []);
      state.status = 'down';
      this.scheduleRestart(state, 'down');
    }
  }

  private setTools(state: ServerState, tools: McpToolInfo[]): void {
    if (JSON.stringify(tools) !== JSON.stringify(state.tools)) this.toolListVersion += 1;
    state.tools = tools;
  }

  /**
   * notifications/tools/list_changed: the server's tools are listed again,
   * offered from the next model call on. One listing at a time per server; the
   * changes announced while it runs make one more, so a flood of notices costs
   * a listing or two, and the last listing applied is the newest.
   */
  private async relistTools(state: ServerState, client: Client): Promise<void> {
    state.listChanged = true;
    if (state.client !== client || state.relisting) return;
    state.relisting = true;
    try {
      while (state.listChanged && state.client === client) {
        state.listChanged = false;
        const tools = await this.tracked(state, client, () => listServerTools(state.config, client, this.logger));
        if (state.client !== client) return;
        this.setTools(state, tools);
        this.logger.log(`MCP server ${state.config.name} changed its tools: ${tools.length} tool(s)`);
      }
    } catch (error) {
      this.logger.warn(`MCP server ${state.config.name}: listing its changed tools failed: ${clipText((error as Error).message, 300)}`);
    } finally {
      state.relisting = false;
      // A change announced to the client that replaced this one while this listing ran.
      if (state.listChanged && state.client && state.client !== client) void this.relistTools(state, state.client);
    }
  }

  private scheduleRestart(state: ServerState, status: McpServerStatus = 'restarting'): void {
    if (this.closing) return;
    clearTimeout(state.retryTimer);
    state.status = status;
    const delay = Math.min(RESTART_MAX_DELAY_MS, RESTART_BASE_DELAY_MS * 2 ** Math.min(state.strikes, 20));
    if (status === 'restarting') this.logger.warn(`MCP server ${state.config.name} stopped (${state.lastError}); restart ${state.restarts} in ${delay} ms`);
    state.nextAttemptAt = Date.now() + delay;
    state.retryTimer = setTimeout(() => {
      state.status = 'restarting';
      void this.start(state);
    }, delay);
    state.retryTimer.unref();
  }

  private logStderr(server: string, transport: StdioClientTransport): void {
    let pending = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = clipText(lines.pop() ?? '', STDERR_LINE_MAX);
      for (const line of lines) if (line.trim()) this.logger.debug(`MCP server ${server} stderr: ${clipText(line, STDERR_LINE_MAX)}`);
    });
  }
}
