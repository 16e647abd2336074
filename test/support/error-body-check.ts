import supertest from 'supertest';

/**
 * Every error body the service answers must carry a `code` from its table
 * (src/common/coded-error.ts). This file, set up for every e2e test, checks
 * each response a test receives: through supertest (the request fails at
 * once) and through fetch (the SSE helpers, the spawned service; checked at
 * the end of the test). Only the service's answers count: fetch responses
 * without its `x-request-id` header (a fake model server's) are skipped, as
 * are the health reports (a status report, not an error body).
 */

/** Why `body` (an error answer of `path`) lacks its code, or null. */
export function missingCodeProblem(path: string, status: number, body: unknown): string | null {
  if (status < 400 || path.startsWith('/health')) return null;
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return `${status} from ${path}: the error body is not a JSON object`;
  const { code, error } = body as { code?: unknown; error?: unknown };
  // The OpenAI-compatible routes answer {error: {message, type, param, code}}.
  const openAi = error !== null && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
  if (typeof code === 'string' || typeof openAi === 'string') return null;
  // /mcp answers JSON-RPC errors: the service's code in error.data.code, or (the MCP SDK transport's own refusals) only a JSON-RPC code.
  const rpc = error !== null && typeof error === 'object' ? (error as { code?: unknown; data?: { code?: unknown } }) : undefined;
  if ((body as { jsonrpc?: unknown }).jsonrpc === '2.0' && (typeof rpc?.data?.code === 'string' || (path === '/mcp' && Number.isInteger(rpc?.code)))) return null;
  return `${status} from ${path}: the error body has no code: ${JSON.stringify(body).slice(0, 300)}`;
}

function isJson(contentType: string | null | undefined): boolean {
  return /\bjson\b/i.test(contentType ?? '');
}

function pathOf(url: string): string {
  try {
    return new URL(url, 'http://localhost').pathname;
  } catch {
    return url;
  }
}

interface SupertestResponse {
  status: number;
  body: unknown;
  headers: Record<string, string | undefined>;
}

type AssertFn = (resError: unknown, res: SupertestResponse | undefined, fn?: (error: unknown, res: unknown) => void) => void;

const TestPrototype = (supertest as unknown as { Test: { prototype: { assert: AssertFn; url?: string } } }).Test.prototype;
const assertResponse = TestPrototype.assert;
TestPrototype.assert = function (this: { url?: string }, resError, res, fn) {
  const problem = res && isJson(res.headers['content-type']) ? missingCodeProblem(pathOf(this.url ?? ''), res.status, res.body) : null;
  if (problem && fn) return fn.call(this, new Error(problem), res);
  return assertResponse.call(this, resError, res, fn);
};

const pending = new Set<Promise<void>>();
const problems: string[] = [];
const serviceFetch = globalThis.fetch;

globalThis.fetch = async function checkedFetch(input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]): Promise<Response> {
  const response = await serviceFetch(input, init);
  if (response.status >= 400 && response.headers.has('x-request-id') && isJson(response.headers.get('content-type'))) {
    const check = response
      .clone()
      .text()
      .then((text) => {
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        const problem = missingCodeProblem(pathOf(response.url), response.status, body);
        if (problem) problems.push(problem);
      })
      // A body cut off by the test (an aborted request) is not an answer to check.
      .catch(() => undefined);
    pending.add(check);
    void check.finally(() => pending.delete(check));
  }
  return response;
};

/** The problems fetch responses showed so far, forgotten once taken (the check's own test reads them). */
export async function takeMissingCodeProblems(): Promise<string[]> {
  await Promise.all([...pending]);
  return problems.splice(0);
}

afterEach(async () => {
  const found = await takeMissingCodeProblems();
  if (found.length > 0) throw new Error(`Error bodies without a code:\n${found.join('\n')}`);
});
