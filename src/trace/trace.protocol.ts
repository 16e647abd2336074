import { decorateFromSpec } from './decorate-from-spec.js';
import { FieldTable, ShapeOf } from './field-spec.js';

/**
 * The RAG trace protocol (protocol.md, "Trace"). Each class is generated from
 * its field table: validation rules, OpenAPI schema, TypeScript shape and
 * normalization all come from the tables below.
 */

/** Bumped when the stored trace shape changes incompatibly; stamped on every normalized trace. */
export const TRACE_PROTOCOL_VERSION = 1;

export const RETRIEVAL_STAGES = ['initial', 'rewrite', 'subquestion_merge', 'hitl'] as const;
export const COMPLEXITIES = ['simple', 'complex'] as const;
export const RECALL_K_SOURCES = ['env', 'multiplier'] as const;
export const GRADE_ROUTES = ['answer', 'clarify'] as const;
export const EVIDENCE_STATUSES = ['sufficient', 'partial', 'needs_clarification', 'needs_choice'] as const;
export const EVIDENCE_RELEVANCES = ['strong', 'weak'] as const;
export const EVIDENCE_ANSWERABILITIES = ['sufficient', 'partial', 'none'] as const;
export const EVIDENCE_AMBIGUITIES = ['missing_condition', 'needs_choice'] as const;
export const REWRITE_MODES = ['step_back', 'hyde'] as const;
export const HITL_ROUTES = ['clarify', 'choose'] as const;
export const HITL_RETRIEVAL_STATUSES = ['needs_clarification', 'needs_choice'] as const;
/** Who answered a judgement: the fast model, the local judge (LLM_PROVIDER=local), or the local judge after the model failed. */
export const JUDGE_SOURCES = ['model', 'local', 'local_fallback'] as const;

export const MAX_SUB_QUESTIONS = 4;
export const MAX_CHUNKS_PER_LIST = 100;

const SHORT = 200;
const MEDIUM = 2000;
const LONG = 8000;

const chunks = (description: string) => ({ kind: 'nested', target: () => RetrievedChunk, many: true, maxItems: MAX_CHUNKS_PER_LIST, description }) as const;

// ---------------------------------------------------------------- ChunkLocation
/** Most headings in a chunk's heading path (markdown has six levels). */
export const MAX_HEADING_PATH = 6;

const CHUNK_LOCATION_TABLE = {
  sheet: { kind: 'string', maxLength: SHORT, description: "The spreadsheet's sheet (absent for a CSV file)" },
  row: { kind: 'int', min: 1, description: 'Row number as the spreadsheet shows it (the header row is usually 1)' },
  heading_path: { kind: 'strings', maxItems: MAX_HEADING_PATH, maxLength: SHORT, description: 'The headings the passage is under, outermost first' },
} as const satisfies FieldTable;

/** Where in its source a chunk came from besides the page: a spreadsheet's sheet and row, or a passage's heading path. */
export class ChunkLocation {
  static readonly fieldTable: FieldTable = CHUNK_LOCATION_TABLE;
  static readonly requiredFields = [] as const;
}
export interface ChunkLocation extends ShapeOf<typeof CHUNK_LOCATION_TABLE> {}
decorateFromSpec(ChunkLocation, CHUNK_LOCATION_TABLE);

// ---------------------------------------------------------------- RetrievedChunk
const RETRIEVED_CHUNK_TABLE = {
  source: { kind: 'string', maxLength: 512, required: true, description: 'Source file name' },
  page: { kind: 'int', min: 0, nullable: true, description: 'Page number in the source, when it has pages' },
  location: {
    kind: 'nested',
    target: () => ChunkLocation,
    many: false,
    nullable: true,
    description: 'Where in the source besides the page: sheet and row of a spreadsheet row, heading path of a passage; null or absent: nothing more',
  },
  text: { kind: 'string', maxLength: LONG, description: 'Chunk text' },
  score: { kind: 'number', nullable: true, description: 'Recall score' },
  rrf_rank: { kind: 'int', min: 1, nullable: true, description: 'Rank after reciprocal rank fusion' },
  fulltext_rank: { kind: 'int', min: 1, nullable: true, description: 'Rank in the full-text recall leg before fusion; null: that leg did not find it' },
  dense_rank: { kind: 'int', min: 1, nullable: true, description: 'Rank in the dense recall leg before fusion; null: that leg did not find it' },
  rerank_score: { kind: 'number', nullable: true, description: 'Score given by the reranker' },
  chunk_id: { kind: 'string', maxLength: SHORT, description: 'Stable id of the chunk' },
  collection_id: {
    kind: 'string',
    maxLength: SHORT,
    description: "Id of the knowledge collection the chunk's document belongs to (absent in traces stored before collections)",
  },
} as const satisfies FieldTable;

