import { Module } from '@nestjs/common';
import { KeywordRetrievalService } from './keyword-retrieval.service.js';
import { RetrievalService } from './retrieval.service.js';

@Module({
  providers: [{ provide: RetrievalService, useClass: KeywordRetrievalService }],
  exports: [RetrievalService],
})
export class KnowledgeModule {}
