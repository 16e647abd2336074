import { Body, Controller, HttpCode, Inject, Module, Post } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { ApiOkResponse, ApiOperation, ApiProperty, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { Public } from './public.decorator.js';
import { groupNameProblem, MAX_GROUP_NAME_LENGTH, MAX_GROUPS } from './groups.js';
import { userIdProblem } from './user-id.js';
import { RequestError } from '../common/coded-error.js';

export class DevTokenRequest {
  @ApiProperty({ description: "The user id (the token's sub)", example: 'alice' })
  @IsString()
  @MaxLength(128)
  sub: string;

  @ApiPropertyOptional({ enum: ['user', 'admin'], default: 'user' })
  @IsOptional()
  @IsIn(['user', 'admin'])
  role?: 'user' | 'admin';

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_GROUPS,
    example: ['finance'],
    description: 'The groups the token names (in the JWT_GROUPS_CLAIM claim), for collections shared with `group:<name>`',
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_GROUPS)
  @IsString({ each: true })
  @MaxLength(MAX_GROUP_NAME_LENGTH, { each: true })
  groups?: string[];
}

export class DevTokenResponse {
  @ApiProperty({ description: 'An HS256 bearer token for that user, valid 8 hours (or JWT_MAX_LIFETIME_SECONDS, when shorter)' })
  token: string;
}

/** Lifetime of a development token, at most JWT_MAX_LIFETIME_SECONDS. */
const DEV_TOKEN_TTL_SECONDS = 8 * 3600;

/**
 * `POST /api/dev/token`: a token for any user id, for the web client's
 * "sign in as" box. Only NODE_ENV=development without JWT_SECRET registers
 * it (app.module.ts): anyone may mint tokens then anyway (the development
 * secret is public); in production, in test, or with a secret of its own
 * the route does not exist.
 */
@ApiTags('development')
@Controller('api/dev')
export class DevTokenController {
  constructor(
    private readonly jwt: JwtService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('token')
  @Public()
  @HttpCode(200)
  @ApiOperation({ summary: 'Development only: mint a token for any user id (absent outside NODE_ENV=development)' })
  @ApiOkResponse({ type: DevTokenResponse })
  mint(@Body() body: DevTokenRequest): DevTokenResponse {
    const problem = userIdProblem(body.sub);
    if (problem) throw new RequestError('invalid_request', `sub ${problem}`);
    for (const group of body.groups ?? []) {
      const groupProblem = groupNameProblem(group);
      if (groupProblem) throw new RequestError('invalid_request', `groups: ${JSON.stringify(group).slice(0, 40)} ${groupProblem}`);
    }
    const expiresIn = Math.min(DEV_TOKEN_TTL_SECONDS, this.config.auth.maxTokenLifetimeSeconds);
    const claims: Record<string, unknown> = { sub: body.sub, role: body.role ?? 'user' };
    // Written where the guard reads them: a dot path is a nested claim.
    if (body.groups?.length) setClaim(claims, this.config.groups.claim, [...new Set(body.groups)]);
    return { token: this.jwt.sign(claims, { algorithm: 'HS256', expiresIn }) };
  }
}

/** Sets the claim at a dot path (`realm_access.groups` → {realm_access: {groups}}), as claimAt reads it. */
function setClaim(claims: Record<string, unknown>, path: string, value: unknown): void {
  const segments = path.split('.');
  let target = claims;
  for (const segment of segments.slice(0, -1)) {
    const next = Object.hasOwn(target, segment) ? target[segment] : undefined;
    target = (target[segment] = next !== null && typeof next === 'object' ? next : {}) as Record<string, unknown>;
  }
  target[segments[segments.length - 1]] = value;
}

@Module({ controllers: [DevTokenController] })
export class DevTokenModule {}
