import { DynamicModule, Inject, Logger, Module, OnModuleInit } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost } from '@nestjs/core';
import { ExpressLoader, type ServeStaticModuleOptions } from '@nestjs/serve-static';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SAME_ORIGIN_PAGE_POLICY } from './common/page-policy.js';
import type { AppConfig } from './config/app-config.js';

/** web/dist, from src/ (tests) or dist/ (the built service) alike. */
export const WEB_CLIENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'web', 'dist');

/** The API's own paths (matched as Express routes them: case-insensitively), and the page's assets: never answered with the page. */
const NOT_PAGE_PATHS = /^\/+(api|v1|docs|docs-json|health|metrics|langgraph|mcp|\.well-known|assets)(\/|$)/i;

/**
 * The paths the page answers (its client routes): plain paths only. Anything
 * with a percent-escape, a repeated slash or under an API prefix falls
 * through to Nest, so an unknown API route — however it is spelt — stays a
 * JSON 404, and a missing asset is a 404 rather than the page.
 */
const PAGE_PATHS = /^\/(?!\/)(?!(?:api|v1|docs|docs-json|health|metrics|langgraph|mcp|\.well-known|assets)(?:\/|$))[A-Za-z0-9._~\-/]*$/i;

const WEB_CLIENT_OPTIONS = Symbol('WEB_CLIENT_OPTIONS');

function pageOptions(): ServeStaticModuleOptions {
  return {
    rootPath: WEB_CLIENT_DIR,
    renderPath: PAGE_PATHS,
    exclude: NOT_PAGE_PATHS,
    serveStaticOptions: {
      index: 'index.html',
      setHeaders: (res: { setHeader(name: string, value: string): void }, file: string) => {
        res.setHeader('X-Content-Type-Options', 'nosniff');
        if (file.endsWith('.html')) {
          res.setHeader('Content-Security-Policy', SAME_ORIGIN_PAGE_POLICY);
          res.setHeader('Cache-Control', 'no-cache');
        } else if (file.includes(`${path.sep}assets${path.sep}`)) {
          res.setHeader('Cache-Control', 'public, max-age=31536000, immutable'); // content-hashed names
        }
      },
    },
  };
}

/**
 * Serves the reference web client at `/` (WEB_CLIENT_ENABLED), when it was
 * built, with @nestjs/serve-static's Express loader. The loader is run here,
 * at module init, rather than through ServeStaticModule, which picks its
 * loader when its providers are built: in a testing module that is before
 * the HTTP adapter exists, and it then serves nothing.
 */
@Module({})
export class WebClientModule implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly applicationConfig: ApplicationConfig,
    @Inject(WEB_CLIENT_OPTIONS) private readonly options: ServeStaticModuleOptions | null,
  ) {}

  static forRoot(config: AppConfig): DynamicModule {
    let options: ServeStaticModuleOptions | null = null;
    if (config.webClientEnabled && !existsSync(path.join(WEB_CLIENT_DIR, 'index.html'))) {
      new Logger('WebClient').warn(`WEB_CLIENT_ENABLED but ${WEB_CLIENT_DIR} has no build: run npm run build; / is not served`);
    } else if (config.webClientEnabled) {
      options = pageOptions();
    }
    return { module: WebClientModule, providers: [{ provide: WEB_CLIENT_OPTIONS, useValue: options }] };
  }

  onModuleInit(): void {
    const adapter = this.adapterHost.httpAdapter;
    if (this.options && adapter) new ExpressLoader().register(adapter, this.applicationConfig, [this.options]);
  }
}
