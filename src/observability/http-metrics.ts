import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Metrics } from './metrics.js';

/** The route label of a request no route answered: static files, refusals before routing (body limits), unknown paths. */
export const UNMATCHED_ROUTE = 'unmatched';

/** The route template that answered (`/api/sessions/:session_id`), never the path itself (it carries ids). */
function routeOf(req: Request): string {
  const route = (req as Request & { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? `${req.baseUrl}${route.path}` : UNMATCHED_ROUTE;
}

/**
 * The status label of a request whose client went away before any answer
 * was sent (nginx's 499): the status the handler had set was never sent.
 */
export const CLIENT_CLOSED_REQUEST = 499;

function isEventStream(res: Response): boolean {
  const type = res.getHeader('content-type');
  return res.headersSent && typeof type === 'string' && type.startsWith('text/event-stream');
}

/**
 * Times every request into `http_server_request_duration_seconds`, and
 * counts the event streams open at each scrape (`http_server_sse_streams_active`,
 * by route): a response is a stream once it sent `text/event-stream` headers.
 */
export function httpMetrics(metrics: Metrics): RequestHandler {
  const open = new Set<{ req: Request; res: Response }>();
  metrics.gauge('http_server_sse_streams_active', 'Server-Sent Events responses open on this instance, by route', ['http_route'], () => {
    const byRoute = new Map<string, number>();
    for (const { req, res } of open) if (isEventStream(res)) byRoute.set(routeOf(req), (byRoute.get(routeOf(req)) ?? 0) + 1);
    return Promise.resolve([...byRoute].map(([route, count]) => [{ http_route: route }, count]));
  });
  return (req: Request, res: Response, next: NextFunction) => {
    const started = performance.now();
    const entry = { req, res };
    open.add(entry);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      open.delete(entry);
      const status = !res.writableFinished && !res.headersSent ? CLIENT_CLOSED_REQUEST : res.statusCode;
      metrics.httpRequest(req.method, routeOf(req), status, (performance.now() - started) / 1000);
    };
    res.once('finish', finish);
    res.once('close', finish);
    next();
  };
}
