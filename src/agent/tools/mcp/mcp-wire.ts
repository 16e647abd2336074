import type { Logger } from '@nestjs/common';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import * as z4 from 'zod/v4';
import type { McpServerConfig } from '../../../config/app-config.js';
import { ToolReportedError } from '../agent-tool.js';

/** What MCP servers say and how it is read: their tool lists (bounded), their results, their failures. */

export interface McpToolInfo {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

const LIST_PAGES_MAX = 20;
/** Bounds on what a server may put in front of the model: tools per server, and a tool's schema as JSON. */
export const MCP_TOOLS_PER_SERVER_MAX = 128;
export const MCP_TOOL_SCHEMA_MAX_CHARS = 32_000;
/** Tools of a listing looked at, valid or not: past it the rest of the list is not read. */
const MCP_TOOLS_EXAMINED_MAX = 4 * MCP_TOOLS_PER_SERVER_MAX;
/** Skipped tools named in the listing's one warning. */
const SKIPPED_SHOWN = 5;

const lenientToolList = z4.looseObject({ tools: z4.array(z4.unknown()), nextCursor: z4.string().optional() });

/** tools/list without the SDK's all-or-nothing check: a tool with an invalid schema is skipped with a warning. */
export async function listServerTools(config: McpServerConfig, client: Client, logger: Logger): Promise<McpToolInfo[]> {
  const tools: McpToolInfo[] = [];
  const skipped: string[] = [];
  let examined = 0;
  let cursor: string | undefined;
  try {
    for (let page = 0; page < LIST_PAGES_MAX; page++) {
      const result = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, lenientToolList, { timeout: config.timeout_ms });
      for (const raw of result.tools) {
        if (tools.length === MCP_TOOLS_PER_SERVER_MAX || ++examined > MCP_TOOLS_EXAMINED_MAX) {
          skipped.push(`the rest: the server lists more than ${MCP_TOOLS_PER_SERVER_MAX} usable tools, or more than ${MCP_TOOLS_EXAMINED_MAX} in all (narrow them with "tools")`);
          return tools;
        }
        const parsed = ToolSchema.safeParse(raw);
        const name = (raw as { name?: unknown })?.name;
        if (!parsed.success) {
          skipped.push(`tool ${typeof name === 'string' ? clipText(name, 100) : '(unnamed)'}: invalid definition: ${clipText(parsed.error.message, 300)}`);
          continue;
        }
        const tool = parsed.data;
        if (config.tools && !config.tools.includes(tool.name)) continue;
        if (!/^[A-Za-z0-9_.-]{1,128}$/.test(tool.name)) {
          skipped.push(`tool ${clipText(tool.name, 100)}: its name is not [A-Za-z0-9_.-]`);
          continue;
        }
        if (JSON.stringify(tool.inputSchema).length > MCP_TOOL_SCHEMA_MAX_CHARS) {
          skipped.push(`tool ${tool.name}: its input schema is over ${MCP_TOOL_SCHEMA_MAX_CHARS} characters of JSON`);
          continue;
        }
        tools.push({ name: tool.name, description: clipText(tool.description ?? tool.title ?? '', 1000), inputSchema: tool.inputSchema as Record<string, unknown> });
      }
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return tools;
  } finally {
    // One warning per listing, however many tools a hostile server lists.
    if (skipped.length > 0) {
      const shown = skipped.slice(0, SKIPPED_SHOWN).join('; ');
      logger.warn(`MCP server ${config.name}: skipped ${skipped.length} item(s) of its tool list: ${shown}${skipped.length > SKIPPED_SHOWN ? '; …' : ''}`);
    }
  }
}

/** A failed MCP call, reported to the model with our code. */
export class McpToolError extends ToolReportedError {
  constructor(
    readonly code: 'tool_failed' | 'tool_timeout',
    message: string,
  ) {
    super(message);
  }
}

/** A remote server that restarted answers a request of our old session 404 (the MCP specification: start a new session). */
export function isSessionGone(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

/** A remote server that cannot be reached (fetch's `TypeError: fetch failed`: refused, reset, unresolvable; by name, as it may come from another realm). */
export function isConnectionLost(error: unknown): boolean {
  const { name, message } = (error ?? {}) as { name?: unknown; message?: unknown };
  return name === 'TypeError' && message === 'fetch failed';
}

export function clipText(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

export function resultText(result: { content?: unknown; structuredContent?: unknown }): string {
  const parts: string[] = [];
  for (const block of (Array.isArray(result.content) ? result.content : []) as Array<Record<string, unknown>>) {
    if (block.type === 'text' && typeof block.text === 'string') parts.push(block.text);
    else if (block.type === 'resource' && typeof (block.resource as { text?: unknown })?.text === 'string') parts.push((block.resource as { text: string }).text);
    else parts.push(`[${String(block.type)} content]`);
  }
  if (!parts.length && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}
