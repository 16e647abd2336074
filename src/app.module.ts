import { DynamicModule, Module, ValidationPipe } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module';
import { CacheModule } from './cache/cache.module';
import { HttpExceptionFilter } from './common/http-exception.filter';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { HealthModule } from './health/health.module';
import { SessionModule } from './session/session.module';
import { TraceModule } from './trace/trace.module';

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
  /** `config` overrides the environment (tests, benches). */
  static forRoot(config?: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        CacheModule,
        AuthModule,
        TraceModule,
        SessionModule,
        HealthModule,
      ],
      providers: globalEnhancers,
    };
  }
}
