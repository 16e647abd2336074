import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { MulterModule } from '@nestjs/platform-express';
import { ReadinessModule } from '../common/readiness.js';
import { ModelsModule } from '../models/models.module.js';
import type { AppConfig } from '../config/app-config.js';
import { APP_CONFIG } from '../config/config.module.js';
import { DenseRecall } from './index/dense/dense-recall.service.js';
import { DocumentsService } from './ingest/documents.service.js';
import { EvidenceJudge } from './answering/evidence-judge.service.js';
import { createEmbeddingProvider } from './index/embedding-registry.js';
import { EmbeddingProvider } from './index/embeddings.js';
import { HybridRecall } from './retrieval/hybrid-recall.service.js';
import { IndexIdentity } from './index/index-identity.js';
import { IngestJobs } from './ingest/jobs/ingest-jobs.service.js';
import { KnowledgeFlow } from './answering/knowledge-flow.service.js';
import { DocumentTitles } from './answering/document-titles.service.js';
import { ComplexityJudge } from './answering/judges/complexity-judge.service.js';
import { RewriteJudge } from './answering/judges/rewrite-judge.service.js';
import { SubQuestionFanOut } from './answering/sub-question-fanout.service.js';
import { KnowledgeSeeder } from './knowledge-seeder.service.js';
import { KnowledgeController } from './knowledge.controller.js';
import { ChunkSources } from './chunks/chunk-sources.service.js';
import { ChunksController } from './chunks/chunks.controller.js';
import { CollectionAccess } from './collections/collection-access.service.js';
import { CollectionDocumentsController } from './collections/collection-documents.controller.js';
import { CollectionsController } from './collections/collections.controller.js';
import { CollectionsService } from './collections/collections.service.js';
import { DocumentUploads } from './ingest/document-uploads.js';
import { RagPipeline, RERANK_PROVIDER } from './retrieval/rag-pipeline.service.js';
import { createRerankProvider } from './retrieval/rerank-registry.js';
import { RetrievalService } from './retrieval/retrieval.service.js';

@Module({
  imports: [
    ModelsModule,
    DiscoveryModule,
    ReadinessModule,
    // Uploads over KNOWLEDGE_MAX_UPLOAD_BYTES are cut off while streaming and answered with 413.
    // File names are read as UTF-8 (what clients send; `filename*` says its own charset); bytes that are not
    // UTF-8 become U+FFFD, which the controller refuses (see uploadedDocumentName).
    MulterModule.registerAsync({
      inject: [APP_CONFIG],
      // preservePath: the name arrives whole (busboy would otherwise cut it at a `/` or `\`), and a name with a path is refused.
      useFactory: (config: AppConfig) => ({
        limits: { fileSize: config.knowledge.maxUploadBytes, files: 1 },
        defParamCharset: 'utf8',
        preservePath: true,
      }),
    }),
  ],
  controllers: [KnowledgeController, CollectionsController, CollectionDocumentsController, ChunksController],
  providers: [
    { provide: EmbeddingProvider, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createEmbeddingProvider(config) },
    { provide: RERANK_PROVIDER, inject: [APP_CONFIG], useFactory: (config: AppConfig) => createRerankProvider(config) },
    IndexIdentity,
    DenseRecall,
    HybridRecall,
    { provide: RetrievalService, useClass: RagPipeline },
    DocumentsService,
    IngestJobs,
    DocumentUploads,
    CollectionAccess,
    CollectionsService,
    ChunkSources,
    KnowledgeSeeder,
    KnowledgeFlow,
    DocumentTitles,
    SubQuestionFanOut,
    EvidenceJudge,
    RewriteJudge,
    ComplexityJudge,
  ],
  exports: [RetrievalService, DocumentsService, IngestJobs, CollectionAccess, CollectionsService, ChunkSources, DocumentTitles, KnowledgeFlow, SubQuestionFanOut, ComplexityJudge],
})
export class KnowledgeModule {}
