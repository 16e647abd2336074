import type { Request } from 'express';

/**
 * What is wrong with a request body of another media type than JSON
 * (text/plain, a form, XML): the JSON parser leaves it unread, so the route
 * would see no body at all. Undefined for JSON and for a request without a
 * body (Express's `req.is`, type-is).
 */
export function nonJsonBodyProblem(req: Request): string | undefined {
  if (req.is('application/json') !== false) return undefined;
  const given = (req.headers['content-type'] ?? '').split(';')[0].trim().slice(0, 100);
  return `The request body must be JSON: send it with Content-Type: application/json (${given ? `not ${given}` : 'none was given'})`;
}
