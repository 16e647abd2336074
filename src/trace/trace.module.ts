import { Module } from '@nestjs/common';
import { TraceNormalizationInterceptor } from './trace.interceptor';

@Module({
  providers: [TraceNormalizationInterceptor],
  exports: [TraceNormalizationInterceptor],
})
export class TraceModule {}
