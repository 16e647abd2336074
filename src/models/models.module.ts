import { Module } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { createChatModel } from './chat-models.js';
import { FAST_MODEL, MAIN_MODEL, SAMPLED_MAIN_MODEL } from './model-tokens.js';
import type { ModelSampling, SampledModelFactory } from './sampling.js';

/** The shared main and fast models, one instance each for the whole application, and the main model with a request's sampling. */
@Module({
  providers: [
    { provide: MAIN_MODEL, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createChatModel(config, 'main') },
    { provide: FAST_MODEL, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createChatModel(config, 'fast') },
    {
      provide: SAMPLED_MAIN_MODEL,
      inject: [APP_CONFIG],
      useFactory:
        (config: AppConfig): SampledModelFactory =>
        (sampling: ModelSampling) =>
          createChatModel(config, 'main', sampling),
    },
  ],
  exports: [MAIN_MODEL, FAST_MODEL, SAMPLED_MAIN_MODEL],
})
export class ModelsModule {}
