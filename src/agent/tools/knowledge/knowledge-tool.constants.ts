export const KNOWLEDGE_TOOL_NAME = 'knowledge_search';
export const KNOWLEDGE_BUDGET_SPENT = 'The knowledge base was already searched in this turn (one search per turn). Answer from the passages already retrieved.';
/** Knowledge retrievals allowed per turn. */
export const KNOWLEDGE_TOOL_BUDGET = 1;
/** Clarification rounds before the turn answers with what it has. */
export const MAX_HITL_ROUNDS = 2;

/** The tool's answer to the model: the passages, as JSON. */
export interface KnowledgeToolOutput {
  query: string;
  chunks: Array<{ source: string; page: number | null; text: string; score: number }>;
}
