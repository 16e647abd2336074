import type { components } from './schema.js';

type RagTrace = components['schemas']['RagTrace'];
type PendingHitlState = components['schemas']['PendingHitlState'];

/** What `ragMetadataExtractor` puts under its key of the AI SDK's `providerMetadata`. */
export interface RagProviderMetadata {
  /** The turn's RAG trace (null when the turn searched nothing). */
  rag_trace: RagTrace | null;
  /** The paused turn's question and options, null unless the turn paused. */
  pending_hitl: PendingHitlState | null;
  /** The session of a session turn (`X-Session-Id`); null for a stateless one. */
  session_id: string | null;
}

/** The fields of a `/v1/chat/completions` body or final chunk that are this service's own. */
interface ServiceFields {
  rag_trace?: RagTrace | null;
  pending_hitl?: PendingHitlState | null;
  session_id?: string;
}

/** JSON as the AI SDK's provider metadata holds it. */
type Json = null | string | number | boolean | Json[] | { [key: string]: Json };

/**
 * The AI SDK's `MetadataExtractor` (of `@ai-sdk/openai-compatible`, typed
 * here by shape so this package does not depend on the SDK), which keeps what
 * the provider drops: the turn's `rag_trace`, `pending_hitl` and `session_id`,
 * from a whole response or from the final chunk of a stream.
 */
export interface RagMetadataExtractor {
  extractMetadata(options: { parsedBody: unknown }): Promise<Record<string, Record<string, Json>> | undefined>;
  createStreamExtractor(): {
    processChunk(parsedChunk: unknown): void;
    buildMetadata(): Record<string, Record<string, Json>> | undefined;
  };
}

function serviceFields(body: unknown): ServiceFields | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const fields = body as ServiceFields;
  return 'rag_trace' in fields || 'pending_hitl' in fields || 'session_id' in fields ? fields : undefined;
}

function metadataOf(key: string, fields: ServiceFields | undefined): Record<string, Record<string, Json>> | undefined {
  if (!fields) return undefined;
  const metadata: RagProviderMetadata = { rag_trace: fields.rag_trace ?? null, pending_hitl: fields.pending_hitl ?? null, session_id: fields.session_id ?? null };
  return { [key]: metadata as unknown as Record<string, Json> };
}

/**
 * For `createOpenAICompatible({name, baseURL, metadataExtractor: ragMetadataExtractor(name)})`:
 * `providerMetadata[name]` of `generateText` and `streamText` then holds a
 * `RagProviderMetadata`. `key` must be the provider's `name`, which the
 * provider also writes its own fields under.
 */
export function ragMetadataExtractor(key = 'rag'): RagMetadataExtractor {
  return {
    extractMetadata: async ({ parsedBody }) => metadataOf(key, serviceFields(parsedBody)),
    createStreamExtractor: () => {
      let final: ServiceFields | undefined;
      return {
        processChunk(parsedChunk) {
          final = serviceFields(parsedChunk) ?? final;
        },
        buildMetadata: () => metadataOf(key, final),
      };
    },
  };
}
