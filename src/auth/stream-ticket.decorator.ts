import { applyDecorators, SetMetadata } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';

export const ACCEPTS_STREAM_TICKET = 'auth:acceptsStreamTicket';

/** The query parameter a stream ticket travels in. */
export const STREAM_TICKET_PARAMETER = 'ticket';

/**
 * Marks a route of one run (path parameter `run_id`) that accepts
 * `?ticket=<stream ticket>` instead of `Authorization`, for browser
 * `EventSource`. Only tickets: a bearer token in the query is refused.
 */
export const AcceptsStreamTicket = () =>
  applyDecorators(
    SetMetadata(ACCEPTS_STREAM_TICKET, true),
    ApiQuery({
      name: STREAM_TICKET_PARAMETER,
      required: false,
      description:
        'A stream ticket from `POST /api/chat/runs/{run_id}/ticket`, instead of the Authorization header (for EventSource). ' +
        'Valid for this run only, reusable until it expires; a bearer token is refused here.',
    }),
  );
