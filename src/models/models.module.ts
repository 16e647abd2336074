import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { createChatModel } from './chat-models.js';
import { FAST_MODEL, MAIN_MODEL } from './model-tokens.js';

/** The shared main and fast models, one instance each for the whole application. */
@Module({
  providers: [
    { provide: MAIN_MODEL, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createChatModel(config, 'main') },
    { provide: FAST_MODEL, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createChatModel(config, 'fast') },
  ],
  exports: [MAIN_MODEL, FAST_MODEL],
})
export class ModelsModule {}
