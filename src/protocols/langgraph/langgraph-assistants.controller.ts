import { All, Body, Controller, Get, Header, HttpCode, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiExcludeEndpoint, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { AgentFactory } from '../../agent/agent.factory.js';
import { Public } from '../../auth/public.decorator.js';
import { MAX_NAMED_COLLECTIONS } from '../../common/collection-ids.js';
import { RequestError } from '../../common/coded-error.js';
import { checkAssistant } from './langgraph-request.js';
import { bodyOf, metadataOf, pageOf } from './langgraph-params.js';
import { ASSISTANT_ID, GRAPH_ID } from './langgraph-state.js';
import { JsonBodyGuard } from '../../common/json-body.guard.js';
import { PlainQueryGuard } from './plain-query.guard.js';

/** When the assistant "was created": it is the service's own, so the time the process started. */
const STARTED_AT = new Date().toISOString();

const ASSISTANT = {
  assistant_id: ASSISTANT_ID,
  graph_id: GRAPH_ID,
  name: GRAPH_ID,
  description: 'The agentic RAG chat agent: answers from the knowledge base and its tools, asks when a question is ambiguous',
  config: {},
  context: {},
  metadata: { created_by: 'system' },
  version: 1,
  created_at: STARTED_AT,
  updated_at: STARTED_AT,
};

const MESSAGE_SCHEMA = {
  type: 'object',
  properties: { type: { type: 'string', enum: ['human', 'ai', 'system', 'tool'] }, content: { oneOf: [{ type: 'string' }, { type: 'array' }] }, id: { type: 'string' } },
  required: ['type', 'content'],
};

const CONTEXT_SCHEMA = {
  type: 'object',
  properties: {
    collection_ids: { type: 'array', items: { type: 'string' }, maxItems: MAX_NAMED_COLLECTIONS, description: 'The knowledge collections the turn searches' },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    max_tokens: { type: 'integer', minimum: 1 },
  },
};

const SCHEMAS = {
  graph_id: GRAPH_ID,
  input_schema: { type: 'object', properties: { messages: { type: 'array', items: MESSAGE_SCHEMA } }, required: ['messages'] },
  output_schema: { type: 'object', properties: { messages: { type: 'array', items: MESSAGE_SCHEMA } } },
  state_schema: { type: 'object', properties: { messages: { type: 'array', items: MESSAGE_SCHEMA } } },
  config_schema: { type: 'object', properties: { configurable: CONTEXT_SCHEMA } },
  context_schema: CONTEXT_SCHEMA,
};

/** The LangGraph Server API's description of the service and its one assistant (the agent). */
@ApiTags('langgraph')
@ApiBearerAuth()
@UseGuards(PlainQueryGuard, JsonBodyGuard)
@Controller('langgraph')
export class LangGraphAssistantsController {
  constructor(private readonly agents: AgentFactory) {}

  @Get('info')
  @Public()
  @ApiOperation({ summary: 'The server: {version, flags}' })
  info(): Record<string, unknown> {
    return { version: '0.1.0', context: 'js', flags: { assistants: true, crons: false, langsmith: false, store: false } };
  }

  @Get('ok')
  @Public()
  @ApiOperation({ summary: '{ok: true}' })
  ok(): Record<string, unknown> {
    return { ok: true };
  }

  @Post('assistants/search')
  @HttpCode(200)
  @ApiOperation({ summary: 'The assistants: the one agent this service runs' })
  search(@Body() raw: unknown, @Res({ passthrough: true }) res: Response): Array<Record<string, unknown>> {
    const body = bodyOf(raw);
    const { offset } = pageOf(body.limit, body.offset, 10, 1000);
    const matches = filterMatches(body);
    const select = selectOf(body.select);
    const found = matches && offset === 0 ? [ASSISTANT] : [];
    res.setHeader('X-Pagination-Total', String(found.length));
    if (!select) return found;
    return found.map((assistant) => Object.fromEntries(Object.entries(assistant).filter(([key]) => select.has(key))));
  }

  @Post('assistants/count')
  @HttpCode(200)
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: 'How many assistants match' })
  count(@Body() raw: unknown): number {
    return filterMatches(bodyOf(raw)) ? 1 : 0;
  }

  @Get('assistants/:assistant_id')
  @ApiOperation({ summary: 'The assistant (by its id, or by the graph id `agent`)' })
  get(@Param('assistant_id') id: string): Record<string, unknown> {
    checkAssistant(id);
    return ASSISTANT;
  }

  @Get('assistants/:assistant_id/schemas')
  @ApiOperation({ summary: "The graph's input, output, state and context schemas" })
  schemas(@Param('assistant_id') id: string): Record<string, unknown> {
    checkAssistant(id);
    return SCHEMAS;
  }

  @Get('assistants/:assistant_id/graph')
  @ApiOperation({ summary: "The graph's nodes and edges" })
  async graph(@Param('assistant_id') id: string, @Query('xray') xray: unknown): Promise<Record<string, unknown>> {
    checkAssistant(id);
    const drawable = await this.agents.graph.getGraphAsync({ xray: xrayOf(xray) });
    return drawable.toJSON() as Record<string, unknown>;
  }

  @Get('assistants/:assistant_id/subgraphs')
  @ApiOperation({ summary: 'The subgraphs: none' })
  subgraphs(@Param('assistant_id') id: string): Record<string, unknown> {
    checkAssistant(id);
    return {};
  }

  @Post('assistants')
  @HttpCode(405)
  @ApiOperation({ summary: "Not supported: the assistant is the service's own (405)" })
  createAssistant(): never {
    return refuse('Assistants are read-only here: the one assistant is the agent this service runs');
  }

  @All('assistants/:assistant_id/versions')
  @ApiExcludeEndpoint()
  assistantVersions(): never {
    return refuse('Assistants are read-only here: the one assistant is the agent this service runs');
  }
}

