import { Module } from '@nestjs/common';
import { ChatModule } from '../../chat/chat.module.js';
import { SessionModule } from '../../session/session.module.js';
import { UiChatController } from './ui-chat.controller.js';

/** The AI SDK's UI message stream protocol (`useChat`) over chat turns. */
@Module({
  imports: [ChatModule, SessionModule],
  controllers: [UiChatController],
})
export class AiSdkModule {}