export class RetrievedChunk {
  static readonly fieldTable: FieldTable = RETRIEVED_CHUNK_TABLE;
  static readonly requiredFields = ['source'] as const;
}
export interface RetrievedChunk extends ShapeOf<typeof RETRIEVED_CHUNK_TABLE> {}
decorateFromSpec(RetrievedChunk, RETRIEVED_CHUNK_TABLE, RetrievedChunk.requiredFields);

// ---------------------------------------------------------------- PreResumeSnapshot
const PRE_RESUME_SNAPSHOT_TABLE = {
  query: { kind: 'string', maxLength: LONG },
  retrieval_stage: { kind: 'enum', values: RETRIEVAL_STAGES, enumName: 'RetrievalStage' },
  grade_route: { kind: 'enum', values: GRADE_ROUTES, enumName: 'GradeRoute' },
  evidence_status: { kind: 'enum', values: EVIDENCE_STATUSES, enumName: 'EvidenceStatus' },
  grade_reason: { kind: 'string', maxLength: MEDIUM },
  clarification_prompt: { kind: 'string', maxLength: MEDIUM },
  final_chunks: chunks('Evidence held before the user supplement arrived'),
} as const satisfies FieldTable;

/** What retrieval had found when the run paused for the user (kept in `pre_resume_snapshot`). */
export class PreResumeSnapshot {
  static readonly fieldTable: FieldTable = PRE_RESUME_SNAPSHOT_TABLE;
  static readonly requiredFields = [] as const;
}
export interface PreResumeSnapshot extends ShapeOf<typeof PRE_RESUME_SNAPSHOT_TABLE> {}
decorateFromSpec(PreResumeSnapshot, PRE_RESUME_SNAPSHOT_TABLE);

