import { DynamicModule, Inject, Logger, Module, OnModuleInit } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost } from '@nestjs/core';
import { ExpressLoader, type ServeStaticModuleOptions } from '@nestjs/serve-static';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppConfig } from './config/app-config.js';

/** web/dist, from src/ (tests) or dist/ (the built service) alike. */
export const WEB_CLIENT_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'web', 'dist');

/** The API's own paths: never answered with the page, so an unknown API route stays a JSON 404. */
const API_PATHS = /^\/(api|v1|docs|docs-json|health)(\/|$)/;

/**
 * Content-Security-Policy of the page: its own scripts only, no inline
 * script, no plug-ins, no framing; it may call the API on any origin it was
 * built for (VITE_API_BASE) — that origin's CORS_ORIGINS decides.
 */
const PAGE_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  'connect-src *',
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const WEB_CLIENT_OPTIONS = Symbol('WEB_CLIENT_OPTIONS');

function pageOptions(): ServeStaticModuleOptions {
  return {
    rootPath: WEB_CLIENT_DIR,
    exclude: API_PATHS,
    serveStaticOptions: {
      index: 'index.html',
      setHeaders: (res: { setHeader(name: string, value: string): void }, file: string) => {
        res.setHeader('X-Content-Type-Options', 'nosniff');
        if (file.endsWith('.html')) {
          res.setHeader('Content-Security-Policy', PAGE_POLICY);
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
