import { Inject, Injectable } from '@nestjs/common';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { ErrorCode, InitializeRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Response } from 'express';
import type { AuthUser } from '../../auth/auth-user.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';
import { ChunkSources, CollectionAccess, CollectionsService, DocumentTitles, RetrievalService } from '../../knowledge/public-api.js';
import { RateLimitService } from '../../rate-limit/rate-limit.service.js';
import {
  argumentProblems,
  GET_CHUNK,
  getChunkArguments,
  type getChunkResult,
  KNOWLEDGE_TOOLS,
  LIST_COLLECTIONS,
  listCollectionsArguments,
  type listCollectionsResult,
  SEARCH_KNOWLEDGE,
  searchKnowledgeArguments,
  type searchKnowledgeResult,
} from './knowledge-tools.js';
import { JsonRpcError, serviceMcpError, toMcpError } from './mcp-errors.js';

/**
 * tools/list and tools/call as the Protocol parses them before the handler:
 * loosely. With the SDK's own schemas a request whose params do not fit
 * (`name: 7`) fails that parse with a ZodError, answered as InternalError
 * (-32603); the envelope is checked by `toolCall` instead, answered as
 * InvalidParams (-32602) in a sentence, as the MCP specification asks.
 */
const ANY_TOOLS_LIST = z.object({ method: z.literal('tools/list'), params: z.unknown().optional() });
const ANY_TOOLS_CALL = z.object({ method: z.literal('tools/call'), params: z.unknown().optional() });
const ANY_INITIALIZE = z.object({ method: z.literal('initialize'), params: z.unknown().optional() });

/** One JSON Schema validator for every request's server: each would otherwise build its own Ajv (about 1 ms a request). */
const SCHEMA_VALIDATOR = new AjvJsonSchemaValidator();

/** The version this server announces in `initialize` (the service's API version, as in the OpenAPI document). */
const SERVER_VERSION = '0.1.0';

/**
 * The name and arguments of a tools/call, or InvalidParams saying what is
 * wrong with its envelope. A `task` asks for a task this server does not run
 * (it declares no tasks capability): the call is answered as a plain call.
 */
function toolCall(params: unknown): { name: string; args: unknown } {
  const envelope = (params ?? {}) as { name?: unknown; arguments?: unknown };
  if (typeof params !== 'object' || Array.isArray(params)) throw serviceMcpError('invalid_request', 'Invalid tools/call: params must be an object with name and arguments');
  if (typeof envelope.name !== 'string') throw serviceMcpError('invalid_request', 'Invalid tools/call: params.name must be the name of a tool (a string)');
  const args = envelope.arguments;
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
    throw serviceMcpError('invalid_request', 'Invalid tools/call: params.arguments must be an object of the arguments (or left out)');
  }
  return { name: envelope.name, args };
}

/** Arguments as the schema wants them, or InvalidParams (-32602) saying what is wrong: never a tool result. */
function parseArguments<S extends z.ZodType>(schema: S, args: unknown): z.output<S> {
  const parsed = schema.safeParse(args ?? {});
  if (!parsed.success) throw serviceMcpError('invalid_request', `Invalid arguments: ${argumentProblems(parsed.error)}`);
  return parsed.data;
}

