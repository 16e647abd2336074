import createOpenApiClient, { type Client } from 'openapi-fetch';
import type { paths } from './schema.js';
import { ChatStreamClient, type ChatStreamOptions } from './stream.js';

export type { components, operations, paths } from './schema.js';
export * from './stream.js';
export { ERROR_CODES, errorCodeStatus, type ErrorCode } from './error-codes.js';
export { parseSse, type RawSseEvent } from './sse-parser.js';
export { ragMetadataExtractor, type RagMetadataExtractor, type RagProviderMetadata } from './openai-compatible-metadata.js';

export interface AgenticRagClient {
  /** Every JSON route, typed from the OpenAPI document (openapi-fetch): `api.GET('/api/sessions')`… */
  api: Client<paths>;
  /** Streamed turns: `chat.stream({message})`, `chat.rejoin(runId, {lastEventId})`, `chat.cancel(runId)`. */
  chat: ChatStreamClient;
}

/** The REST client and the stream client, both sending the bearer token. */
export function createAgenticRagClient(options: ChatStreamOptions): AgenticRagClient {
  const api = createOpenApiClient<paths>({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: options.fetch });
  api.use({
    async onRequest({ request }) {
      const token = typeof options.token === 'function' ? await options.token() : options.token;
      request.headers.set('Authorization', `Bearer ${token}`);
      return request;
    },
  });
  return { api, chat: new ChatStreamClient(options) };
}
