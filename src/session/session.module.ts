import { Module } from '@nestjs/common';
import { TraceModule } from '../trace/trace.module.js';
import { ConversationStorage } from './conversation-storage.service.js';
import { SessionController } from './session.controller.js';

@Module({
  imports: [TraceModule],
  controllers: [SessionController],
  providers: [ConversationStorage],
  exports: [ConversationStorage],
})
export class SessionModule {}
