import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { TraceModule } from '../trace/trace.module.js';
import { ChatMessage } from './chat-message.entity.js';
import { ChatSession } from './chat-session.entity.js';
import { MessageRepository } from './message.repository.js';
import { SessionController } from './session.controller.js';
import { SessionReads } from './session-reads.service.js';
import { SessionRepository } from './session.repository.js';
import { SessionThreadRepository } from './session-thread.repository.js';
import { SessionThreads } from './session-threads.service.js';
import { SessionWrites } from './session-writes.service.js';

@Module({
  imports: [TraceModule, TypeOrmModule.forFeature([ChatSession, ChatMessage])],
  controllers: [SessionController],
  providers: [SessionRepository, MessageRepository, SessionReads, SessionWrites, SessionThreadRepository, SessionThreads],
  exports: [SessionReads, SessionWrites, SessionThreads],
})
export class SessionModule {}
