import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Logger as PinoLogger } from 'pino';
import { pinoHttp } from 'pino-http';
import { runWithRequestId } from './request-context.js';
import { containsSecret, loggableUrl } from './secret-redaction.js';

const REQUEST_ID_HEADER = 'x-request-id';
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Express middleware: gives each request an id (the caller's x-request-id
 * when it is sane, a UUID otherwise), echoes it in the response, logs the
 * request on completion and binds the id for every log line written while
 * the request is handled. The line shows the URL as `loggableUrl` does (no
 * query value but harmless ones, no key or token anywhere), and an incoming
 * id that looks like a key or token is replaced: it would be on every line.
 */
export function httpLogging(root: PinoLogger) {
  const logRequest = pinoHttp({
    logger: root,
    genReqId: (req) => (req as Request & { id: string }).id,
    customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: loggableUrl(req.url) }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const incoming = req.header(REQUEST_ID_HEADER);
    const requestId = incoming && SAFE_REQUEST_ID.test(incoming) && !containsSecret(incoming) ? incoming : randomUUID();
    (req as Request & { id: string }).id = requestId;
    res.setHeader(REQUEST_ID_HEADER, requestId);
    runWithRequestId(requestId, () => logRequest(req, res, next));
  };
}