/** The parts of the LangGraph Server API this service does not serve: 405 with a JSON body (a 5xx would make the SDK retry); docs/protocol.md lists them. */
@ApiTags('langgraph')
@ApiBearerAuth()
@Controller('langgraph')
export class LangGraphRefusedController {
  @All(['runs/crons', 'runs/crons/*path', 'threads/:thread_id/runs/crons'])
  @ApiExcludeEndpoint()
  crons(): never {
    return refuse('Crons are not supported by this service');
  }

  @All(['store', 'store/*path'])
  @ApiExcludeEndpoint()
  store(): never {
    return refuse('The store is not supported by this service');
  }

  @All(['runs', 'runs/batch', 'runs/cancel', 'threads/prune', 'threads/:thread_id/copy'])
  @ApiExcludeEndpoint()
  others(): never {
    return refuse('This LangGraph Server API route is not supported by this service');
  }
}

function refuse(message: string): never {
  throw new RequestError('not_supported', message);
}

/** An optional string filter of a search (`graph_id`, `name`); null is absent. Any other type is a 400. */
function optionalText(value: unknown, name: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new RequestError('invalid_request', `${name} must be a string`);
  return value;
}

/**
 * Whether the one assistant matches a search's or count's filters: `graph_id`, `name` and
 * `metadata` (an object; each key equal to the assistant's). A filter of the wrong type is a 400, not
 * a filter left out.
 */
function filterMatches(body: Record<string, unknown>): boolean {
  const graphId = optionalText(body.graph_id, 'graph_id');
  const name = optionalText(body.name, 'name');
  const metadata = metadataOf(body.metadata);
  return (
    (graphId === undefined || graphId === GRAPH_ID) &&
    (name === undefined || name === GRAPH_ID) &&
    Object.entries(metadata).every(([key, value]) => (ASSISTANT.metadata as Record<string, unknown>)[key] === value)
  );
}

/** `select`: a list of the assistant's field names (absent or null: every field); anything else is a 400. */
function selectOf(value: unknown): Set<string> | undefined {
  if (value === undefined || value === null) return undefined;
  const fields = Object.keys(ASSISTANT);
  if (!Array.isArray(value) || value.length > fields.length * 2 || value.some((key) => typeof key !== 'string' || !fields.includes(key))) {
    throw new RequestError('invalid_request', `select must be a list of assistant fields (${fields.join(', ')})`);
  }
  return new Set(value as string[]);
}

/** `xray` as the SDK's getGraph sends it: `true`, `false` or a subgraph depth; absent is false. */
function xrayOf(raw: unknown): boolean | number {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  if (typeof raw === 'string' && /^\d{1,3}$/.test(raw) && Number(raw) <= 100) return Number(raw);
  throw new RequestError('invalid_request', 'xray must be true, false or a depth (0–100)');
}
