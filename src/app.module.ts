import { DynamicModule, Module, ValidationPipe } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module.js';
import { DevTokenModule } from './auth/dev-token.controller.js';
import { ChatModule } from './chat/chat.module.js';
import { AiSdkModule } from './protocols/ai-sdk/ai-sdk.module.js';
import { OpenAiCompatModule } from './protocols/openai/openai-compat.module.js';
import { LangGraphModule } from './protocols/langgraph/langgraph.module.js';
import { McpModule } from './protocols/mcp/mcp.module.js';
import { CacheModule } from './cache/cache.module.js';
import { HttpExceptionFilter } from './common/http-exception.filter.js';
import { AppConfig, loadConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { EXTENSION_MODULES, type ExtensionModules } from './extensions/index.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './observability/metrics.js';
import { KnowledgeModule } from './knowledge/knowledge.module.js';
import { RateLimitModule } from './rate-limit/rate-limit.module.js';
import { SessionModule } from './session/session.module.js';
import { TraceModule } from './trace/trace.module.js';
import { WebClientModule } from './web-client.module.js';

/** Global enhancers live here, in one place. */
const globalEnhancers = [
  {
    provide: APP_PIPE,
    useValue: new ValidationPipe({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      stopAtFirstError: false,
    }),
  },
  { provide: APP_FILTER, useClass: HttpExceptionFilter },
];

@Module({})
export class AppModule {
  /** `config` overrides the environment (tests, benches); `extensions` the modules of src/extensions/index.ts. */
  static forRoot(config?: AppConfig, extensions: ExtensionModules = EXTENSION_MODULES): DynamicModule {
    const settings = config ?? loadConfig();
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(settings),
        MetricsModule,
        DatabaseModule,
        CacheModule,
        AuthModule,
        RateLimitModule,
        TraceModule,
        SessionModule,
        KnowledgeModule,
        ChatModule,
        AiSdkModule,
        OpenAiCompatModule,
        LangGraphModule,
        McpModule,
        HealthModule,
        ...extensions,
        // Development only, and only with the development secret (a deployment that set JWT_SECRET but forgot
        // NODE_ENV=production must not mint tokens for anyone): "sign in as" for the web client.
        ...(settings.nodeEnv === 'development' && settings.auth.usingDevelopmentSecret ? [DevTokenModule] : []),
        // Last: its catch-all page route must not shadow the API's.
        WebClientModule.forRoot(settings),
      ],
      providers: globalEnhancers,
    };
  }
}
