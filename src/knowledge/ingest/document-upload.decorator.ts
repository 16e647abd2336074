import { applyDecorators, UseInterceptors } from '@nestjs/common';
import { FileInterceptor } from '@nestjs/platform-express';
import { ApiAcceptedResponse, ApiBody, ApiConsumes, ApiCreatedResponse, ApiOkResponse } from '@nestjs/swagger';
import { ApiErrorResponses } from '../../common/api-error.responses.js';
import { RateLimit } from '../../rate-limit/rate-limit.guard.js';
import { DocumentUploadResponse } from '../knowledge.dto.js';

/**
 * What every document upload route shares: the multipart form (`file`), its
 * answers (202 queued, 200 duplicate, 201 with `wait=true`), its error codes,
 * the `upload` rate limit and the file interceptor. `duplicate` says where
 * identical content counts as already stored.
 */
export function DocumentUploadRoute(duplicate: string): MethodDecorator {
  return applyDecorators(
    ApiConsumes('multipart/form-data'),
    ApiBody({ schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary' } } } }),
    ApiAcceptedResponse({ type: DocumentUploadResponse, description: 'Stored and queued: `job` (Location: the job)' }),
    ApiOkResponse({ type: DocumentUploadResponse, description: duplicate }),
    ApiCreatedResponse({ type: DocumentUploadResponse, description: '`wait=true`: the job stored the document' }),
    ApiErrorResponses(
      'collection_forbidden',
      'invalid_document_name',
      'index_space_mismatch',
      'ingest_cancelled',
      413,
      'document_too_large',
      'unsupported_document',
      'unreadable_document',
      429,
      'ingest_failed',
    ),
    RateLimit('upload'),
    UseInterceptors(FileInterceptor('file')),
  );
}
