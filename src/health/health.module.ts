import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { ReadinessModule } from '../common/readiness.js';
import { HealthController } from './health.controller.js';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), ReadinessModule],
  controllers: [HealthController],
})
export class HealthModule {}
