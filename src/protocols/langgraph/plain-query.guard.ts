import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { RequestError } from '../../common/coded-error.js';

/**
 * Refuses a query parameter written with brackets (`limit[a]=1`,
 * `limit[]=1`), as the REST routes' validation does (`property limit[a]
 * should not exist`): the LangGraph routes read their parameters by plain
 * name, so such a parameter would otherwise be ignored without a word.
 * Other parameters they do not know are left alone: the LangGraph SDK may
 * send some.
 */
@Injectable()
export class PlainQueryGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const query = context.switchToHttp().getRequest<Request>().query as Record<string, unknown>;
    const bracketed = Object.keys(query).find((key) => key.includes('[') || key.includes(']'));
    if (bracketed !== undefined) throw new RequestError('invalid_request', `property ${bracketed.slice(0, 100)} should not exist`);
    return true;
  }
}
