import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger as PinoLogger } from 'pino';
import { pinoHttp } from 'pino-http';
import { runWithRequestId } from './request-context.js';

const REQUEST_ID_HEADER = 'x-request-id';
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Query parameters that may carry a credential (a stream ticket, or a token someone put in a URL). */
export const CREDENTIAL_QUERY_PARAMETERS: ReadonlySet<string> = new Set(['ticket', 'access_token', 'token']);

function decodedQueryKey(pair: string): string {
  const key = pair.split('=', 1)[0].replace(/\+/g, ' ');
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/**
 * The URL with the value of every credential query parameter replaced by
 * `[redacted]`; the rest is kept byte for byte. Keys are compared decoded
 * (`tick%65t` is `ticket` to the query parser too).
 */
export function redactCredentials(url: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt < 0) return url;
  const hashAt = url.indexOf('#', queryAt);
  const query = url.slice(queryAt + 1, hashAt < 0 ? undefined : hashAt);
  const redacted = query
    .split('&')
    .map((pair) => (CREDENTIAL_QUERY_PARAMETERS.has(decodedQueryKey(pair)) ? `${pair.split('=', 1)[0]}=[redacted]` : pair))
    .join('&');
  return `${url.slice(0, queryAt + 1)}${redacted}${hashAt < 0 ? '' : url.slice(hashAt)}`;
}

/**
 * Express middleware: gives each request an id (the caller's x-request-id
 * when it is sane, a UUID otherwise), echoes it in the response, logs the
 * request on completion and binds the id for every log line written while
 * the request is handled. Credentials in the query string never reach the
 * log line (`redactCredentials`).
 */
export function httpLogging(root: PinoLogger) {
  const logRequest = pinoHttp({
    logger: root,
    genReqId: (req) => (req as Request & { id: string }).id,
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: redactCredentials(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.header(REQUEST_ID_HEADER);
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    (req as Request & { id: string }).id = requestId;
    res.setHeader(REQUEST_ID_HEADER, requestId);
    runWithRequestId(requestId, () => logRequest(req, res, next));
  };
}
