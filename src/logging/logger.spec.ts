import { Writable } from 'node:stream';
import { Logger } from '@nestjs/common';
import { createRootLogger, NestPinoLogger, prettyDestination, usesPrettyLogs } from './logger.js';

function sink() {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      written.push(String(chunk));
      done();
    },
  });
  return { stream, written };
}

describe('Log format', () => {
  it('auto is readable lines on a terminal outside production, JSON otherwise; json and pretty are what they say', () => {
    expect(usesPrettyLogs('auto', 'development', true)).toBe(true);
    expect(usesPrettyLogs('auto', 'test', true)).toBe(true);
    expect(usesPrettyLogs('auto', 'production', true)).toBe(false);
    expect(usesPrettyLogs('auto', 'development', false)).toBe(false);
    expect(usesPrettyLogs('json', 'development', true)).toBe(false);
    expect(usesPrettyLogs('pretty', 'production', false)).toBe(true);
  });

  it('pretty: time, level, [context], message, then the other fields on the same line; secrets removed before formatting', () => {
    const { stream, written } = sink();
    const logger = new NestPinoLogger(createRootLogger('info', prettyDestination(stream)));
    logger.log({ msg: 'listening', port: 3000 }, 'Bootstrap');
    logger.warn('token rk-abcdefghijklmnopqrstuvwxyz0123456789 refused', 'Auth');
    expect(written.join('').split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: \[Bootstrap\] listening \{"port":3000\}$/),
      expect.stringMatching(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: \[Auth\] token \[redacted\] refused$/),
    ]);
  });

  it("Nest's module and route-mapping lines are debug, not info", () => {
    const { stream, written } = sink();
    const logger = new NestPinoLogger(createRootLogger('info', stream));
    logger.log('Mapped {/api/chat, POST} route', 'RouterExplorer');
    logger.log('ChatModule dependencies initialized', 'InstanceLoader');
    logger.log('Nest application successfully started', 'NestApplication');
    expect(written.map((line) => JSON.parse(line).msg)).toEqual(['Nest application successfully started']);
  });

  it("keeps the message of a `new Logger(name)` call given fields first (warn and error alike), and Nest's own error stack", () => {
    const { stream, written } = sink();
    Logger.overrideLogger(new NestPinoLogger(createRootLogger('info', stream)));
    const logger = new Logger('ChatService');
    logger.warn({ err: new Error('Session s1 not found'), run_id: 'r1' }, 'turn failed: internal');
    logger.error({ err: new Error('socket hang up'), run_id: 'r2' }, 'failure after the turn committed');
    logger.log({ run_id: 'r3' }, 'turn ended');
    new Logger('ExceptionHandler').error('boom', 'Error: boom\n    at somewhere');
    const lines = written.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map(({ level, context, msg, run_id, stack }) => ({ level, context, msg, run_id, stack }))).toEqual([
      { level: 40, context: 'ChatService', msg: 'turn failed: internal', run_id: 'r1', stack: undefined },
      { level: 50, context: 'ChatService', msg: 'failure after the turn committed', run_id: 'r2', stack: undefined },
      { level: 30, context: 'ChatService', msg: 'turn ended', run_id: 'r3', stack: undefined },
      { level: 50, context: 'ExceptionHandler', msg: 'boom', run_id: undefined, stack: 'Error: boom\n    at somewhere' },
    ]);
    expect((lines[0].err as { message: string }).message).toBe('Session s1 not found');
  });
});
