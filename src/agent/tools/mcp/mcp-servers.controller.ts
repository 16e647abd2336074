import { Controller, Get } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import type { AuthUser } from '../../../auth/auth-user.js';
import { CurrentUser } from '../../../auth/current-user.decorator.js';
import { ApiErrorResponses } from '../../../common/api-error.responses.js';
import { RequestError } from '../../../common/coded-error.js';
import { McpServers } from './mcp-servers.service.js';

class McpToolView {
  @ApiProperty({ description: "The tool's name on its server; the agent calls it as `mcp__<server>__<tool>`", example: 'echo' })
  name: string;

  @ApiProperty({ description: "The server's description of the tool" })
  description: string;
}

class McpServerViewDto {
  @ApiProperty({ example: 'everything' })
  name: string;

  @ApiProperty({ enum: ['stdio', 'http'] })
  transport: 'stdio' | 'http';

  @ApiProperty({ enum: ['starting', 'up', 'down', 'restarting'], description: '`down`: did not start, tried again with backoff; `restarting`: died, being restarted' })
  status: 'starting' | 'up' | 'down' | 'restarting';

  @ApiProperty({ description: 'Start attempts since the server was last up (0 while it is up)' })
  attempts: number;

  @ApiProperty({ description: 'Times the server stopped (died, or lost its connection) and was started again since the service started' })
  restarts: number;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'When the next start is due while the server is down or restarting (its backoff grows while it keeps dying within 30 s of coming up); null otherwise',
  })
  next_attempt_at: string | null;

  @ApiProperty({ type: String, nullable: true, description: 'Why the server last failed to start or stopped' })
  last_error: string | null;

  @ApiProperty({ type: [McpToolView], description: 'The tools the agent may call (as listed by the server, after the `tools` allow-list; invalid ones skipped)' })
  tools: McpToolView[];
}

@ApiTags('agent')
@ApiBearerAuth()
@ApiErrorResponses(401, 403)
@Controller('api/mcp')
export class McpServersController {
  constructor(private readonly servers: McpServers) {}

  @Get('servers')
  @ApiOperation({ summary: 'The MCP servers of MCP_SERVERS, their status and tools (administrators only)' })
  @ApiOkResponse({ type: [McpServerViewDto], description: 'The servers, in the order of MCP_SERVERS' })
  list(@CurrentUser() user: AuthUser): McpServerViewDto[] {
    if (!user.isAdmin) throw new RequestError('forbidden', 'Only administrators (token role "admin") may list the MCP servers');
    return this.servers.list();
  }
}
