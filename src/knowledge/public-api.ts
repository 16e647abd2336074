/**
 * The knowledge module's door: what other modules use of it. Its internals
 * (index/, retrieval/, ingest/, answering/) are imported by its own files and
 * its tests only.
 */
export { KnowledgeModule } from './knowledge.module.js';
export { boundQuery, MAX_QUERY_LENGTH } from './answering/bounded-query.js';
export { chosenOption, clarificationPrompt, setAsideSources } from './answering/clarification.js';
export { ComplexityJudge } from './answering/judges/complexity-judge.service.js';
export { KnowledgeFlow, type KnowledgeFlowResult } from './answering/knowledge-flow.service.js';
export { SubQuestionFanOut } from './answering/sub-question-fanout.service.js';
export type { StepReporter } from './retrieval/retrieval.service.js';
export { CollectionAccess, CollectionNotFoundError } from './collections/collection-access.service.js';
export { CollectionsService, type CollectionPage, type CollectionView } from './collections/collections.service.js';
export { COLLECTION_PAGE_DEFAULT, COLLECTION_PAGE_MAX } from './collections/collections.dto.js';
export { ChunkSources } from './chunks/chunk-sources.service.js';
export type { ChunkSourceResponse } from './chunks/chunks.dto.js';
export { DocumentTitles } from './answering/document-titles.service.js';
export { RetrievalService, type RetrievalHit } from './retrieval/retrieval.service.js';
export { SEARCH_QUERY_MAX_LENGTH, SEARCH_TOP_K_MAX } from './knowledge.dto.js';
export type { RetrievalScope } from './collections/retrieval-scope.js';
export { COLLECTION_ROLES, DEFAULT_COLLECTION_ID, roleAllows, type CollectionRole } from './collections/collection.js';
// Extension points (docs/extending.md): a retrieval stage of a deployment's own.
export { RetrievalStagePlugin, type RetrievalStage, type StageContext, type StageResult, type StageState } from './retrieval/stages/retrieval-stage.js';
export type { RecallCandidate } from './retrieval/hybrid-recall.service.js';
