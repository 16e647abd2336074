import { BeforeApplicationShutdown, Module } from '@nestjs/common';
import { AgentModule } from '../agent/agent.module.js';
import { AuthModule } from '../auth/auth.module.js';
import { KnowledgeModule } from '../knowledge/public-api.js';
import { DrainStateModule } from '../common/drain-state.js';
import { SessionModule } from '../session/session.module.js';
import { TraceModule } from '../trace/trace.module.js';
import { ChatController } from './chat.controller.js';
import { ChatService } from './chat.service.js';
import { ConversationSummaryService } from './conversation-summary.service.js';
import { RunCancellation } from './run-cancellation.service.js';
import { RunControl } from './run-control.service.js';
import { RunEventsService } from './run-events.service.js';
import { RunReaper } from './run-reaper.service.js';
import { RunSlots } from './run-slots.service.js';
import { RunRegistry } from './run-registry.service.js';
import { RunRepository } from './run.repository.js';
import { SessionSettingsController } from './session-settings.controller.js';
import { StreamTicketController } from './stream-ticket.controller.js';
import { TurnCommits } from './turn-commits.service.js';
import { TurnAdmissionGuard, TurnDrain } from './turn-drain.service.js';
import { TurnScopes } from './turn-scopes.service.js';
import { TurnSettlement } from './turn-settlement.service.js';

@Module({
  imports: [AgentModule, AuthModule, KnowledgeModule, SessionModule, TraceModule, DrainStateModule],
  controllers: [ChatController, StreamTicketController, SessionSettingsController],
  providers: [
    ChatService,
    RunRepository,
    RunRegistry,
    RunSlots,
    RunEventsService,
    RunCancellation,
    RunControl,
    TurnCommits,
    TurnSettlement,
    ConversationSummaryService,
    RunReaper,
    TurnDrain,
    TurnAdmissionGuard,
    TurnScopes,
  ],
  exports: [ChatService, RunEventsService, RunRegistry, RunControl, TurnDrain, TurnAdmissionGuard, TurnScopes],
})
export class ChatModule implements BeforeApplicationShutdown {
  constructor(
    private readonly chat: ChatService,
    private readonly turns: TurnDrain,
  ) {}

  /**
   * Turns in flight finish (or are ended at the drain's end, their messages kept) and commit before the pools
   * close (they close in onApplicationShutdown); then the rest of the chat work (summaries) finishes.
   */
  async beforeApplicationShutdown(): Promise<void> {
    await this.turns.shutdown();
    await this.chat.drain();
  }
}
