import { CanActivate, ExecutionContext, Inject, Injectable, Logger, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { CodedError } from '../common/coded-error.js';
import { DrainState } from '../common/drain-state.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ChatService } from './chat.service.js';
import { RunCancellation } from './run-cancellation.service.js';

/** What a client refused during the drain waits before trying again (another instance can take the turn at once). */
export const SHUTDOWN_RETRY_AFTER_SECONDS = 1;
/** What the end of a shutdown keeps for writing the open streams their terminal event and closing the pools. */
const STREAM_STOP_MARGIN_MS = 1000;

/** The instance is shutting down: a new turn is refused, a turn that outlasts the drain is ended. */
export class ShuttingDownError extends CodedError {
  readonly code = 'shutting_down';

  /** A new turn, refused while the instance drains. */
  static refusal(): ShuttingDownError {
    return new ShuttingDownError('This instance is shutting down and takes no new turns; send the turn again (another instance will take it).');
  }

  /** A turn in flight that did not finish within the drain (the abort reason of its run). */
  static interruption(): ShuttingDownError {
    return new ShuttingDownError('This instance shut down before the turn could finish.');
  }
}

/** The terminal event a stream gets when this instance stops following a run that goes on elsewhere. */
export const STOPPED_FOLLOWING_EVENT = {
  code: 'shutting_down',
  message: 'This instance is shutting down and stops following the run; rejoin it on another instance with Last-Event-ID, or read the session for its outcome.',
} as const;

/** STOPPED_FOLLOWING_EVENT as a Server-Sent Event; without an id, so the client's Last-Event-ID stays the run's last event. */
export function stoppedFollowingSse(): string {
  return `event: error\ndata: ${JSON.stringify(STOPPED_FOLLOWING_EVENT)}\n\n`;
}

/**
 * Graceful shutdown of chat turns (SIGTERM, or the app closing): from the
 * first moment the instance refuses new turns (503 `shutting_down`, with
 * Retry-After) and lets the turns in flight run for up to SHUTDOWN_DRAIN_MS.
 * A turn still running then is aborted: its human message is kept, its run
 * recorded `interrupted` (with the shutdown as its error text), and its
 * followers get an `error` event `shutting_down` with `message_saved`.
 * Streams of this instance that follow a run of another instance are then
 * ended with STOPPED_FOLLOWING_EVENT, so no stream ends without a terminal event.
 */
@Injectable()
export class TurnDrain {
  private readonly logger = new Logger(TurnDrain.name);
  /** Turn requests admitted and not yet answered (their response not closed). */
  private admitted = 0;
  private whenIdle: Array<() => void> = [];
  private readonly streams = new Set<() => void>();
  private streamsStopped = false;
  private drained?: Promise<void>;
  /** Aborted when the drain ends: a turn of no session (stateless) stops with it. */
  private readonly ended = new AbortController();

  constructor(
    private readonly state: DrainState,
    private readonly chat: ChatService,
    private readonly cancellation: RunCancellation,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Aborted, with a ShuttingDownError, once the drain time is over. */
  get signal(): AbortSignal {
    return this.ended.signal;
  }

  /**
   * Admits a turn request, counted until its response closes; throws
   * ShuttingDownError (503, Retry-After set) while the instance drains.
   */
  admit(res: Response): void {
    if (this.state.draining) {
      res.setHeader('Retry-After', String(SHUTDOWN_RETRY_AFTER_SECONDS));
      throw ShuttingDownError.refusal();
    }
    this.admitted += 1;
    res.once('close', () => {
      this.admitted -= 1;
      if (this.admitted === 0) for (const resolve of this.whenIdle.splice(0)) resolve();
    });
  }

  /**
   * Registers an open event stream; `stop` writes it a terminal event and
   * ends it, and is called when the drain ends with the stream still open.
   * Returns the function that unregisters it (call it when the stream ends).
   */
  openStream(stop: () => void): () => void {
    if (this.streamsStopped) {
      setImmediate(stop);
      return () => undefined;
    }
    this.streams.add(stop);
    return () => this.streams.delete(stop);
  }

  /** Drains the instance's turns (idempotent: every caller waits for the same drain). */
  shutdown(): Promise<void> {
    this.drained ??= this.drain();
    return this.drained;
  }

  private async drain(): Promise<void> {
    this.state.begin();
    const drainMs = this.config.shutdownDrainMs;
    this.logger.log({ drain_ms: drainMs, requests: this.admitted }, 'draining: no new turns; turns in flight may finish');
    let timer: NodeJS.Timeout | undefined;
    const drainOver = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), drainMs)));
    const outcome = await Promise.race([this.idle().then(() => 'idle' as const), drainOver]);
    clearTimeout(timer);
    if (outcome === 'timeout') {
      const interrupted = this.cancellation.abortAll(ShuttingDownError.interruption());
      this.ended.abort(ShuttingDownError.interruption());
      this.logger.warn({ runs: interrupted }, `drain time over: ending ${interrupted} turn(s) still running, their messages kept`);
      // Settling them is bounded too (a client that never reads its response, a database that stalls): the streams
      // still open get their terminal event before the process must exit at SHUTDOWN_TIMEOUT_MS.
      const settleMs = Math.max(0, this.config.shutdownTimeoutMs - drainMs - STREAM_STOP_MARGIN_MS);
      const settled = await Promise.race([this.idle().then(() => true), new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), settleMs)))]);
      clearTimeout(timer);
      if (!settled) this.logger.warn({ requests: this.admitted }, 'turns not settled in time: their streams are ended now');
    }
    this.streamsStopped = true;
    for (const stop of [...this.streams]) stop();
    this.streams.clear();
    this.logger.log('drained: every turn ended');
  }

  /** Resolves when no admitted turn request is open and every turn this instance started has ended. */
  private async idle(): Promise<void> {
    if (this.admitted > 0) await new Promise<void>((resolve) => this.whenIdle.push(resolve));
    await this.chat.drain();
  }
}

/** The guard of the routes that start a turn: 503 `shutting_down` while the instance drains. */
@Injectable()
export class TurnAdmissionGuard implements CanActivate {
  constructor(private readonly drain: TurnDrain) {}

  canActivate(context: ExecutionContext): boolean {
    this.drain.admit(context.switchToHttp().getResponse<Response>());
    return true;
  }
}

/** Marks a route that starts a chat turn: refused while the instance drains for shutdown. */
export function StartsTurn(): MethodDecorator {
  return UseGuards(TurnAdmissionGuard);
}