// ---------------------------------------------------------------- RagTraceFields
export const RAG_TRACE_FIELDS_TABLE = {
  // tool and query
  tool_used: { kind: 'bool', description: 'Whether the knowledge tool ran' },
  tool_name: { kind: 'string', maxLength: SHORT },
  query: { kind: 'string', maxLength: LONG, description: 'Query sent to retrieval' },
  query_truncated: { kind: 'bool', description: 'Whether the question was too long to search whole and `query` is its shortened start' },
  query_original_length: { kind: 'int', min: 0, description: 'Length of the question as received (UTF-16 code units)' },
  retrieval_stage: { kind: 'enum', values: RETRIEVAL_STAGES, enumName: 'RetrievalStage' },
  // complexity
  complexity: { kind: 'enum', values: COMPLEXITIES, enumName: 'Complexity' },
  complexity_reason: { kind: 'string', maxLength: MEDIUM },
  sub_questions: { kind: 'strings', maxItems: MAX_SUB_QUESTIONS, maxLength: MEDIUM },
  complexity_judge: { kind: 'enum', values: JUDGE_SOURCES, enumName: 'JudgeSource', description: 'Who judged complexity' },
  complexity_fallback_reason: { kind: 'string', maxLength: SHORT, nullable: true, description: 'Why the local judge answered for the model' },
  sub_agent_count: { kind: 'int' },
  merged_evidence_count: { kind: 'int' },
  // retrieval config
  retrieval_mode: { kind: 'string', maxLength: SHORT },
  pipeline_id: { kind: 'string', maxLength: SHORT },
  recall_k: { kind: 'int' },
  recall_k_source: { kind: 'enum', values: RECALL_K_SOURCES, enumName: 'RecallKSource' },
  recall_k_config_error: { kind: 'string', maxLength: MEDIUM, nullable: true },
  recall_multiplier: { kind: 'number', min: 0 },
  top_k: { kind: 'int' },
  recalled_count: { kind: 'int' },
  initial_chunk_level: { kind: 'int' },
  // full-text leg
  full_text_terms: { kind: 'int', min: 0, description: 'Distinct terms in the full-text query' },
  full_text_terms_dropped: { kind: 'int', min: 0, description: 'Distinct terms of the query left out of the full-text query (over the cap)' },
  full_text_translated_terms: {
    kind: 'int',
    min: 0,
    description: "Terms of the full-text query in the other language (the question's words as the glossary translates them); 0: none",
  },
  full_text_error: {
    kind: 'string',
    maxLength: MEDIUM,
    nullable: true,
    description: 'Why the full-text ranking is missing (it hit the statement timeout); the dense ranking answered alone',
  },
  dense_skipped: {
    kind: 'string',
    maxLength: MEDIUM,
    nullable: true,
    description: 'Why the dense ranking is missing (the in-memory index is still loading after a start); the full-text ranking answered alone',
  },
  // child-chunk auto-merge
  auto_merge_enabled: { kind: 'bool' },
  auto_merge_applied: { kind: 'bool' },
  auto_merge_threshold: { kind: 'number', min: 0, max: 1 },
  auto_merge_replaced_count: { kind: 'int' },
  auto_merge_level: { kind: 'int', nullable: true },
  candidates_after_merge: { kind: 'int' },
  // rerank
  rerank_enabled: { kind: 'bool' },
  rerank_applied: { kind: 'bool' },
  rerank_model: { kind: 'string', maxLength: SHORT, nullable: true },
  rerank_endpoint: { kind: 'string', maxLength: MEDIUM, nullable: true },
  rerank_error: { kind: 'string', maxLength: MEDIUM, nullable: true },
  rerank_timeout_ms: { kind: 'int' },
  min_relevance: { kind: 'number', nullable: true },
  rerank_input_count: { kind: 'int' },
  rerank_output_count: { kind: 'int' },
  after_threshold_count: { kind: 'int' },
  final_empty: { kind: 'bool' },
  // evidence
  initial_chunks: chunks('The recall (after rerank when rerank ran)'),
  // grading
  grade_route: { kind: 'enum', values: GRADE_ROUTES, enumName: 'GradeRoute' },
  evidence_status: { kind: 'enum', values: EVIDENCE_STATUSES, enumName: 'EvidenceStatus' },
  evidence_relevance: { kind: 'enum', values: EVIDENCE_RELEVANCES, enumName: 'EvidenceRelevance' },
  evidence_answerability: { kind: 'enum', values: EVIDENCE_ANSWERABILITIES, enumName: 'EvidenceAnswerability' },
  evidence_ambiguity: { kind: 'enum', values: EVIDENCE_AMBIGUITIES, enumName: 'EvidenceAmbiguity', nullable: true },
  grade_confidence: { kind: 'number', min: 0, max: 1 },
  grade_reason: { kind: 'string', maxLength: MEDIUM },
  grade_judge: { kind: 'enum', values: JUDGE_SOURCES, enumName: 'JudgeSource', description: 'Who graded the evidence' },
  grade_fallback_reason: { kind: 'string', maxLength: SHORT, nullable: true, description: 'Why the local judge answered for the model' },
  // rewrite
  rewrite_mode: { kind: 'enum', values: REWRITE_MODES, enumName: 'RewriteMode', nullable: true },
  rewritten_query: { kind: 'string', maxLength: LONG, nullable: true },
  step_back_question: { kind: 'string', maxLength: LONG, nullable: true },
  hypothetical_doc: { kind: 'string', maxLength: LONG, nullable: true },
  rewrite_judge: { kind: 'enum', values: JUDGE_SOURCES, enumName: 'JudgeSource', description: 'Who chose and wrote the rewrite' },
  rewrite_fallback_reason: { kind: 'string', maxLength: SHORT, nullable: true, description: 'Why the local rewriter answered for the model' },
  rewrite_chunks: chunks('Evidence recalled with the rewritten query'),
  // final
  final_chunks: chunks('Evidence the answer was composed from'),
  // human in the loop
  missing_conditions: { kind: 'strings', maxItems: 20, maxLength: MEDIUM },
  clarification_prompt: { kind: 'string', maxLength: MEDIUM, nullable: true },
  clarification_options: { kind: 'strings', maxItems: 20, maxLength: MEDIUM, description: "What the user chooses between: the documents' titles" },
  clarification_option_sources: {
    kind: 'strings',
    maxItems: 20,
    maxLength: MEDIUM,
    description: 'Parallel to clarification_options: the file each option stands for (empty when it names no single file)',
  },
  hitl_resumed: { kind: 'bool' },
  user_supplement: { kind: 'string', maxLength: LONG, nullable: true },
  hitl_resume_strategy: { kind: 'string', maxLength: SHORT, nullable: true },
  pre_resume_snapshot: { kind: 'nested', target: () => PreResumeSnapshot, many: false, nullable: true },
  hitl_chunks: chunks('Evidence recalled after the user supplement'),
  // (+) timings
  timings: { kind: 'numberMap', maxKeys: 50, description: 'Milliseconds spent per stage' },
} as const satisfies FieldTable;

