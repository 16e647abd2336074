import { applyDecorators, CanActivate, ExecutionContext, HttpException, HttpStatus, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
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
    throw new HttpException(
      `Too many ${BUCKET_NAMES[bucket]} for this ${verdict.spentBy === 'api_key' ? 'API key' : 'user'}; retry in ${verdict.retryAfterSeconds} s`,
      HttpStatus.TOO_MANY_REQUESTS,
    );
  }
}

/** Counts the route against the caller's per-minute budget for `bucket` (429 with Retry-After beyond it). */
export function RateLimit(bucket: RateLimitBucket): MethodDecorator {
  return applyDecorators(SetMetadata(RATE_LIMIT_BUCKET, bucket), UseGuards(RateLimitGuard));
}
