import { Controller, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../auth/auth-user.js';
import { CurrentUser } from '../auth/current-user.decorator.js';
import { StreamTicketService } from '../auth/stream-ticket.service.js';
import { RateLimit } from '../rate-limit/rate-limit.guard.js';
import { ApiErrorResponses } from '../common/api-error.responses.js';
import { RunIdParams } from './run-id.params.js';
import { RunRegistry } from './run-registry.service.js';
import { RequestError } from '../common/coded-error.js';

export class StreamTicketResponse {
  @ApiProperty({ description: 'Pass as `?ticket=` to `GET /api/chat/runs/{run_id}/stream` (this run only), e.g. with EventSource' })
  ticket: string;

  @ApiProperty({
    type: 'integer',
    description: 'Seconds the ticket stays valid (STREAM_TICKET_TTL_SECONDS, less when the token or API key that asked for it expires sooner); reusable until then',
    example: 60,
  })
  expires_in: number;
}

@ApiTags('chat')
@ApiBearerAuth()
@Controller('api/chat/runs')
export class StreamTicketController {
  constructor(
    private readonly runs: RunRegistry,
    private readonly tickets: StreamTicketService,
  ) {}

  @Post(':run_id/ticket')
  @HttpCode(200)
  @ApiOperation({
    summary: "A short-lived ticket to rejoin a run's stream without the Authorization header",
    description:
      'For browser `EventSource`, which cannot send headers: `new EventSource(`/api/chat/runs/${run_id}/stream?ticket=${ticket}`)`. ' +
      'The ticket is signed for this run and this user, and its own reconnects (with `Last-Event-ID`) keep working until it expires.',
  })
  @ApiOkResponse({ type: StreamTicketResponse, description: 'The ticket and its lifetime' })
  @ApiErrorResponses(400, 401, 'run_not_found', 413, 429, 503)
  @RateLimit('run_control')
  async issue(@CurrentUser() user: AuthUser, @Param() params: RunIdParams): Promise<StreamTicketResponse> {
    const run = await this.runs.find(params.run_id, user.userId);
    if (!run) throw new RequestError('run_not_found', `Run ${params.run_id} not found`);
    return this.tickets.issue(user, run.id);
  }
}
