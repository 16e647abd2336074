import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { RequestError } from './coded-error.js';
import { nonJsonBodyProblem } from './json-body.js';

/**
 * Refuses a request body of another media type than JSON (text/plain, a
 * form, XML) with a 415, for routes that read their body themselves: the
 * JSON parser leaves such a body unread, so the route would otherwise see
 * none and answer as if nothing had been sent (a LangGraph PATCH answering
 * 200 unchanged, a thread created under another id than the one it names,
 * a UI chat turn refused for fields the body does hold). A request without a
 * body (the LangGraph SDK's cancel, a POST with `Content-Length: 0`, a GET)
 * is left alone.
 */
@Injectable()
export class JsonBodyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    const length = req.headers['content-length'];
    const hasBody = req.headers['transfer-encoding'] !== undefined || (length !== undefined && length.trim() !== '0');
    const problem = hasBody ? nonJsonBodyProblem(req) : undefined;
    if (problem) throw new RequestError('unsupported_encoding', problem);
    return true;
  }
}
