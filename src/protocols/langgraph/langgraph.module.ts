import { Module } from '@nestjs/common';
import { AgentModule } from '../../agent/agent.module.js';
import { ChatModule } from '../../chat/chat.module.js';
import { SessionModule } from '../../session/session.module.js';
import { LangGraphAssistantsController, LangGraphRefusedController } from './langgraph-assistants.controller.js';
import { LangGraphRunsController } from './langgraph-runs.controller.js';
import { LangGraphRuns } from './langgraph-runs.service.js';
import { LangGraphThreadsController } from './langgraph-threads.controller.js';
import { PendingRunRepository } from './pending-run.repository.js';

/** The LangGraph Server API at /langgraph, for the LangGraph SDK, useStream, agent-chat-ui and Studio: threads are sessions, runs are turns. */
@Module({
  imports: [AgentModule, ChatModule, SessionModule],
  controllers: [LangGraphAssistantsController, LangGraphThreadsController, LangGraphRunsController, LangGraphRefusedController],
  providers: [LangGraphRuns, PendingRunRepository],
})
export class LangGraphModule {}
