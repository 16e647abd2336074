import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DrainStateModule } from '../common/drain-state.js';
import { HealthController } from './health.controller.js';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), DrainStateModule],
  controllers: [HealthController],
})
export class HealthModule {}
