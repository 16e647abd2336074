import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TraceModule } from '../trace/trace.module.js';
import { ChatMessage } from './chat-message.entity.js';
import { ChatSession } from './chat-session.entity.js';
import { ConversationStorage } from './conversation-storage.service.js';
import { SessionController } from './session.controller.js';

@Module({
  imports: [TraceModule, TypeOrmModule.forFeature([ChatSession, ChatMessage])],
  controllers: [SessionController],
  providers: [ConversationStorage],
  exports: [ConversationStorage],
})
export class SessionModule {}
