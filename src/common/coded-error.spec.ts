import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ERROR_CODES, ERROR_CODE_STATUS, fallbackErrorCode, RequestError } from './coded-error.js';

/** Nest's HTTP exceptions: thrown bare, they answer without a `code`. The service throws RequestError (or its own CodedError) instead. */
const BARE_EXCEPTION =
  /\bnew\s+(HttpException|BadRequestException|UnauthorizedException|NotFoundException|ForbiddenException|NotAcceptableException|RequestTimeoutException|ConflictException|GoneException|HttpVersionNotSupportedException|PayloadTooLargeException|UnsupportedMediaTypeException|UnprocessableEntityException|InternalServerErrorException|NotImplementedException|ImATeapotException|MethodNotAllowedException|BadGatewayException|ServiceUnavailableException|GatewayTimeoutException|PreconditionFailedException|MisdirectedException|TooManyRequestsException)\s*\(/g;

/** The error module itself (the table, the filter) may name them. */
const ERROR_MODULE = new Set(['coded-error.ts', 'http-exception.filter.ts', 'api-error.responses.ts'].map((name) => path.resolve('src', 'common', name)));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [full] : [];
  });
}

/** `file:line: text` for every bare Nest exception in `text`. */
function bareExceptions(file: string, text: string): string[] {
  return [...text.matchAll(BARE_EXCEPTION)].map((match) => {
    const line = text.slice(0, match.index).split('\n').length;
    return `${path.relative(process.cwd(), file)}:${line}: ${match[0]}`;
  });
}

describe('error codes', () => {
  it('no source file outside the error module throws a bare Nest HTTP exception', () => {
    const found = sourceFiles(path.resolve('src'))
      .filter((file) => !ERROR_MODULE.has(file))
      .flatMap((file) => bareExceptions(file, readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  it('the check finds a bare exception, on one line or split over several', () => {
    const fixture = [
      "import { NotFoundException } from '@nestjs/common';",
      'const rerank = new HttpRerank(config);',
      "if (!row) throw new NotFoundException('Session 1 not found');",
      'throw new HttpException(',
      "  'slow down',",
      '  429,',
      ');',
    ].join('\n');
    expect(bareExceptions('src/fixture.ts', fixture)).toEqual(['src/fixture.ts:3: new NotFoundException(', 'src/fixture.ts:4: new HttpException(']);
  });

  it('every code has a status and a meaning; the status map is the table', () => {
    for (const [code, { status, meaning }] of Object.entries(ERROR_CODES)) {
      expect(ERROR_CODE_STATUS[code as keyof typeof ERROR_CODES]).toBe(status);
      expect(meaning.length).toBeGreaterThan(10);
    }
  });

  it('docs/protocol.md lists every code with its status', () => {
    const doc = readFileSync(path.resolve('docs', 'protocol.md'), 'utf8');
    const listed = Object.fromEntries([...doc.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map(([, code, status]) => [code, Number(status)]));
    expect(listed).toEqual(ERROR_CODE_STATUS);
  });

  it('an HTTP error without a code falls back to a code of its status', () => {
    for (const status of [400, 401, 403, 404, 413, 415, 429, 500, 503]) expect(ERROR_CODE_STATUS[fallbackErrorCode(status)]).toBe(status);
    expect(fallbackErrorCode(405)).toBe('invalid_request');
    expect(fallbackErrorCode(501)).toBe('internal_error');
  });

  it("a RequestError answers its code's status, with a list of problems joined as one message", () => {
    const error = new RequestError('invalid_request', ['a must be a string', 'b should not exist']);
    expect(error.httpStatus).toBe(400);
    expect(error.message).toBe('a must be a string; b should not exist');
  });
});