export class RagTraceFields {
  static readonly fieldTable: FieldTable = RAG_TRACE_FIELDS_TABLE;
  static readonly requiredFields = [] as const;
}
export interface RagTraceFields extends ShapeOf<typeof RAG_TRACE_FIELDS_TABLE> {}
decorateFromSpec(RagTraceFields, RAG_TRACE_FIELDS_TABLE);

/** The trace of one sub-question: the shared fields and nothing else. */
export class RagSubTrace extends RagTraceFields {}

const RAG_TRACE_TABLE = {
  ...RAG_TRACE_FIELDS_TABLE,
  sub_traces: {
    kind: 'nested',
    target: () => RagSubTrace,
    many: true,
    maxItems: MAX_SUB_QUESTIONS,
    description: 'One trace per sub-question',
  },
  protocol_version: { kind: 'int', min: 1, description: 'Trace protocol version the record was written with' },
} as const satisfies FieldTable;

export class RagTrace {
  static readonly fieldTable: FieldTable = RAG_TRACE_TABLE;
  static readonly requiredFields = [] as const;
}
export interface RagTrace extends ShapeOf<typeof RAG_TRACE_TABLE> {}
// The sub-trace inherits the decorated prototype of RagTraceFields; the main trace gets its own.
decorateFromSpec(RagTrace, RAG_TRACE_TABLE);

// ---------------------------------------------------------------- HITL
const HITL_RESUME_STATE_TABLE = {
  original_question: { kind: 'string', maxLength: LONG, required: true },
  hitl_route: { kind: 'enum', values: HITL_ROUTES, enumName: 'HitlRoute' },
  retrieval_status: { kind: 'enum', values: HITL_RETRIEVAL_STATUSES, enumName: 'HitlRetrievalStatus' },
  rewrite_count: { kind: 'int' },
  complexity: { kind: 'enum', values: COMPLEXITIES, enumName: 'Complexity' },
  complexity_reason: { kind: 'string', maxLength: MEDIUM },
  sub_questions: { kind: 'strings', maxItems: MAX_SUB_QUESTIONS, maxLength: MEDIUM },
} as const satisfies FieldTable;

/** The minimal snapshot that lets a resumed run skip re-deciding complexity. */
export class HitlResumeState {
  static readonly fieldTable: FieldTable = HITL_RESUME_STATE_TABLE;
  static readonly requiredFields = ['original_question'] as const;
}
export interface HitlResumeState extends ShapeOf<typeof HITL_RESUME_STATE_TABLE> {}
decorateFromSpec(HitlResumeState, HITL_RESUME_STATE_TABLE, HitlResumeState.requiredFields);

const PENDING_HITL_STATE_TABLE = {
  task_id: { kind: 'string', maxLength: SHORT, required: true },
  original_question: { kind: 'string', maxLength: LONG, required: true, description: 'Kept across HITL rounds' },
  clarification_prompt: { kind: 'string', maxLength: MEDIUM },
  options: { kind: 'strings', maxItems: 20, maxLength: MEDIUM, description: "What the user chooses between: the documents' titles (first heading, else file name)" },
  option_sources: {
    kind: 'strings',
    maxItems: 20,
    maxLength: MEDIUM,
    description: 'Parallel to options (same length and order): the file each option stands for (empty when it names no single file)',
  },
  hitl_type: { kind: 'enum', values: HITL_ROUTES, enumName: 'HitlRoute' },
  retrieval_status: { kind: 'enum', values: HITL_RETRIEVAL_STATUSES, enumName: 'HitlRetrievalStatus' },
  user_supplement: { kind: 'string', maxLength: LONG, nullable: true },
  created_at: { kind: 'string', maxLength: 64, description: 'ISO 8601 time the task was created' },
} as const satisfies FieldTable;

/** A task waiting for the user's supplement. */
export class PendingHitlState {
  static readonly fieldTable: FieldTable = PENDING_HITL_STATE_TABLE;
  static readonly requiredFields = ['task_id', 'original_question'] as const;
}
export interface PendingHitlState extends ShapeOf<typeof PENDING_HITL_STATE_TABLE> {}
decorateFromSpec(PendingHitlState, PENDING_HITL_STATE_TABLE, PendingHitlState.requiredFields);
