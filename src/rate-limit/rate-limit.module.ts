import { Global, Module } from '@nestjs/common';
import { RateLimitGuard, RateLimitRefundInterceptor } from './rate-limit.guard.js';
import { RateLimitService } from './rate-limit.service.js';

@Global()
@Module({
  providers: [RateLimitService, RateLimitGuard, RateLimitRefundInterceptor],
  exports: [RateLimitService, RateLimitGuard, RateLimitRefundInterceptor],
})
export class RateLimitModule {}
