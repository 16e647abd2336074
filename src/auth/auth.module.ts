import { createSecretKey } from 'node:crypto';
import { Global, Logger, Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { JwtModule } from '@nestjs/jwt';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { ApiKeyController } from './api-keys/api-key.controller.js';
import { ApiKey } from './api-keys/api-key.entity.js';
import { ApiKeyService } from './api-keys/api-key.service.js';
import { IdentityTokenVerifier } from './identity-token.verifier.js';
import { JwtAuthGuard } from './jwt-auth.guard.js';
import { StreamTicketService } from './stream-ticket.service.js';

@Global()
@Module({
  imports: [
    TypeOrmModule.forFeature([ApiKey]),
    JwtModule.registerAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => {
        if (config.auth.usingDevelopmentSecret) {
          new Logger('Auth').warn(
            'JWT_SECRET is not set: using the fixed DEVELOPMENT secret. Anyone can mint tokens. ' +
              'Set JWT_SECRET before exposing this service (NODE_ENV=production refuses to start without it).',
          );
        }
        // A key object made once: given the secret as a string, jsonwebtoken first tries (and fails) to parse it as a
        // public key on every verify, which cost about a third of an authenticated request's CPU.
        const key = createSecretKey(Buffer.from(config.auth.jwtSecret, 'utf8'));
        return {
          secretOrKeyProvider: () => key,
          signOptions: { algorithm: 'HS256' },
          verifyOptions: { algorithms: ['HS256'] },
        };
      },
    }),
  ],
  controllers: [ApiKeyController],
  providers: [StreamTicketService, IdentityTokenVerifier, ApiKeyService, { provide: APP_GUARD, useClass: JwtAuthGuard }],
  exports: [JwtModule, StreamTicketService],
})
export class AuthModule {}
