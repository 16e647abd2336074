import { LoggerService } from '@nestjs/common';
import pino, { Logger as PinoLogger } from 'pino';
import { LogLevel } from '../config/app-config.js';
import { currentRequestId } from './request-context.js';
import { redactSecrets } from './secret-redaction.js';

/**
 * The process-wide JSON logger; every line carries the current request id
 * when there is one. Whatever a line holds (an error's message, a URL, a
 * header someone logged), API keys and JWTs are removed from it as it is
 * written (`redactSecrets`).
 */
export function createRootLogger(level: LogLevel, destination?: pino.DestinationStream): PinoLogger {
  return pino(
    {
      level,
      base: { service: 'agentic-rag-chat' },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: () => {
        const requestId = currentRequestId();
        return requestId ? { request_id: requestId } : {};
      },
      redact: ['req.headers.authorization', 'req.headers.cookie'],
      hooks: { streamWrite: redactSecrets },
    },
    destination,
  );
}

/** Routes Nest's own logging (and every `new Logger(...)`) into pino. */
export class NestPinoLogger implements LoggerService {
  constructor(private readonly root: PinoLogger) {}

  log(message: unknown, ...rest: unknown[]): void {
    this.write('info', message, rest);
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
    // Nest passes the context (logger name) last, and a stack trace before it for errors.
    const params = [...rest];
    const context = typeof params[params.length - 1] === 'string' ? (params.pop() as string) : undefined;
    const stack = level === 'error' && typeof params[0] === 'string' ? (params.shift() as string) : undefined;
    const fields: Record<string, unknown> = {};
    if (context) fields.context = context;
    if (stack) fields.stack = stack;
    if (message instanceof Error) {
      this.root[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.root[level]({ ...fields, ...(message as object) });
    } else {
      this.root[level](fields, String(message));
    }
  }
}
