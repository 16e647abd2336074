import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DrainStateModule } from '../common/drain-state.js';
import { ReadinessModule } from '../common/readiness.js';
import { HealthController } from './health.controller.js';
import { MetricsController } from './metrics.controller.js';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), DrainStateModule, ReadinessModule],
  controllers: [HealthController, MetricsController],
})
export class HealthModule {}
