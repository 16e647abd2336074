import { ArgumentsHost, Catch, Controller, Get, Inject, Injectable, Req } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../../auth/public.decorator.js';
import { CodedError } from '../../common/coded-error.js';
import { HttpExceptionFilter } from '../../common/http-exception.filter.js';
import type { AppConfig } from '../../config/app-config.js';
import { APP_CONFIG } from '../../config/config.module.js';

/** Where the MCP endpoint is served. */
export const MCP_PATH = '/mcp';
/** RFC 9728's well-known path; the path-suffixed form (`…/mcp`) is what MCP clients try first. */
export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource';

/** A Host header fit to put in a URL and a header: a name or address, and a port (anything else was forged). */
const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/** Where clients reach the service: PUBLIC_BASE_URL, else the request's scheme and Host. */
export function publicBaseUrl(config: AppConfig, req: Request): string {
  if (config.http.publicBaseUrl) return config.http.publicBaseUrl;
  const host = req.headers.host;
  return `${req.protocol === 'https' ? 'https' : 'http'}://${host && HOST.test(host) ? host : 'localhost'}`;
}

/** The MCP endpoint's URL: the resource a token is for (RFC 9728 `resource`). */
export function mcpResourceUrl(config: AppConfig, req: Request): string {
  return `${publicBaseUrl(config, req)}${MCP_PATH}`;
}

/** Where its metadata is, in the path-suffixed form of RFC 9728 §3.1 (the base URL's own path kept before the well-known part). */
export function protectedResourceMetadataUrl(config: AppConfig, req: Request): string {
  const base = new URL(publicBaseUrl(config, req));
  const basePath = base.pathname === '/' ? '' : base.pathname;
  return `${base.origin}${PROTECTED_RESOURCE_PATH}${basePath}${MCP_PATH}`;
}

/** The OAuth 2.0 Protected Resource Metadata of /mcp (RFC 9728). */
export interface ProtectedResourceMetadata {
  resource: string;
  authorization_servers?: string[];
  bearer_methods_supported: string[];
  resource_name: string;
  resource_documentation?: string;
}

/**
 * RFC 9728 metadata for MCP clients: which resource /mcp is and which
 * authorization server issues its tokens: the identity provider's issuer
 * (JWT_ISSUER) when one is configured. Without one the service's tokens are
 * its own HS256 tokens and API keys, which no OAuth flow issues: the document
 * is served without `authorization_servers`, and a client sends the token it
 * was configured with. Both the root and the path-suffixed address answer.
 */
@ApiExcludeController()
@Controller()
export class ProtectedResourceController {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  @Public()
  @Get([PROTECTED_RESOURCE_PATH, `${PROTECTED_RESOURCE_PATH}${MCP_PATH}`])
  metadata(@Req() req: Request): ProtectedResourceMetadata {
    const issuer = this.config.auth.identityProvider?.issuer;
    return {
      resource: mcpResourceUrl(this.config, req),
      ...(issuer ? { authorization_servers: [issuer] } : {}),
      bearer_methods_supported: ['header'],
      resource_name: 'Knowledge base (MCP)',
    };
  }
}

/**
 * A Bearer challenge naming the metadata; with `error="invalid_token"` when a
 * credential was sent (RFC 6750 §3.1: none for a request that sent none).
 */
function bearerChallenge(req: Request, message: string, metadataUrl: string): string {
  const resourceMetadata = `resource_metadata="${metadataUrl}"`;
  if (req.headers.authorization === undefined && req.headers['x-api-key'] === undefined) return `Bearer ${resourceMetadata}`;
  // A quoted-string of visible ASCII: the message may quote what the client sent.
  const description = message.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, '?');
  return `Bearer error="invalid_token", error_description="${description}", ${resourceMetadata}`;
}

/**
 * The exception filter of /mcp: the shared one (whose body a registered
 * format turns into a JSON-RPC error), plus the challenge MCP clients look
 * for on a 401 (RFC 6750 and RFC 9728 §5.1): `WWW-Authenticate: Bearer`
 * naming the protected-resource metadata.
 */
@Injectable()
@Catch()
export class McpExceptionFilter extends HttpExceptionFilter {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    super();
  }

  override catch(exception: unknown, host: ArgumentsHost): void {
    if (exception instanceof CodedError && exception.httpStatus === 401) {
      const res = host.switchToHttp().getResponse<Response>();
      const req = host.switchToHttp().getRequest<Request>();
      if (!res.headersSent) res.setHeader('WWW-Authenticate', bearerChallenge(req, exception.message, protectedResourceMetadataUrl(this.config, req)));
    }
    super.catch(exception, host);
  }
}
