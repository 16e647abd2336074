/** MCP servers whose tools the agent may call. */
import { z } from 'zod';
import { integer } from './values.js';

/** A server's name: it becomes part of tool names `mcp__<server>__<tool>`, which OpenAI caps at 64 characters of [A-Za-z0-9_-]. */
const SERVER_NAME = /^[A-Za-z0-9][A-Za-z0-9-]{0,23}$/;

const server = z
  .object({
    name: z.string().regex(SERVER_NAME, 'name must be 1 to 24 letters, digits or - (it becomes part of tool names)'),
    transport: z.enum(['stdio', 'http']),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).max(100).optional(),
    env: z.record(z.string(), z.string()).optional(),
    url: z
      .string()
      .regex(/^https?:\/\/.+/, 'url must be an http(s) URL')
      .optional(),
    headers: z.record(z.string(), z.string()).optional(),
    timeout_ms: z.number().int().min(100).max(600000).default(30000),
    tools: z.array(z.string().min(1)).optional(),
  })
  .strict()
  .refine((s) => (s.transport === 'stdio' ? !!s.command && !s.url : !!s.url && !s.command), {
    message: 'a stdio server needs command (and no url); an http server needs url (and no command)',
  });

export type McpServerConfig = z.output<typeof server>;

const servers = z.array(server).refine((list) => new Set(list.map((s) => s.name)).size === list.length, { message: 'server names must be unique' });

export const mcp = {
  MCP_SERVERS: z
    .string()
    .default('[]')
    .transform((text, context): McpServerConfig[] => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        context.addIssue({ code: 'custom', message: 'must be a JSON array of MCP servers' });
        return z.NEVER;
      }
      const result = servers.safeParse(parsed);
      if (!result.success) {
        for (const issue of result.error.issues) context.addIssue({ code: 'custom', message: `${issue.path.join('.') || 'value'}: ${issue.message}` });
        return z.NEVER;
      }
      return result.data;
    })
    .describe('JSON array of MCP servers whose tools the agent may call: `{name, transport: "stdio"|"http", command?, args?, env?, url?, headers?, timeout_ms?, tools?}`'),
  MCP_MAX_RESULT_CHARS: integer(100, 1000000).default(20000).describe('longest MCP tool result the model sees (longer ones are truncated)'),
};