/** A tool result: the structured content, and readable text saying the same for clients that read only `content`. */
function result(text: string, structured: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

/**
 * The SDK's Server, but a tools/call that asks to run as a task (this server
 * declares no tasks capability) is refused as the MCP specification says for
 * a tool that does not run as a task (-32601, in a sentence), not as an
 * internal error.
 */
class TasklessServer extends Server {
  /**
   * The Server's own initialize handler, behind a parse of ours: the
   * Protocol's parse would answer params that do not fit (`protocolVersion:
   * 7`, no `clientInfo`) as InternalError (-32603) with a schema library's
   * dump; they are InvalidParams (-32602), said in a sentence.
   */
  override setRequestHandler(...[schema, handler]: Parameters<Server['setRequestHandler']>): void {
    if (schema !== InitializeRequestSchema) return super.setRequestHandler(schema, handler);
    const initialize = handler as (request: z.output<typeof InitializeRequestSchema>, extra: unknown) => unknown;
    Protocol.prototype.setRequestHandler.call(this, ANY_INITIALIZE, (request, extra) => {
      const parsed = InitializeRequestSchema.safeParse(request);
      if (!parsed.success) throw serviceMcpError('invalid_request', `Invalid initialize: ${argumentProblems(parsed.error)}`);
      return initialize(parsed.data, extra) as never;
    });
  }

  override assertTaskHandlerCapability(method: string): void {
    try {
      super.assertTaskHandlerCapability(method);
    } catch {
      throw new JsonRpcError(ErrorCode.MethodNotFound, `This server runs no tasks: send ${method} without params.task`, { code: 'not_supported' });
    }
  }
}

/**
 * The knowledge base as an MCP server (tools/list, tools/call), built for one
 * caller and one request: the MCP transport is stateless, so each POST gets
 * its own server. Every tool reads through the knowledge module's door with
 * the caller's access, exactly as the REST routes do: the same search (its
 * scope from CollectionAccess), the same collection listing and the same
 * chunk lookup. A collection or chunk the caller cannot read is answered as
 * one that does not exist. Bad arguments, unknown tools and refusals are
 * JSON-RPC errors carrying the service's error code in `data.code`: hence
 * the SDK's low-level Server, since its McpServer answers every failure of a
 * tools/call (bad arguments and unknown tools included) as an `isError`
 * tool result.
 */
@Injectable()
export class KnowledgeMcpServer {
  constructor(
    private readonly access: CollectionAccess,
    private readonly retrieval: RetrievalService,
    private readonly titles: DocumentTitles,
    private readonly collections: CollectionsService,
    private readonly chunks: ChunkSources,
    private readonly limits: RateLimitService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** A server for `user`'s request; `res` receives the Retry-After of a refused search. */
  create(user: AuthUser, res: Response): Server {
    const server = new TasklessServer(
      { name: 'rag-knowledge-base', title: 'Knowledge base', version: SERVER_VERSION },
      {
        capabilities: { tools: {} },
        jsonSchemaValidator: SCHEMA_VALIDATOR,
        instructions: 'Search the knowledge base with search_knowledge; list_collections names the collections you can read; get_chunk shows a passage in context.',
      },
    );
    // Every tool, in one page: the list is three tools long, so a cursor is ignored.
    server.setRequestHandler(ANY_TOOLS_LIST, () => ({ tools: KNOWLEDGE_TOOLS }));
    // Registered past the Server's own tools/call wrapper: it answers an envelope that does not fit
    // (`arguments: null`) with a schema library's dump, and a `task` with a complaint about our result.
    Protocol.prototype.setRequestHandler.call(server, ANY_TOOLS_CALL, async (request) => {
      try {
        const { name, args } = toolCall(request.params);
        return await this.call(user, res, name, args);
      } catch (error) {
        throw toMcpError(error);
      }
    });
    return server;
  }

  private call(user: AuthUser, res: Response, name: string, args: unknown): Promise<CallToolResult> {
    switch (name) {
      case SEARCH_KNOWLEDGE:
        return this.search(user, res, parseArguments(searchKnowledgeArguments, args));
      case LIST_COLLECTIONS:
        return this.listCollections(user, parseArguments(listCollectionsArguments, args));
      case GET_CHUNK:
        return this.getChunk(user, parseArguments(getChunkArguments, args));
      default:
        throw serviceMcpError('invalid_request', `Unknown tool ${JSON.stringify(name.slice(0, 100))}: call ${SEARCH_KNOWLEDGE}, ${LIST_COLLECTIONS} or ${GET_CHUNK}`);
    }
  }

  /** POST /api/knowledge/search's retrieval, counted against the caller's search budget (RATE_LIMIT_SEARCH_PER_MINUTE). */
  private async search(user: AuthUser, res: Response, args: z.output<typeof searchKnowledgeArguments>): Promise<CallToolResult> {
    const verdict = await this.limits.consume('search', user.userId, user.apiKeyId);
    if (!verdict.allowed) {
      if (!res.headersSent) res.setHeader('Retry-After', String(verdict.retryAfterSeconds));
      const who = verdict.spentBy === 'api_key' ? 'API key' : 'user';
      throw serviceMcpError('rate_limited', `Too many searches for this ${who}; retry in ${verdict.retryAfterSeconds} s`, {
        retry_after_seconds: verdict.retryAfterSeconds,
      });
    }
    const scope = await this.access.retrievalScope(user, args.collection_ids);
    const found = await this.retrieval.search(args.query, args.top_k ?? this.config.knowledge.topK, { scope });
    const titles = await this.titles.of(
      found.hits.map((hit) => hit.source),
      found.hits,
    );
    const results: z.output<typeof searchKnowledgeResult>['results'] = found.hits.map((hit) => ({
      chunk_id: hit.chunk_id,
      document: titles.get(hit.source) ?? hit.source,
      collection_id: hit.collection_id,
      source: hit.source,
      page: hit.page ?? null,
      score: Number.isFinite(hit.score) ? hit.score : null,
      text: hit.text,
    }));
    const text =
      results.length === 0
        ? 'No passage of the knowledge base matches this query.'
        : results.map((hit, i) => `[${i + 1}] ${hit.document} (${hit.source}${hit.page === null ? '' : `, page ${hit.page}`}; chunk_id ${hit.chunk_id})\n${hit.text}`).join('\n\n');
    return result(text, { results });
  }

  /** GET /api/knowledge/collections: the collections the caller may read. */
  private async listCollections(user: AuthUser, args: z.output<typeof listCollectionsArguments>): Promise<CallToolResult> {
    const page = await this.collections.list(user, { limit: args.limit, cursor: args.cursor });
    const collections: z.output<typeof listCollectionsResult>['collections'] = page.collections.map((c) => ({
      id: c.id,
      name: c.name,
      description: c.description,
      role: c.role,
      document_count: c.document_count,
      created_at: c.created_at,
      updated_at: c.updated_at,
    }));
    const text = collections.map((c) => `${c.name} (id ${c.id}; ${c.document_count} documents; your role: ${c.role})`).join('\n') || 'No collection.';
    return result(text, { collections, next_cursor: page.next_cursor });
  }

  /** GET /api/knowledge/chunks/:chunk_id: the chunk and its neighbours, under its collection's access rule. */
  private async getChunk(user: AuthUser, args: z.output<typeof getChunkArguments>): Promise<CallToolResult> {
    const chunk: z.output<typeof getChunkResult> = await this.chunks.source(user, args.chunk_id);
    const where = `${chunk.document.filename}${chunk.page === null ? '' : `, page ${chunk.page}`}`;
    return result(`${where} (chunk_id ${chunk.chunk_id}, collection ${chunk.collection_id})\n${chunk.text}`, { ...chunk });
  }
}
