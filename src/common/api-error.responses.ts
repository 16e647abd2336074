import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiResponse } from '@nestjs/swagger';

export class ApiErrorBody {
  @ApiProperty({ type: 'integer', example: 400 })
  statusCode: number;

  @ApiProperty({ example: 'Bad Request' })
  error: string;

  @ApiProperty({ description: 'What was wrong, naming the field or header at fault' })
  message: string;

  @ApiProperty({ description: 'Request id, also in the x-request-id response header' })
  request_id: string;
}

const DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input; the message names the field',
  401: 'Missing, malformed, expired or tampered bearer token',
  403: 'Authenticated but not allowed',
  404: 'No such resource for this user',
  409: 'Conflicts with work in progress',
  413: 'Request body too large',
  429: 'Too many requests for this user; retry after the Retry-After header',
  503: 'A required dependency is unavailable',
};

/** Documents the error answers of a route with the shared error body. */
export function ApiErrorResponses(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      ApiResponse({ status, description: DESCRIPTIONS[status] ?? 'Error', type: ApiErrorBody }),
    ),
  );
}
