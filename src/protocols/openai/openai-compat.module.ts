import { Module, OnModuleInit } from '@nestjs/common';
import { ChatModule } from '../../chat/chat.module.js';
import { registerErrorBodyFormat } from '../../common/http-exception.filter.js';
import { OpenAiCompatController } from './openai-compat.controller.js';
import { openAiErrorBody } from './openai-errors.js';

/** The OpenAI-compatible routes (`/v1/models`, `/v1/chat/completions`). */
@Module({
  imports: [ChatModule],
  controllers: [OpenAiCompatController],
})
export class OpenAiCompatModule implements OnModuleInit {
  onModuleInit(): void {
    // Every error of a /v1 route, auth, rate limit and body parsing included, answers in the OpenAI shape.
    registerErrorBodyFormat('/v1/', openAiErrorBody);
  }
}
