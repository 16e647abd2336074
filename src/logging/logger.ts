import { LoggerService } from '@nestjs/common';
import { context, isSpanContextValid, trace } from '@opentelemetry/api';
import pino, { Logger as PinoLogger } from 'pino';
import pinoPretty from 'pino-pretty';
import type { LogFormat, LogLevel, NodeEnv } from '../config/app-config.js';
import { currentRequestId } from './request-context.js';
import { redactSecrets } from './secret-redaction.js';

/**
 * Whether LOG_FORMAT asks for readable lines: `pretty`, or `auto` when
 * stdout is a terminal and NODE_ENV is not production.
 */
export function usesPrettyLogs(format: LogFormat, nodeEnv: NodeEnv, stdoutIsTerminal = process.stdout.isTTY === true): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTerminal && nodeEnv !== 'production');
}

/**
 * Readable lines for a developer's terminal: `10:29:51.896 INFO [Context] message`,
 * with the other fields of the entry after it on the same line. Written
 * synchronously, as pino's own stdout destination is.
 */
export function prettyDestination(output: NodeJS.WritableStream | number = 1): pino.DestinationStream {
  return pinoPretty({
    destination: output,
    sync: true,
    colorize: typeof output === 'number' ? undefined : false,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,service,context',
    singleLine: true,
    messageFormat: (log, messageKey) => `${typeof log.context === 'string' ? `[${log.context}] ` : ''}${String(log[messageKey] ?? '')}`,
  });
}

/**
 * The process-wide logger: JSON lines (pino), or readable ones (see
 * prettyDestination) when a destination says so; every line carries the
 * current request id when there is one, and, when tracing is on, the
 * active span's `trace_id` and `span_id` (a line written during a request
 * or a turn joins its trace). Whatever a line holds (an error's
 * message, a URL, a header someone logged), API keys and JWTs are removed
 * from it as it is written (`redactSecrets`), before any formatting.
 */
export function createRootLogger(level: LogLevel, destination?: pino.DestinationStream): PinoLogger {
  return pino(
    {
      level,
      base: { service: 'agentic-rag-chat' },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: () => ({ ...requestFields(), ...traceFields() }),
      redact: ['req.headers.authorization', 'req.headers.cookie'],
      hooks: { streamWrite: redactSecrets },
    },
    destination,
  );
}

function requestFields(): Record<string, string> {
  const requestId = currentRequestId();
  return requestId ? { request_id: requestId } : {};
}

/** The active span's ids; none when tracing is off (the API's no-op context has no span). */
export function traceFields(): Record<string, string> {
  const spanContext = trace.getSpan(context.active())?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? { trace_id: spanContext.traceId, span_id: spanContext.spanId } : {};
}

/**
 * Nest's start-up chatter, one line per module and per route (over a hundred
 * lines): logged at debug, not info.
 */
const BOOTSTRAP_DETAIL_CONTEXTS = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer']);

/** Routes Nest's own logging (and every `new Logger(...)`) into pino. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly root: PinoLogger) {}

  log(message: unknown, ...rest: unknown[]): void {
    const context = rest[rest.length - 1];
    this.write(typeof context === 'string' && BOOTSTRAP_DETAIL_CONTEXTS.has(context) ? 'debug' : 'info', message, rest);
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.write('error', message, rest);
  }
  warn(message: unknown, ...rest: unknown[]): void {
    this.write('warn', message, rest);
  }
  debug(message: unknown, ...rest: unknown[]): void {
    this.write('debug', message, rest);
  }
  verbose(message: unknown, ...rest: unknown[]): void {
    this.write('trace', message, rest);
  }
  fatal(message: unknown, ...rest: unknown[]): void {
    this.write('fatal', message, rest);
  }

  private write(level: pino.Level, message: unknown, rest: unknown[]): void {
    // Nest passes the context (logger name) last. Before it: the text of our calls that give their fields first
    // (`logger.warn({ err, run_id }, 'turn failed')`), or the stack trace of Nest's own error calls (a text first).
    const params = [...rest];
    const context = typeof params[params.length - 1] === 'string' ? (params.pop() as string) : undefined;
    const withFields = typeof message === 'object' && message !== null && !(message instanceof Error);
    const text = withFields && typeof params[0] === 'string' ? (params.shift() as string) : undefined;
    const stack = !withFields && level === 'error' && typeof params[0] === 'string' ? (params.shift() as string) : undefined;
    const fields: Record<string, unknown> = {};
    if (context) fields.context = context;
    if (stack) fields.stack = stack;
    if (message instanceof Error) {
      this.root[level]({ ...fields, err: message }, message.message);
    } else if (withFields) {
      if (text === undefined) this.root[level]({ ...fields, ...(message as object) });
      else this.root[level]({ ...fields, ...(message as object) }, text);
    } else {
      this.root[level](fields, String(message));
    }
  }
}
