import type { SessionThread } from '../../session/session-threads.service.js';
import type { MessageInfo } from '../../session/session.dto.js';
import { interruptOf, LcMessage, LgInterrupt, toLcMessage } from './langgraph-messages.js';

/** The one graph this service serves, and its assistant's id: uuid5("agent", the URL namespace), as the LangGraph servers derive it. */
export const GRAPH_ID = 'agent';
export const ASSISTANT_ID = 'fe096781-5601-53d2-b2f6-0d3403f7e9ca';

export interface LgCheckpoint {
  thread_id: string;
  checkpoint_ns: '';
  checkpoint_id: string;
  checkpoint_map: null;
}

export interface LgTask {
  id: string;
  name: string;
  path: string[];
  error: string | null;
  interrupts: LgInterrupt[];
  checkpoint: null;
  state: null;
  result: null;
}

export interface LgThreadState {
  values: { messages?: LcMessage[] };
  next: string[];
  tasks: LgTask[];
  checkpoint: LgCheckpoint | null;
  parent_checkpoint: LgCheckpoint | null;
  metadata: Record<string, unknown> | undefined;
  created_at: string | null;
}

const ROOT_CHECKPOINT = '00000000-0000-0000-0000-000000000000';

/**
 * The checkpoint after message `seq`: its first group is the sequence number
 * (so ids sort in conversation order, as the clients expect), the rest comes
 * from the message's own id (so a sequence number reused after a rollback
 * names a new checkpoint).
 */
export function checkpointIdOf(message: MessageInfo | null): string {
  if (!message) return ROOT_CHECKPOINT;
  return `${message.seq.toString(16).padStart(8, '0')}${message.id.slice(8)}`;
}

/** The sequence number a checkpoint id names, when it names one of these messages (0: before the first); null otherwise. */
export function seqOfCheckpoint(checkpointId: string, messages: readonly MessageInfo[]): number | null {
  if (checkpointId === ROOT_CHECKPOINT) return 0;
  const match = /^([0-9a-f]{8})-/.exec(checkpointId);
  if (!match) return null;
  const seq = parseInt(match[1], 16);
  const message = messages.find((m) => m.seq === seq);
  return message && checkpointIdOf(message) === checkpointId ? seq : null;
}

/** The most messages a history answer repeats across its states; older states are left out past it (newest come first). */
export const HISTORY_MESSAGE_BUDGET = 20_000;

/**
 * The thread's states: one after each message, and the empty one before the first (none for a thread without
 * messages). Built on demand, since each state holds every message before it: `at(i)` is the state after the
 * first `i` messages, `head()` the latest, `newestFirst(limit, beforeId)` a page of the history.
 */
export class ThreadStates {
  private readonly lcMessages: LcMessage[];

  constructor(
    private readonly thread: SessionThread,
    private readonly messages: readonly MessageInfo[],
    withTraces = true,
  ) {
    this.lcMessages = messages.map((message) => toLcMessage(message, withTraces));
  }

  get count(): number {
    return this.messages.length === 0 ? 0 : this.messages.length + 1;
  }

  head(): LgThreadState {
    return this.count === 0 ? EMPTY_STATE : this.at(this.messages.length);
  }

  /** The states before the one named `beforeId` (all without it), newest first, at most `limit` and HISTORY_MESSAGE_BUDGET messages in all. */
  newestFirst(limit: number, beforeId?: string): LgThreadState[] {
    let from = this.count - 1;
    if (beforeId !== undefined) {
      const seq = seqOfCheckpoint(beforeId, this.messages);
      from = seq === null ? -1 : seq - 1;
    }
    const states: LgThreadState[] = [];
    let budget = HISTORY_MESSAGE_BUDGET;
    for (let i = from; i >= 0 && states.length < limit && (states.length === 0 || budget >= i); i -= 1) {
      states.push(this.at(i));
      budget -= i;
    }
    return states;
  }

  /** The state after the first `i` messages (0: the empty root); the head carries a paused question as its task. */
  at(i: number): LgThreadState {
    const { thread, messages } = this;
    const last = i === 0 ? null : messages[i - 1];
    const state: LgThreadState = {
      values: { messages: this.lcMessages.slice(0, i) },
      next: [],
      tasks: [],
      checkpoint: this.checkpoint(last),
      parent_checkpoint: i === 0 ? null : this.checkpoint(i === 1 ? null : messages[i - 2]),
      metadata: { source: i === 0 ? 'input' : 'loop', step: i - 1, parents: {}, run_id: last?.run_id ?? null, graph_id: GRAPH_ID, assistant_id: ASSISTANT_ID },
      created_at: last?.timestamp ?? thread.created_at.toISOString(),
    };
    if (i === messages.length && thread.status === 'interrupted' && thread.pending_hitl) {
      // The paused task: the only place a client finds the interrupt once the run's stream has closed.
      state.next = [GRAPH_ID];
      state.tasks = [
        {
          id: thread.pending_hitl.task_id ?? 'pending',
          name: GRAPH_ID,
          path: ['__pregel_pull', GRAPH_ID],
          error: null,
          interrupts: [interruptOf(thread.pending_hitl)],
          checkpoint: null,
          state: null,
          result: null,
        },
      ];
    }
    return state;
  }

  private checkpoint(message: MessageInfo | null): LgCheckpoint {
    return { thread_id: this.thread.session_id, checkpoint_ns: '', checkpoint_id: checkpointIdOf(message), checkpoint_map: null };
  }
}

/** The state of a thread without messages. */
export const EMPTY_STATE: LgThreadState = { values: {}, next: [], tasks: [], checkpoint: null, parent_checkpoint: null, metadata: undefined, created_at: null };

/** A thread as the API answers it (its messages without their traces in a list of threads: `withTraces`). */
export function threadOf(thread: SessionThread, messages: readonly MessageInfo[] | null, withTraces = true): Record<string, unknown> {
  const interrupt = thread.status === 'interrupted' && thread.pending_hitl ? interruptOf(thread.pending_hitl) : null;
  return {
    thread_id: thread.session_id,
    created_at: thread.created_at.toISOString(),
    updated_at: thread.updated_at.toISOString(),
    state_updated_at: thread.updated_at.toISOString(),
    metadata: thread.client_metadata,
    status: thread.status,
    config: {},
    values: messages && messages.length > 0 ? { messages: messages.map((message) => toLcMessage(message, withTraces)) } : null,
    interrupts: interrupt ? { [interrupt.id]: [interrupt] } : {},
    error: null,
  };
}
