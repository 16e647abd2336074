import { Module } from '@nestjs/common';
import { TraceNormalizationInterceptor } from './trace.interceptor.js';

@Module({
  providers: [TraceNormalizationInterceptor],
  exports: [TraceNormalizationInterceptor],
})
export class TraceModule {}
