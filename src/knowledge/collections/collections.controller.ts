import { Body, Controller, Delete, Get, Param, Patch, Post, Put, Query } from '@nestjs/common';
import { ApiBearerAuth, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../../auth/auth-user.js';
import { CurrentUser } from '../../auth/current-user.decorator.js';
import { ApiErrorResponses } from '../../common/api-error.responses.js';
import {
  AccessListResponse,
  AccessPutBody,
  CollectionCreateBody,
  CollectionDeleteResponse,
  CollectionIdParams,
  CollectionInfo,
  CollectionListQuery,
  CollectionListResponse,
  CollectionUpdateBody,
} from './collections.dto.js';
import { CollectionsService } from './collections.service.js';

/**
 * `/api/knowledge/collections`: knowledge collections and their access
 * lists. A collection the caller cannot read answers 404, exactly like one
 * that does not exist; one the caller reads but may not change answers 403
 * `collection_forbidden`. `:id` is a collection id or `default`.
 */
@ApiTags('knowledge')
@ApiBearerAuth()
@ApiErrorResponses(400, 401, 503)
@Controller('api/knowledge/collections')
export class CollectionsController {
  constructor(private readonly collections: CollectionsService) {}

  @Post()
  @ApiOperation({
    summary: 'Create a collection; the caller becomes its owner',
    description: 'Any signed-in user may, unless KNOWLEDGE_COLLECTION_CREATORS=admins (then 403 `collection_creation_forbidden` for others).',
  })
  @ApiCreatedResponse({ type: CollectionInfo, description: 'The new collection, with the caller as owner' })
  @ApiErrorResponses(413, 'collection_creation_forbidden', 'collection_limit')
  create(@CurrentUser() user: AuthUser, @Body() body: CollectionCreateBody): Promise<CollectionInfo> {
    return this.collections.create(user, body);
  }

  @Get()
  @ApiOperation({
    summary: "The collections the caller may read, each with the caller's role and its document count, oldest first (`default` first)",
    description: 'Administrators see every collection. Pass `next_cursor` back as `cursor` for the next page.',
  })
  @ApiOkResponse({ type: CollectionListResponse, description: 'A page of collections and the cursor of the next one' })
  @ApiErrorResponses('invalid_cursor')
  list(@CurrentUser() user: AuthUser, @Query() query: CollectionListQuery): Promise<CollectionListResponse> {
    return this.collections.list(user, query);
  }

  @Get(':id')
  @ApiOperation({ summary: "A collection, with the caller's role and its document count" })
  @ApiOkResponse({ type: CollectionInfo, description: 'The collection' })
  @ApiErrorResponses('collection_not_found')
  get(@CurrentUser() user: AuthUser, @Param() params: CollectionIdParams): Promise<CollectionInfo> {
    return this.collections.get(user, params.id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename or describe a collection (owners); `default` keeps its name' })
  @ApiOkResponse({ type: CollectionInfo, description: 'The collection as changed' })
  @ApiErrorResponses(413, 'collection_not_found', 'collection_forbidden', 'default_collection_protected')
  update(@CurrentUser() user: AuthUser, @Param() params: CollectionIdParams, @Body() body: CollectionUpdateBody): Promise<CollectionInfo> {
    return this.collections.update(user, params.id, body);
  }

  @Delete(':id')
  @ApiOperation({
    summary: 'Delete a collection (owners) with its documents, chunks, vectors, ingest jobs and access list; `default` cannot be deleted',
    description: 'Its unfinished ingest jobs end with it: none stores anything afterwards.',
  })
  @ApiOkResponse({ type: CollectionDeleteResponse, description: 'The collection and everything in it are gone' })
  @ApiErrorResponses('collection_not_found', 'collection_forbidden', 'default_collection_protected')
  remove(@CurrentUser() user: AuthUser, @Param() params: CollectionIdParams): Promise<CollectionDeleteResponse> {
    return this.collections.remove(user, params.id);
  }

  @Get(':id/access')
  @ApiOperation({ summary: "A collection's access list: who (`user:<id>`, `group:<name>`, `everyone`) has which role" })
  @ApiOkResponse({ type: AccessListResponse, description: 'The access list' })
  @ApiErrorResponses('collection_not_found')
  accessList(@CurrentUser() user: AuthUser, @Param() params: CollectionIdParams): Promise<AccessListResponse> {
    return this.collections.accessList(user, params.id);
  }

  @Put(':id/access')
  @ApiOperation({
    summary: "Replace a collection's access list (owners); effective on every instance from the next request on",
    description:
      'Each principal once (400 otherwise); at least one `owner` entry must remain (409 `collection_owner_required`). ' +
      '`default` must keep an `everyone` entry (409 `default_collection_protected`).',
  })
  @ApiOkResponse({ type: AccessListResponse, description: 'The new access list' })
  @ApiErrorResponses(413, 'collection_not_found', 'collection_forbidden', 'collection_owner_required', 'default_collection_protected')
  replaceAccess(@CurrentUser() user: AuthUser, @Param() params: CollectionIdParams, @Body() body: AccessPutBody): Promise<AccessListResponse> {
    return this.collections.replaceAccess(user, params.id, body.entries);
  }
}
