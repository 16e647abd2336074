import { createHash } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import type { RunnableConfig } from '@langchain/core/runnables';
import { tool } from '@langchain/core/tools';
import type { StructuredToolInterface } from '@langchain/core/tools';
import { AgentTool, AgentToolPlugin } from '../agent-tool.js';
import { McpServers } from './mcp-servers.service.js';

export const MCP_TOOL_PREFIX = 'mcp__';

/**
 * `mcp__<server>__<tool>`, a valid OpenAI function name (`[A-Za-z0-9_-]{1,64}`).
 * A name that is not one as it stands (a `.` in it, or too long) is made one
 * and given a hash of the server and tool, so two tools never share a name
 * (`files.read` and `files_read`), whatever order the server lists them in.
 */
export function mcpToolName(server: string, tool: string): string {
  const plain = `${MCP_TOOL_PREFIX}${server}__${tool}`;
  if (/^[A-Za-z0-9_-]{1,64}$/.test(plain)) return plain;
  const hash = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8);
  return `${plain.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 55)}_${hash}`;
}

/** Keys whose values are data, not schemas: copied as they are. */
const DATA_KEYS = new Set(['enum', 'const', 'default', 'examples']);
/** Keys whose values map names to schemas: the names are kept, the schemas cleaned. */
const SCHEMA_MAPS = new Set(['properties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * An MCP server's input schema without the regular expressions in it
 * (`pattern`, `patternProperties`, `format`): the arguments are checked
 * against the schema in this process, and they come from the model, which a
 * user can steer; a pattern such as `^(a|aa)+$` would hold the event loop for
 * seconds on a crafted argument. The server checks its own arguments.
 */
export function withoutPatterns(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutPatterns);
  if (schema === null || typeof schema !== 'object') return schema;
  const cleaned: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'patternProperties' || ((key === 'pattern' || key === 'format') && typeof value === 'string')) continue;
    if (DATA_KEYS.has(key)) cleaned[key] = value;
    else if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) {
      cleaned[key] = Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, withoutPatterns(inner)]));
    } else cleaned[key] = withoutPatterns(value);
  }
  return cleaned;
}

/**
 * The tools of the MCP servers (MCP_SERVERS), one agent tool per server
 * tool, with the server's JSON schema, built again when a server's tool list
 * changes. Each call goes to the server's current client; a failure is a
 * tool error with our code, not a failed turn.
 */
@AgentTool()
@Injectable()
export class McpTools implements AgentToolPlugin {
  readonly name = 'mcp';
  readonly promptRules: string[] = [];
  private readonly logger = new Logger('McpTools');

  constructor(private readonly servers: McpServers) {}

  create(): StructuredToolInterface[] {
    const built: StructuredToolInterface[] = [];
    const names = new Set<string>();
    for (const { server, tools } of this.servers.toolsByServer()) {
      for (const info of tools) {
        const name = mcpToolName(server, info.name);
        if (names.has(name)) {
          this.logger.warn(`MCP server ${server}: skipping tool ${info.name}: its agent tool name ${name} is taken`);
          continue;
        }
        names.add(name);
        built.push(
          tool(
            async (args: Record<string, unknown>, config?: RunnableConfig) => {
              const { text, isError } = await this.servers.call(server, info.name, args ?? {}, config?.signal);
              const max = this.servers.maxResultChars;
              const bounded = text.length > max ? `${text.slice(0, max)}\n[truncated: the result had ${text.length} characters, ${max} are shown]` : text;
              return isError ? `The tool reported an error: ${bounded}` : bounded;
            },
            { name, description: info.description || `${info.name} (MCP server ${server})`, schema: withoutPatterns(info.inputSchema) as Record<string, unknown> },
          ) as unknown as StructuredToolInterface,
        );
      }
    }
    this.promptRules.splice(
      0,
      this.promptRules.length,
      ...(built.length ? [`- Tools named ${MCP_TOOL_PREFIX}<server>__<tool> come from external MCP servers; use them when the question needs them.`] : []),
    );
    return built;
  }

  toolsVersion(): number {
    return this.servers.toolsVersion;
  }
}
