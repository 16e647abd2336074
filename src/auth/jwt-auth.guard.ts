import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { JwtService, TokenExpiredError } from '@nestjs/jwt';
import type { Request } from 'express';
import { AuthUser, RequestWithUser } from './auth-user.js';
import { IS_PUBLIC } from './public.decorator.js';

interface TokenClaims {
  sub?: unknown;
  role?: unknown;
}

const MAX_USER_ID_LENGTH = 128;

/** Global guard: every route needs `Authorization: Bearer <HS256 JWT>` unless marked @Public(). */
@Injectable()
export class JwtAuthGuard implements CanActivate {
  constructor(
    private readonly jwt: JwtService,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const isPublic = this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, [
      context.getHandler(),
      context.getClass(),
    ]);
    if (isPublic) return true;
    const request = context.switchToHttp().getRequest<Request & RequestWithUser>();
    request.user = await this.authenticate(request.headers.authorization);
    return true;
  }

  private async authenticate(header: string | undefined): Promise<AuthUser> {
    if (!header) throw new UnauthorizedException('Missing Authorization header: send "Bearer <token>"');
    const [scheme, token, ...rest] = header.trim().split(/\s+/);
    if (scheme?.toLowerCase() !== 'bearer' || !token || rest.length > 0) {
      throw new UnauthorizedException('Malformed Authorization header: send "Bearer <token>"');
    }
    let claims: TokenClaims;
    try {
      claims = await this.jwt.verifyAsync<TokenClaims & object>(token, { algorithms: ['HS256'] });
    } catch (error) {
      if (error instanceof TokenExpiredError) throw new UnauthorizedException('Token expired');
      throw new UnauthorizedException('Invalid token: signature or format rejected');
    }
    if (typeof claims.sub !== 'string' || claims.sub.length === 0 || claims.sub.length > MAX_USER_ID_LENGTH) {
      throw new UnauthorizedException('Invalid token: "sub" must name the user');
    }
    return { userId: claims.sub, isAdmin: claims.role === 'admin' };
  }
}
