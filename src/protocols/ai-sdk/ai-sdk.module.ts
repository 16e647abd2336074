import { Module } from '@nestjs/common';
import { ChatModule } from '../../chat/chat.module.js';
import { SessionModule } from '../../session/session.module.js';
import { UiChatController } from './ui-chat.controller.js';
import { UiSessionIds } from './ui-session-id.js';

/** The AI SDK's UI message stream protocol (`useChat`) over chat turns. */
@Module({
  imports: [ChatModule, SessionModule],
  controllers: [UiChatController],
  providers: [UiSessionIds],
})
export class AiSdkModule {}
