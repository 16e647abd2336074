import { Controller, Get, HttpStatus, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheckService, TypeOrmHealthIndicator } from '@nestjs/terminus';
import type { Response } from 'express';
import { Public } from '../auth/public.decorator.js';
import { ResilientCache } from '../cache/resilient-cache.service.js';
import { DrainState } from '../common/drain-state.js';
import { Readiness } from '../common/readiness.js';

type ComponentStatus = { status: 'up' | 'down'; [detail: string]: unknown };

export class HealthReport {
  @ApiProperty({
    enum: ['ok', 'degraded', 'error', 'shutting_down'],
    description: 'degraded: the cache is down, the service still answers; shutting_down: draining after SIGTERM (no new turns, turns in flight finish), still 200',
  })
  status: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'Status of each dependency: database, cache' })
  details: Record<string, ComponentStatus>;
}

export class ReadinessReport {
  @ApiProperty({ enum: ['ready', 'not_ready'], description: '`ready`: every part is up, and the instance serves at normal speed' })
  status: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'Status of each part: database, cache, dense_index (the in-memory index loads in the background after a start), and drain (only while the instance drains after SIGTERM)',
  })
  details: Record<string, ComponentStatus>;
}

@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly cache: ResilientCache,
    private readonly drain: DrainState,
    private readonly readiness: Readiness,
  ) {}

  @Get()
  @Public()
  @ApiOperation({ summary: 'Database and cache status; 503 only when the database is down' })
  @ApiOkResponse({ type: HealthReport, description: '`ok`, or `degraded` when only the cache is down (sessions are served from PostgreSQL)' })
  @ApiServiceUnavailableResponse({ type: HealthReport, description: '`error`: the database is down' })
  async check(@Res({ passthrough: true }) res: Response): Promise<HealthReport> {
    const [database, cacheUp] = await Promise.all([this.checkDatabase(), this.cache.ping()]);
    const cache: ComponentStatus = cacheUp ? this.cacheUp() : { status: 'down', message: 'Redis unreachable or slow; sessions are served from PostgreSQL' };
    const databaseUp = database.status === 'up';
    if (!databaseUp) res.status(HttpStatus.SERVICE_UNAVAILABLE);
    return {
      // Liveness: a draining instance is alive and finishing its turns (restarting it would cut them off).
      status: !databaseUp ? 'error' : this.drain.draining ? 'shutting_down' : cacheUp ? 'ok' : 'degraded',
      details: { database, cache },
    };
  }

  @Get('ready')
  @Public()
  @ApiOperation({
    summary: 'Readiness: 200 only once the instance serves at normal speed',
    description:
      'For a load balancer: the database answers, and what loads after a start (the in-memory dense index) is loaded; the cache is reported but not required. ' +
      '`GET /health` stays the liveness check: it answers 200 as soon as the instance is up.',
  })
  @ApiOkResponse({ type: ReadinessReport, description: '`ready`' })
  @ApiServiceUnavailableResponse({ type: ReadinessReport, description: '`not_ready`: the parts `down` say why' })
  async ready(@Res({ passthrough: true }) res: Response): Promise<ReadinessReport> {
    const [database, cacheUp] = await Promise.all([this.checkDatabase(), this.cache.ping()]);
    const details: Record<string, ComponentStatus> = {
      database,
      cache: cacheUp ? this.cacheUp() : { status: 'down', message: 'Redis unreachable or slow' },
      ...this.readiness.report(),
      // A draining instance takes no new turns: the load balancer should send them elsewhere.
      ...(this.drain.draining ? { drain: { status: 'down', message: 'shutting down: no new turns' } satisfies ComponentStatus } : {}),
    };
    // Redis is not a condition: without it every instance still serves (from PostgreSQL), and a Redis outage would
    // otherwise take the whole fleet out of the load balancer at once.
    const ready = Object.entries(details).every(([part, { status }]) => part === 'cache' || status === 'up');
    if (!ready) res.status(HttpStatus.SERVICE_UNAVAILABLE);
    return { status: ready ? 'ready' : 'not_ready', details };
  }

  private cacheUp(): ComponentStatus {
    return this.cache.inProcess ? { status: 'up', message: 'in this process: no Redis (one instance)' } : { status: 'up' };
  }

  private async checkDatabase(): Promise<ComponentStatus> {
    try {
      const result = await this.health.check([() => this.db.pingCheck('database', { timeout: 1500 })]);
      return { ...(result.details.database as object), status: 'up' };
    } catch (error) {
      // Terminus also refuses once the app is closing (status `shutting_down`): the database's own status still holds.
      const body = error instanceof ServiceUnavailableException ? (error.getResponse() as { details?: Record<string, { status?: string }> }) : {};
      const database = body.details?.database ?? {};
      return { ...database, status: database.status === 'up' ? 'up' : 'down' };
    }
  }
}
