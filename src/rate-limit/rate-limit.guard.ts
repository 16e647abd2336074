import {
  applyDecorators,
  CallHandler,
  CanActivate,
  ExecutionContext,
  HttpException,
  HttpStatus,
  Injectable,
  NestInterceptor,
  SetMetadata,
  UseGuards,
  UseInterceptors,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { catchError, from, Observable, switchMap, throwError } from 'rxjs';
import { CodedError, RequestError } from '../common/coded-error.js';
import type { RequestWithUser } from '../auth/auth-user.js';
import { RateLimitBucket, RateLimitService } from './rate-limit.service.js';

const RATE_LIMIT_BUCKET = 'rateLimit:bucket';
const BUCKET_NAMES: Record<RateLimitBucket, string> = { chat: 'chat turns', search: 'searches', upload: 'uploads', run_control: 'run cancels and stream tickets' };

@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: RateLimitService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const bucket = this.reflector.get<RateLimitBucket | undefined>(RATE_LIMIT_BUCKET, context.getHandler());
    const request = context.switchToHttp().getRequest<Request & RequestWithUser>();
    if (!bucket || !request.user) return true;
    const verdict = await this.limits.consume(bucket, request.user.userId, request.user.apiKeyId);
    if (verdict.allowed) return true;
    context.switchToHttp().getResponse<Response>().setHeader('Retry-After', String(verdict.retryAfterSeconds));
    throw new RequestError(
      'rate_limited',
      `Too many ${BUCKET_NAMES[bucket]} for this ${verdict.spentBy === 'api_key' ? 'API key' : 'user'}; retry in ${verdict.retryAfterSeconds} s`,
    );
  }
}

function statusOf(error: unknown): number | undefined {
  if (error instanceof HttpException) return error.getStatus();
  if (error instanceof CodedError) return error.httpStatus;
  return undefined;
}

/**
 * Gives the point back when the request is refused as invalid (400): by the
 * validation pipe, which runs after the guard counted, or by the handler's
 * own parsing. Only accepted requests spend the budget; the refund is done
 * before the 400 is answered, so the client's next request sees it. Uploads
 * are the exception: a refused one has cost its whole body already.
 */
@Injectable()
export class RateLimitRefundInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: RateLimitService,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const bucket = this.reflector.get<RateLimitBucket | undefined>(RATE_LIMIT_BUCKET, context.getHandler());
    const user = context.switchToHttp().getRequest<Request & RequestWithUser>().user;
    // An upload refused with 400 has had its whole body read and held already: that is what its budget limits.
    if (!bucket || bucket === 'upload' || !user) return next.handle();
    return next.handle().pipe(
      catchError((error: unknown) => {
        if (statusOf(error) !== HttpStatus.BAD_REQUEST) return throwError(() => error);
        return from(this.limits.refund(bucket, user.userId, user.apiKeyId)).pipe(switchMap(() => throwError(() => error)));
      }),
    );
  }
}

/**
 * Counts the route against the caller's per-minute budget for `bucket` (429
 * with Retry-After beyond it); a request refused as invalid (400) does not count.
 */
export function RateLimit(bucket: RateLimitBucket): MethodDecorator {
  return applyDecorators(SetMetadata(RATE_LIMIT_BUCKET, bucket), UseGuards(RateLimitGuard), UseInterceptors(RateLimitRefundInterceptor));
}
