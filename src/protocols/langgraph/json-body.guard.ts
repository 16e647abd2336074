import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { RequestError } from '../../common/coded-error.js';
import { nonJsonBodyProblem } from '../../common/json-body.js';

/**
 * Refuses a request body of another media type than JSON (text/plain, a
 * form, XML) with a 415: the LangGraph routes read an absent body as `{}`,
 * so a body the JSON parser left unread would otherwise be ignored without
 * a word (a PATCH answering 200 unchanged, a thread created under another
 * id than the one it names). A request without a body (the SDK's cancel,
 * a POST with `Content-Length: 0`, a GET) is left alone.
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
