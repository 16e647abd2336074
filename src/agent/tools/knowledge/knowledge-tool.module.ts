import { Module } from '@nestjs/common';
import { KnowledgeModule } from '../../../knowledge/public-api.js';
import { KnowledgeSearchTool } from './knowledge-search.tool.js';

@Module({ imports: [KnowledgeModule], providers: [KnowledgeSearchTool] })
export class KnowledgeToolModule {}
