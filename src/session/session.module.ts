import { Module } from '@nestjs/common';
import { TraceModule } from '../trace/trace.module';
import { ConversationStorage } from './conversation-storage.service';
import { SessionController } from './session.controller';

@Module({
  imports: [TraceModule],
  controllers: [SessionController],
  providers: [ConversationStorage],
  exports: [ConversationStorage],
})
export class SessionModule {}
