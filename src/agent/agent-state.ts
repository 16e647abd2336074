import { Annotation, MessagesAnnotation } from '@langchain/langgraph';
import type { HitlResumeState, RagTrace } from '../trace/trace.protocol.js';

/** The question a paused run puts to the user (the interrupt's value, the `hitl` event's fields before the chat adds its own). */
export type HitlQuestion = Record<string, unknown> & {
  original_question: string;
  clarification_prompt: string;
  retrieval_status?: string;
  /** With a choice: the documents' titles, and parallel to them each one's file. */
  options?: string[];
  option_sources?: string[];
};

/**
 * A knowledge search paused for the user (human in the loop): the question,
 * what resuming reuses, and the user's answers so far. `waiting` while the
 * question has no answer yet.
 */
export interface HitlState {
  question: HitlQuestion;
  resumeState: HitlResumeState | null;
  supplements: string[];
  waiting: boolean;
}

/**
 * What a tool hands the tools node besides its answer to the model (the
 * ToolMessage's `artifact`): its trace, and a question for the user instead
 * of an answer. The tools node moves both into the graph state and keeps
 * neither in the message.
 */
export interface AgentToolArtifact {
  /** Normalized and validated by the tools node (RagTrace). */
  trace?: Record<string, unknown>;
  /** `resumeState` is normalized by the tools node (HitlResumeState). */
  pause?: { question: HitlQuestion; resumeState: Record<string, unknown> | null };
}

const latest = <T>(_previous: T, next: T): T => next;

/**
 * The agent graph's state. Besides the conversation, the channels a later
 * turn or the chat service reads back, kept by the checkpointer with the
 * run: the trace of the turn's knowledge search, and a paused search.
 */
export const AgentState = Annotation.Root({
  ...MessagesAnnotation.spec,
  ragTrace: Annotation<RagTrace | null>({ reducer: latest, default: () => null }),
  hitl: Annotation<HitlState | null>({ reducer: latest, default: () => null }),
});

export type AgentStateValues = typeof AgentState.State;
