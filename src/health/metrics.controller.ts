import { createHash, timingSafeEqual } from 'node:crypto';
import { Controller, Get, Headers, Inject, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiProduces, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/public.decorator.js';
import { RequestError } from '../common/coded-error.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Metrics } from '../observability/metrics.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether `authorization` is `Bearer <token>`, compared in constant time (as digests, so the time does not tell the token's length either). */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  const match = /^Bearer +(\S+) *$/i.exec(authorization ?? '');
  return match !== null && timingSafeEqual(digest(match[1]), digest(token));
}

@ApiTags('health')
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @Public()
  @ApiOperation({
    summary: 'Prometheus metrics (text exposition format)',
    description: 'Open, or with `METRICS_TOKEN` set, only with `Authorization: Bearer <METRICS_TOKEN>`. Labels never carry user ids, session ids or text.',
  })
  @ApiHeader({ name: 'Authorization', required: false, description: '`Bearer <METRICS_TOKEN>` when METRICS_TOKEN is set' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'The metrics', schema: { type: 'string' } })
  @ApiUnauthorizedResponse({ description: '`unauthorized`: METRICS_TOKEN is set and the request does not carry it' })
  async scrape(@Headers('authorization') authorization: string | undefined, @Res() res: Response): Promise<void> {
    const token = this.config.metrics.token;
    if (token !== null && !bearerMatches(authorization, token)) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
      throw new RequestError('unauthorized', 'The metrics need Authorization: Bearer <METRICS_TOKEN>');
    }
    const body = await this.metrics.exposition();
    res.setHeader('Content-Type', this.metrics.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.send(body);
  }
}
