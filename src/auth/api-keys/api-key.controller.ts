import { Body, Controller, Delete, Get, Param, Post } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ApiErrorResponses } from '../../common/api-error.responses.js';
import type { AuthUser } from '../auth-user.js';
import { CurrentUser } from '../current-user.decorator.js';
import { ApiKeyCreateBody, ApiKeyCreatedResponse, ApiKeyIdParams, ApiKeyInfo, ApiKeyListResponse } from './api-key.dto.js';
import { ApiKeyService } from './api-key.service.js';

@ApiTags('keys')
@ApiBearerAuth()
@ApiErrorResponses(400, 401, 503)
@Controller('api/keys')
export class ApiKeyController {
  constructor(private readonly keys: ApiKeyService) {}

  @Post()
  @ApiOperation({
    summary: 'Create an API key for service-to-service clients; the key is in this answer only',
    description:
      "Needs a signed user token: a request authenticated by an API key gets 403. The key carries the caller's identity and " +
      'role (admin or not) and is sent as `Authorization: Bearer rk-…`.',
  })
  @ApiCreatedResponse({ type: ApiKeyCreatedResponse, description: 'The key (shown once) and its details' })
  @ApiErrorResponses(413, 'forbidden', 'api_key_limit')
  create(@CurrentUser() user: AuthUser, @Body() body: ApiKeyCreateBody): Promise<ApiKeyCreatedResponse> {
    return this.keys.create(user, body.name, body.expires_in_days);
  }

  @Get()
  @ApiOperation({ summary: "The caller's API keys (never the keys themselves): live ones first, newest first" })
  @ApiOkResponse({ type: ApiKeyListResponse, description: "The caller's keys, each without its secret" })
  async list(@CurrentUser() user: AuthUser): Promise<ApiKeyListResponse> {
    return { keys: await this.keys.list(user.userId) };
  }

  @Delete(':id')
  @ApiOperation({
    summary: "Revoke one of the caller's API keys, at once on every instance (idempotent)",
    description: 'A request authenticated by an API key may revoke only that key (403 for any other).',
  })
  @ApiOkResponse({ type: ApiKeyInfo, description: 'The key, with its revocation time' })
  @ApiErrorResponses('api_key_not_found', 'forbidden')
  revoke(@CurrentUser() user: AuthUser, @Param() params: ApiKeyIdParams): Promise<ApiKeyInfo> {
    return this.keys.revoke(user, params.id);
  }
}
