import { Controller, Get, Param } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../../auth/auth-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import { ApiErrorResponses } from '../../common/api-error.responses.js';
import { ChunkSources } from './chunk-sources.service.js';
import { ChunkIdParams, ChunkSourceResponse } from './chunks.dto.js';

@ApiTags('knowledge')
@ApiBearerAuth()
@ApiErrorResponses(400, 401, 503)
@Controller('api/knowledge/chunks')
export class ChunksController {
  constructor(private readonly sources: ChunkSources) {}

  @Get(':chunk_id')
  @ApiOperation({
    summary: 'A cited chunk with its source: its text, document, collection, page or location, and the chunks around it',
    description: 'Under the access rule of its collection: a chunk of a collection the caller cannot read answers 404 `chunk_not_found`, like a missing one.',
  })
  @ApiOkResponse({ type: ChunkSourceResponse, description: 'The chunk and its neighbours in its document' })
  @ApiErrorResponses('chunk_not_found')
  source(@CurrentUser() user: AuthUser, @Param() params: ChunkIdParams): Promise<ChunkSourceResponse> {
    return this.sources.source(user, params.chunk_id);
  }
}
