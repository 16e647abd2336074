import { Inject, Injectable, Logger } from '@nestjs/common';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { clip } from '../common/text.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { FAST_MODEL, modelIdentity } from '../models/chat-models.js';
import { Metrics } from '../observability/metrics.js';
import { reportedTokens, traceModelCall } from '../observability/spans.js';
import { SessionReads } from '../session/session-reads.service.js';
import { SessionWrites } from '../session/session-writes.service.js';

/** Session metadata keys that hold the rolling summary. */
export const SUMMARY_KEY = 'summary';
export const SUMMARY_UPTO_KEY = 'summary_upto_seq';

const SUMMARY_MAX_CHARS = 2000;

/**
 * Keeps the model's view of a long conversation bounded: the most recent
 * CHAT_RECENT_MESSAGES messages verbatim, everything older folded by the fast
 * model into a summary kept in the session's metadata. Each fold covers only
 * the messages that left the window since the last one, so its cost does not
 * grow with the conversation.
 */
@Injectable()
export class ConversationSummaryService {
  private readonly logger = new Logger(ConversationSummaryService.name);
  /** Folds of one session run one after another, each on the metadata the previous one left. */
  private readonly chains = new Map<string, Promise<boolean>>();

  constructor(
    @Inject(FAST_MODEL) private readonly fastModel: BaseChatModel,
    private readonly storage: SessionReads,
    private readonly sessionWrites: SessionWrites,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  static read(metadata: Record<string, unknown>): { summary?: string; upto: number } {
    const summary = typeof metadata[SUMMARY_KEY] === 'string' ? (metadata[SUMMARY_KEY] as string) : undefined;
    const upto = Number.isInteger(metadata[SUMMARY_UPTO_KEY]) ? (metadata[SUMMARY_UPTO_KEY] as number) : 0;
    return { summary, upto };
  }

  /** Folds messages that left the window into the summary, once half a window has accumulated. */
  maybeFold(userId: string, sessionId: string, messageCount: number): Promise<boolean> {
    const previous = this.chains.get(sessionId) ?? Promise.resolve(false);
    const next = previous.then(() => this.fold(userId, sessionId, messageCount));
    this.chains.set(sessionId, next);
    void next.finally(() => {
      if (this.chains.get(sessionId) === next) this.chains.delete(sessionId);
    });
    return next;
  }

  private async fold(userId: string, sessionId: string, messageCount: number): Promise<boolean> {
    const window = this.config.chat.recentMessages;
    const metadata = await this.storage.sessionMetadata(userId, sessionId).catch(() => null);
    if (!metadata) return false;
    const { summary, upto } = ConversationSummaryService.read(metadata);
    const foldTo = messageCount - window;
    if (foldTo - upto < Math.max(2, Math.floor(window / 2))) return false;
    try {
      const older = await this.storage.getMessageRange(userId, sessionId, upto, foldTo);
      const transcript = older.map((m) => `${m.type}: ${clip(m.content.replace(/\s+/g, ' '), 400)}`).join('\n');
      const prompt = [
        new SystemMessage(
          'Update the running summary of a conversation with the new lines. Keep facts, names, numbers and open questions; ' +
            'write in the language of the conversation; at most 150 words.',
        ),
        new HumanMessage(`${summary ? `Summary so far:\n${summary}\n\n` : ''}New lines:\n${transcript}`),
      ];
      const identity = modelIdentity(this.config.llm, 'fast');
      const response = await this.metrics.modelCall(
        { operation: 'chat', ...identity },
        () => traceModelCall({ ...identity, messages: prompt }, () => this.fastModel.invoke(prompt)),
        reportedTokens,
      );
      const text = typeof response.content === 'string' ? response.content : JSON.stringify(response.content);
      // Keep the newest part when a summary outgrows its budget.
      const merged = text.length > SUMMARY_MAX_CHARS ? `…${text.slice(-SUMMARY_MAX_CHARS + 1)}` : text;
      await this.sessionWrites.mergeMetadata(userId, sessionId, { [SUMMARY_KEY]: merged, [SUMMARY_UPTO_KEY]: foldTo });
      return true;
    } catch (error) {
      // The next turn tries again; a missing summary only shortens the model's memory.
      this.logger.warn(`conversation summary not updated: ${(error as Error).message}`);
      return false;
    }
  }
}
